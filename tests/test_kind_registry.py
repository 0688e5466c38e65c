"""The kind registry (dpgan.kinds) behind the command line, load_model, inspect, evaluate and the
report: a kind registered from outside dpgan (tests/vector_kind.py, a DP mean of rows) gets fit,
sample, save/load, the CLI and evaluate through its registration alone; the built-in kinds are found
on disk without PyTorch; and no module outside a kind's folder branches on a kind's name."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import dpgan
import vector_kind
from dpgan import kinds
from dpgan.cli import main
from dpgan.errors import InputError, ModelFileError
from dpgan.inspection import inspect_model
from dpgan.synthesizers import load_model

SRC = Path(dpgan.__file__).parent


@pytest.fixture
def vector():
    kinds.register(vector_kind.VECTOR)
    yield vector_kind.VECTOR
    kinds.unregister(vector_kind.NAME)


def _rows(n: int = 400, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal([0.3, -0.2, 0.1], 0.05, size=(n, 3))


def test_the_built_in_kinds_register_themselves_in_order_without_torch_or_pandas():
    probe = (
        "import sys; from dpgan import kinds; "
        "print(','.join(kinds.names())); "
        "assert 'torch' not in sys.modules and 'pandas' not in sys.modules, sorted(sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "table,sequence,image,entity"
    assert kinds.default_kind().name == "table"


@pytest.mark.parametrize("name", ["table", "sequence", "image"])
def test_every_name_a_registration_gives_resolves(name):
    """A registration names its code by import path: each must load (a moved module fails here)."""
    kind = kinds.kind(name)
    for attribute in ("facade", "fit", "sample", "evaluate", "add_flags", "audit"):
        if getattr(kind, attribute) is not None:
            assert callable(kind.load(attribute)), attribute
    for path in kind.settings:
        assert isinstance(kinds.load(path), type)


def test_a_second_registration_of_a_name_is_refused():
    with pytest.raises(InputError, match="registered already"):
        kinds.register(vector_kind.VECTOR.__class__(**{**vector_kind.VECTOR.__dict__, "name": "table"}))


def test_the_test_kind_fits_samples_saves_and_loads_through_load_model(vector, tmp_path):
    synth = vector_kind.VectorSynthesizer(epsilon=2.0, seed=0).fit(_rows())
    assert synth.privacy_report()["epsilon"] <= 2.0 + 1e-9
    synth.save(tmp_path / "m")
    loaded = load_model(tmp_path / "m")  # model.json's "kind" → the registration → the facade's load
    assert isinstance(loaded, vector_kind.VectorSynthesizer)
    assert np.array_equal(loaded.sample(5, seed=1), synth.sample(5, seed=1))
    assert loaded.privacy_report()["events"] == synth.privacy_report()["events"]


def test_the_test_kind_through_the_command_line(vector, tmp_path, capsys):
    np.save(tmp_path / "d.npy", _rows())
    model, out = tmp_path / "m", tmp_path / "s.npy"
    fit = ["fit", str(tmp_path / "d.npy"), "--kind", "vector", "--epsilon", "2", "--seed", "0", "--out", str(model)]
    assert main([*fit, "--row-norm", "2"]) == 0  # its settings' flag, generated from VectorSettings
    assert json.loads((model / "model.json").read_text())["row_norm"] == 2.0
    assert main(["sample", str(model), "-n", "50", "--seed", "3", "--out", str(out)]) == 0
    assert np.load(out).shape == (50, 3)
    capsys.readouterr()
    assert main(["inspect", str(model)]) == 0
    assert "width: 3; unit of privacy: one vector (add or remove one row)" in capsys.readouterr().out
    assert inspect_model(model)["kind"] == "vector"
    report = tmp_path / "eval"
    evaluate = ["evaluate", "--kind", "vector", "--real", str(tmp_path / "d.npy"), "--synthetic", str(out)]
    assert main([*evaluate, "--test", str(out), "--model", str(model), "--out", str(report)]) == 0
    metrics = json.loads((report / "metrics.json").read_text())
    assert metrics["mean_gap"] < 1.0 and metrics["privacy"]["kind"] == "vector"
    assert "one vector" in (report / "report.html").read_text()


def test_the_cli_refuses_another_kind_s_flags_for_the_test_kind_and_its_flag_for_others(vector, tmp_path, capsys):
    base = ["fit", str(tmp_path / "d.npy"), "--epsilon", "1", "--out", str(tmp_path / "m")]
    assert main([*base, "--kind", "vector", "--schema", "s.json"]) == 2
    said = "--schema applies to --kind table or --kind sequence or --kind entity, not to --kind vector"
    assert said in capsys.readouterr().err
    assert main([*base, "--kind", "vector", "--pair-anchor"]) == 2
    assert "--pair-anchor apply to --kind table, not to --kind vector" in capsys.readouterr().err
    assert main([*base, "--row-norm", "2"]) == 2
    assert "--row-norm apply to --kind vector, not to --kind table" in capsys.readouterr().err
    assert not (tmp_path / "m").exists()


def test_the_help_has_the_test_kind_s_section_and_choice(vector, monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "100")
    assert main(["fit", "--help"]) == 0
    text = capsys.readouterr().out
    assert "vectors (--kind vector):" in text and "--row-norm" in text
    assert "{table,sequence,image,entity,vector}" in text
    assert "or rows of numbers (an .npy)" in text


def test_a_model_of_an_unknown_kind_is_one_clear_refusal(tmp_path):
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "model.json").write_text(json.dumps({"kind": "hologram"}))
    with pytest.raises(ModelFileError, match="unknown kind 'hologram'"):
        load_model(tmp_path / "m")


# ----------------------------------------------- no branch on a kind's name outside its folder

KIND_NAMES = {"table", "sequence", "image", "entity", "table-stream"}
KIND_FOLDERS = ("tables", "sequences", "images", "entities")  # a kind's own code: its folder, its evaluation, and
# the modules its registration names for its facade and its commands (dpgan.kinds.Kind)
OWN_FIELDS = ("facade", "fit", "sample", "evaluate", "add_flags", "commands")


def kind_own_modules() -> set[str]:
    """The modules (paths under src/dpgan) the built-in kinds' registrations name as their own."""
    own = set()
    for kind in kinds.kinds():
        for field in OWN_FIELDS:
            value = getattr(kind, field)
            for path in value if isinstance(value, tuple) else (value,):
                if path is not None and path.startswith("dpgan."):
                    own.add(path.partition(":")[0].removeprefix("dpgan.").replace(".", "/") + ".py")
    return own


