"""Import rules of the architecture (../shared/ARCHITECTURE.md), read from the source with ast.

- statistics/ (DP statistics every kind shares) imports only privacy/, dpgan.errors and the generator's
  output layout (dpgan.models.output_spans: the tables' statistics count the encoded row's spans);
- privacy/ is data-kind agnostic: it imports nothing of dpgan but itself and dpgan.errors, so a
  new data kind (series, images) reuses the private step without touching it;
- models/ holds networks only: nothing of dpgan;
- training/ imports no data kind (the tabular schema, codec, conditions, table I/O);
- the fit pipeline (dpgan.fit) imports no data kind: kinds register themselves with it;
- no import cycle anywhere, function-level and TYPE_CHECKING imports included, and the package
  `__init__` each import runs first (importing a.b.c runs a/__init__.py and a/b/__init__.py);
- nothing outside dpgan/cli/ imports it (so evaluation and the library never depend on the command line);
- the facades (dpgan.synthesizers) sit on top: the engine and the data kinds below them
  (privacy, models, training, recipes, and the kinds: tables/, sequences/, images/) never import them.

`KNOWN_EXCEPTIONS` may list imports that break a rule during a migration; the test fails on any
new breach AND on a listed one that is gone (strike it off), so the list can only shrink. It is
empty: every rule holds.
"""

from __future__ import annotations

import ast
from pathlib import Path

import dpgan

PACKAGE_ROOT = Path(dpgan.__file__).parent
DATA_KINDS = ("dpgan.tables", "dpgan.datasets", "dpgan.sequences", "dpgan.images", "dpgan.entities")

# the layers under the facades: what dpgan.synthesizers is built from
BELOW_FACADES = (
    "dpgan.privacy",
    "dpgan.statistics",
    "dpgan.models",
    "dpgan.training",
    "dpgan.recipes",
    "dpgan.fit",
    *DATA_KINDS,
)

# the one module of models/ that statistics/ may import: the encoded row's spans, public and with no
# network (it imports nothing of dpgan); the tables' marginals and 2-way tables count those spans
OUTPUT_LAYOUT = "dpgan.models.output_spans"

