"""Every module of dpgan imports when it is the first of the package to load (issue 50).

The rest of the suite imports modules in whatever order its files happen to, so a module that
only loads after another (a package `__init__` that imports back into a half-loaded module) passes
there and fails for a user who imports it first. tests/fresh_imports.py checks each module in a
forked child of one interpreter that holds the third-party packages and nothing of dpgan.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import dpgan

PACKAGE_ROOT = Path(dpgan.__file__).parent
CHECKER = Path(__file__).with_name("fresh_imports.py")


def fresh_import_failures(root: Path) -> dict[str, str]:
    """{module: the error's last line} for each module under `root` that fails to import first."""
    env = os.environ | {
        "PYTHONPATH": os.pathsep.join([str(root.parent), os.environ.get("PYTHONPATH", "")]),
        "MPLBACKEND": "Agg",
    }
    done = subprocess.run(
        [sys.executable, str(CHECKER), str(root)], capture_output=True, text=True, env=env, timeout=600
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="the check forks one child per module")


@needs_fork
def test_every_module_imports_first_in_a_fresh_interpreter():
    assert fresh_import_failures(PACKAGE_ROOT) == {}


@needs_fork
def test_the_check_sees_a_package_init_that_imports_back(tmp_path):
    """The check can fail: a package whose `__init__` re-exports a module that imports the
    package's core back (the shape of issue 50's attacks cycle) fails when that module loads first,
    and only then."""
    package = tmp_path / "probe"
    (package / "core").mkdir(parents=True)
    (package / "kind").mkdir()
    (package / "__init__.py").write_text("")
    (package / "core" / "__init__.py").write_text("from probe.core.config import C\nfrom probe.kind.attack import f\n")
    (package / "core" / "config.py").write_text("C = 1\n")
    (package / "kind" / "__init__.py").write_text("")
    (package / "kind" / "attack.py").write_text("from probe.core.config import C\n\ndef f():\n    return C\n")
    failures = fresh_import_failures(package)
    assert list(failures) == ["probe.kind.attack"]
    assert "partially initialized module 'probe.kind.attack'" in failures["probe.kind.attack"]
