"""Import every module of a package first, each in a fresh interpreter state (what tests/test_fresh_imports.py runs).

A module that fails only when it is the first of its package to load hides behind whatever the
test suite, the CLI or a user happened to import before it (a package `__init__` that imports back,
a cycle the order of loading masks). One interpreter per module would cost ~212 start-ups of
PyTorch, pandas and scikit-learn; instead this process imports the third-party packages the source
names (never a module of the checked package), then forks one child per module: each child starts
from that state, with nothing of the package loaded, imports its one module and exits 0, or 1 with
the error's last line on a pipe. The parent prints {module: error} for the failures as JSON.

    python tests/fresh_imports.py PACKAGE_DIR
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import sys
import traceback
from pathlib import Path


def module_names(root: Path) -> list[str]:
    """Every module and package under `root` (a package directory), by its dotted name."""
    names = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def third_party_imports(root: Path) -> list[str]:
    """The modules outside the standard library and outside the package that its source imports
    (at any depth; `from a import b` names both a and, when it is one, the submodule a.b)."""
    own = root.name
    found: set[str] = set()
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module)
                found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return sorted(
        name for name in found if name.split(".")[0] not in sys.stdlib_module_names and name.split(".")[0] != own
    )


def preload(names: list[str]) -> None:
    """Import each third-party module that is installed (optional ones may not be; a name that is
    a class rather than a submodule fails to import and is skipped)."""
    for name in names:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - absent optional dependency, or not a module
            pass


def import_in_child(name: str) -> str | None:
    """Fork; the child imports `name` and reports. The error's last line, or None when it loaded."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: import the one module, say why it failed, never return
        os.close(read_end)
        os.dup2(2, 1)  # whatever the module prints stays off the parent's JSON
        status = 0
        try:
            importlib.import_module(name)
        except BaseException:  # noqa: BLE001 - any failure to load is the finding
            message = traceback.format_exc().strip().splitlines()[-1]
            os.write(write_end, message.encode("utf-8", "replace"))
            status = 1
        os._exit(status)
    os.close(write_end)
    chunks = []
    while chunk := os.read(read_end, 65536):
        chunks.append(chunk)
    os.close(read_end)
    _, wait_status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(wait_status)
    if code == 0:
        return None
    return b"".join(chunks).decode("utf-8", "replace") or f"the child exited with {code}"


def main(root: Path) -> dict[str, str]:
    preload(third_party_imports(root))
    package = root.name
    assert not any(name == package or name.startswith(package + ".") for name in sys.modules), (
        "a third-party import loaded the checked package"
    )
    failures = {}
    for name in module_names(root):
        error = import_in_child(name)
        if error is not None:
            failures[name] = error
    return failures


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1]).resolve()), indent=1, sort_keys=True))