# (importing module, imported module, rule): imports allowed to break a rule while the layout
# migrates (ARCHITECTURE.md's order). Empty since the condition protocol (training/conditions.py):
# add an entry only with a reason, and strike it off when it goes.
KNOWN_EXCEPTIONS: set[tuple[str, str, str]] = set()


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE_ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def dpgan_imports(path: Path) -> set[str]:
    """Every dpgan module a file imports, at any depth (function-level imports count too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.split(".")[0] == "dpgan")
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "dpgan":
                found.update(f"dpgan.{alias.name}" for alias in node.names)
            elif node.module.split(".")[0] == "dpgan":
                found.add(node.module)
    return found


def within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def breaches() -> set[tuple[str, str, str]]:
    found = set()
    for path in sorted(PACKAGE_ROOT.rglob("*.py")):
        importer = module_name(path)
        for imported in dpgan_imports(path):
            if within(importer, "dpgan.privacy") and not (
                within(imported, "dpgan.privacy") or imported == "dpgan.errors"
            ):
                found.add((importer, imported, "privacy"))
            if within(importer, "dpgan.statistics") and not (
                within(imported, "dpgan.statistics")
                or within(imported, "dpgan.privacy")
                or imported in ("dpgan.errors", OUTPUT_LAYOUT)
            ):
                found.add((importer, imported, "statistics"))
            if within(importer, "dpgan.models") and not within(imported, "dpgan.models"):
                found.add((importer, imported, "models"))
            if within(importer, "dpgan.training") and any(within(imported, kind) for kind in DATA_KINDS):
                found.add((importer, imported, "training"))
            if importer == "dpgan.fit" and any(within(imported, kind) for kind in DATA_KINDS):
                found.add((importer, imported, "pipeline"))
            if within(imported, "dpgan.cli") and not (within(importer, "dpgan.cli") or importer == "dpgan.__main__"):
                found.add((importer, imported, "cli"))
            if within(imported, "dpgan.synthesizers") and any(within(importer, low) for low in BELOW_FACADES):
                found.add((importer, imported, "facades"))
    return found


def test_the_parser_sees_imports_at_any_depth(tmp_path):
    """The rule checker itself: a function-level `from dpgan.cli import x` is an import."""
    source = tmp_path / "probe.py"
    source.write_text(
        "import os\n\ndef f():\n    from dpgan.cli import main\n    import dpgan.tables.schema.table as s\n"
    )
    assert dpgan_imports(source) == {"dpgan.cli", "dpgan.tables.schema.table"}


def test_no_new_breach_of_the_import_rules():
    new = breaches() - KNOWN_EXCEPTIONS
    assert not new, f"imports that break ARCHITECTURE.md's rules: {sorted(new)}"


def test_the_list_of_known_breaches_only_shrinks():
    gone = KNOWN_EXCEPTIONS - breaches()
    assert not gone, f"these imports are gone: remove them from KNOWN_EXCEPTIONS: {sorted(gone)}"


def _calls_outside_privacy(names: set[str]) -> list[str]:
    """Every call of a function or method named in `names` in src/dpgan outside privacy/."""
    found = []
    for path in sorted(PACKAGE_ROOT.rglob("*.py")):
        if within(module_name(path), "dpgan.privacy"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
                if name in names:
                    found.append(f"{path.relative_to(PACKAGE_ROOT)}:{node.lineno} {name}")
    return found


def test_ledger_events_are_built_and_dp_noise_is_drawn_only_in_privacy():
    """Every release's event comes from dpgan.privacy (releases.py, the private step), and every DP
    noise draw from dpgan.privacy.noise: what is charged and what is drawn are decided in one place.
    (A generator's latent draws, torch.randn of G's inputs, are not DP noise: they read no data.)"""
    assert _calls_outside_privacy({"LedgerEntry", "EventEntry"}) == []
    assert _calls_outside_privacy({"normal", "normal_", "laplace", "gumbel"}) == []


def _package_copy(tmp_path: Path, monkeypatch) -> Path:  # type: ignore[no-untyped-def]
    """A copy of the package's sources under tmp_path, made the scanned root: a planted module lives
    there, never in src/dpgan, where another test worker's scan would see it."""
    import shutil

    import test_import_rules as rules

    root = tmp_path / "dpgan"
    shutil.copytree(
        PACKAGE_ROOT,
        root,
        ignore=lambda d, names: [n for n in names if not (n.endswith(".py") or (Path(d) / n).is_dir())],
    )
    monkeypatch.setattr(rules, "PACKAGE_ROOT", root)
    return root


def test_statistics_may_import_the_output_layout_and_no_other_model(tmp_path, monkeypatch):
    """The statistics rule's one exception is narrow: a planted statistics module that imports the
    output layout passes, the same module importing a network (models/tabular.py) is a breach."""
    import test_import_rules as rules

    planted = _package_copy(tmp_path, monkeypatch) / "statistics" / "_planted_layout.py"
    planted.write_text(
        "from dpgan.models.output_spans import OutputSpan\nfrom dpgan.models.tabular import TabularGenerator\n"
    )
    found = {b for b in rules.breaches() if b[0] == "dpgan.statistics._planted_layout"}
    assert found == {("dpgan.statistics._planted_layout", "dpgan.models.tabular", "statistics")}


def test_the_release_check_sees_a_planted_breach(tmp_path, monkeypatch):
    """The check above can fail: a planted module outside privacy/ that builds an entry is found."""
    import test_import_rules as rules

    planted = _package_copy(tmp_path, monkeypatch) / "_planted_breach.py"
    planted.write_text("def f(rng):\n    return LedgerEntry('x', 1.0), rng.normal(0, 1)\n")
    found = rules._calls_outside_privacy({"LedgerEntry", "normal"})
    assert found == ["_planted_breach.py:2 LedgerEntry", "_planted_breach.py:2 normal"]