KIND_OWN = kind_own_modules()


def dispatch_sites(path: Path) -> list[int]:
    """Lines comparing something with a kind's name (==, !=, in) or keying a dict by one."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(isinstance(o, ast.Constant) and o.value in KIND_NAMES for o in operands):
                lines.append(node.lineno)
        elif isinstance(node, ast.Dict):
            if sum(isinstance(k, ast.Constant) and k.value in KIND_NAMES for k in node.keys) >= 2:
                lines.append(node.lineno)
        elif isinstance(node, ast.Subscript):
            if isinstance(node.slice, ast.Constant) and node.slice.value in KIND_NAMES:
                lines.append(node.lineno)
    return lines


def test_the_kinds_own_modules_are_their_facades_and_their_commands():
    assert KIND_OWN == {
        "synthesizers/tabular.py", "synthesizers/sequence.py", "synthesizers/image.py",
        "cli/tables.py", "cli/series.py", "cli/images.py", "cli/demo.py", "cli/schema.py",
        "entities/facade.py", "cli/entities.py",
    }  # fmt: skip


def kind_imports(path: Path) -> list[str]:
    """The modules of a kind's own code that `path` imports (anywhere in it): a kind's folder but its
    registration, or a module a registration names as a kind's own."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
        names += [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
        for name in names:
            parts = name.split(".")
            in_folder = parts[0] == "dpgan" and len(parts) > 1 and parts[1] in KIND_FOLDERS
            own = "/".join(parts[1:]) + ".py" in KIND_OWN
            if (in_folder and parts[-1] != "registration") or own:
                found.append(name)
    return found


def test_the_command_line_reaches_a_kind_through_its_registration():
    """cli/ outside a kind's own commands imports no kind's code: `dpgan demo` and `dpgan schema`
    (tables only) come in through the table kind's registration (`Kind.commands`)."""
    found = {}
    for path in sorted((SRC / "cli").glob("*.py")):
        relative = path.relative_to(SRC).as_posix()
        if relative not in KIND_OWN and kind_imports(path):
            found[relative] = kind_imports(path)
    assert found == {}


def test_no_module_outside_a_kind_s_folder_branches_on_a_kind_s_name():
    """26 such sites before the registry (cli/, load_model, the audit, the report), none after."""
    found = {}
    for path in sorted(SRC.rglob("*.py")):
        relative = path.relative_to(SRC).as_posix()
        if relative.split("/")[0] in KIND_FOLDERS or relative in KIND_OWN:
            continue
        if relative.startswith("evaluation/") and relative.split("/")[1] in KIND_FOLDERS:
            continue  # a kind's own evaluation
        lines = dispatch_sites(path)
        if lines:
            found[relative] = lines
    assert found == {}