def packages_above(name: str) -> list[str]:
    """The packages Python imports before `name`, outermost first: `a.b.c` runs a/__init__.py and
    a/b/__init__.py before c."""
    parts = name.split(".")
    return [".".join(parts[:end]) for end in range(1, len(parts))]


def import_graph(root: Path = PACKAGE_ROOT) -> dict[str, set[str]]:
    """module → the dpgan modules it imports, at any depth (function-level and TYPE_CHECKING
    imports count: a cycle hidden behind either is still a cycle of the design). `from pkg import
    name` is an edge to pkg.name when that is a module, else to the package. Importing `a.b.c`
    runs the package `__init__` of a and a.b first, so it is an edge to each of them too, except
    the packages above the importer itself (Python loaded those before the importer ran)."""

    def name_of(path: Path) -> str:
        parts = path.relative_to(root.parent).with_suffix("").parts
        return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)

    modules = {name_of(path): path for path in root.rglob("*.py")}

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        edges: set[str | None] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "dpgan":
                edges.update(f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules
                             else resolve(node.module) for a in node.names)  # fmt: skip
            elif isinstance(node, ast.Import):
                edges.update(resolve(a.name) for a in node.names if a.name.split(".")[0] == "dpgan")
        loaded_before = {name, *packages_above(name)}
        targets = {edge for edge in edges if edge is not None}
        targets |= {package for edge in targets for package in packages_above(edge) if package in modules}
        graph[name] = targets - loaded_before
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            advanced = False
            for nxt in successors:
                if nxt not in graph:
                    continue
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))
    return cycles


def test_no_import_cycle_in_the_package():
    """No two modules import each other, directly or around a loop, at any depth."""
    assert import_cycles(import_graph()) == []


def test_the_cycle_check_sees_a_cycle_hidden_in_a_function(tmp_path):
    package = tmp_path / "dpgan"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from dpgan.b import g\n")
    (package / "b.py").write_text("def g():\n    from dpgan import a\n")
    (package / "c.py").write_text("from dpgan import a\n")
    assert import_cycles(import_graph(package)) == [["dpgan.a", "dpgan.b"]]


def test_the_cycle_check_sees_a_package_init_that_imports_back(tmp_path):
    """Issue 50's hidden cycle: core/__init__.py re-exports kind.attack, which imports core.config;
    importing core.config runs core/__init__.py first, so attack → core → attack is a cycle (and
    attack fails to import first). A module importing its own package's sibling is not one."""
    package = tmp_path / "dpgan"
    (package / "core").mkdir(parents=True)
    (package / "kind").mkdir()
    (package / "__init__.py").write_text("")
    (package / "core" / "__init__.py").write_text("from dpgan.core.config import C\nfrom dpgan.kind.attack import f\n")
    (package / "core" / "config.py").write_text("C = 1\n")
    (package / "core" / "scoring.py").write_text("from dpgan.core.config import C\n")
    (package / "kind" / "__init__.py").write_text("")
    (package / "kind" / "attack.py").write_text("from dpgan.core.config import C\n\ndef f():\n    return C\n")
    assert import_cycles(import_graph(package)) == [["dpgan.core", "dpgan.kind.attack"]]


def test_the_statistics_rule_sees_a_planted_breach(tmp_path, monkeypatch):
    """A module under statistics/ that imports a data kind (or the training loops) is a breach;
    one that imports privacy/ is not."""
    import test_import_rules as rules

    package = tmp_path / "dpgan" / "statistics"
    package.mkdir(parents=True)
    (tmp_path / "dpgan" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "fine.py").write_text("from dpgan.privacy.noise import gaussian_array\n")
    (package / "bad.py").write_text("def f():\n    from dpgan.tables.schema.table import Schema\n")
    monkeypatch.setattr(rules, "PACKAGE_ROOT", tmp_path / "dpgan")
    assert rules.breaches() == {("dpgan.statistics.bad", "dpgan.tables.schema.table", "statistics")}
