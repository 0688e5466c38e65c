"""The device option (issue 17, part 3): one code path for "cpu" and "cuda", every data kind.

This machine has no GPU, so what can be checked here is checked: device="cpu" given explicitly is
the default's path, bit for bit (weights and ledger of seeded tiny fits of each kind); a GPU that is
not there, or an unknown device, is one clear InputError at construction, before any data is read,
in the library and the CLI; and the source keeps the rules that make the GPU path work
(dpgan.devices): every draw from an explicit generator names the generator's device, every
torch.Generator names its device, every tensor read back into NumPy goes through .cpu(). The cuda
run itself is bench/gpu_check.py's job, on a machine that has one.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.datasets import load_digits

import dpgan
from dpgan.cli import main
from dpgan.devices import on_device, resolve_device, seeded_generator
from dpgan.errors import InputError
from dpgan.sequences import SequenceSchema, ValueColumn
from dpgan.synthesizers import ImageSynthesizer, SequenceSynthesizer, TabularSynthesizer

NO_GPU = not torch.cuda.is_available()
needs_no_gpu = pytest.mark.skipif(not NO_GPU, reason="checks the refusal on a machine without a GPU")
SOURCE = Path(dpgan.__file__).parent
DRAWS = {"rand", "randn", "randint", "randperm", "normal", "bernoulli"}


# ------------------------------------------------------------------ resolving a device
def test_cpu_and_auto_resolve_to_the_cpu_here():
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device(None) == torch.device("cpu")
    assert resolve_device(" CPU ") == torch.device("cpu")
    assert resolve_device("auto").type == ("cpu" if NO_GPU else "cuda")


@pytest.mark.parametrize("name", ["tpu", "cuda:x", "gpu", "cuda:-1", "meta"])
def test_an_unknown_device_is_one_clear_line(name):
    with pytest.raises(InputError, match="'cpu', 'cuda', 'cuda:N' or 'auto'") as info:
        resolve_device(name)
    assert "\n" not in str(info.value)


@needs_no_gpu
@pytest.mark.parametrize("name", ["cuda", "cuda:0", "cuda:3"])
def test_a_missing_gpu_is_one_clear_line(name):
    with pytest.raises(InputError, match="no CUDA GPU is available") as info:
        resolve_device(name)
    assert "\n" not in str(info.value)


@needs_no_gpu
@pytest.mark.parametrize("cls", [TabularSynthesizer, SequenceSynthesizer, ImageSynthesizer])
def test_every_kind_refuses_a_missing_gpu_at_construction(cls):
    with pytest.raises(InputError, match="no CUDA GPU"):
        cls(epsilon=1.0, device="cuda")


@needs_no_gpu
@pytest.mark.parametrize("kind", ["table", "sequence", "image"])
def test_the_cli_refuses_a_missing_gpu_in_one_line_before_reading(kind, tmp_path, capsys):
    data = tmp_path / ("data.npz" if kind == "image" else "data.csv")
    data.write_text("a,b,c\n1,2,3\n")  # only the header is read (sequence: the columns): the device is refused first
    flags = ["--id-column", "a", "--time-column", "b", "--length", "2"] if kind == "sequence" else []
    code = main(["fit", str(data), "--kind", kind, "--epsilon", "1", "--out", str(tmp_path / "m"), *flags,
                 "--device", "cuda"])  # fmt: skip
    err = capsys.readouterr().err.strip()
    assert code != 0
    assert "no CUDA GPU" in err and "Traceback" not in err and len(err.splitlines()) == 1
    assert not (tmp_path / "m").exists()


def test_the_fit_context_sets_the_default_device_and_restores_it():
    before = torch.get_default_device()
    with on_device(torch.device("cpu")):
        assert torch.zeros(1).device == torch.device("cpu")
        assert seeded_generator(3).device == torch.device("cpu")
    assert torch.get_default_device() == before
    # a CPU generator seeded here draws what torch.Generator() always drew: seeded results unchanged
    assert torch.equal(
        torch.rand(5, generator=seeded_generator(3)), torch.rand(5, generator=torch.Generator().manual_seed(3))
    )


# ------------------------------------------------------------------ device="cpu" is the default path
def _same_fit(a, b) -> None:
    assert a.ledger.to_dict() == b.ledger.to_dict()
    sa, sb = a.generator.state_dict(), b.generator.state_dict()
    assert sa.keys() == sb.keys()
    assert all(torch.equal(sa[k], sb[k]) for k in sa)
    assert all(t.device.type == "cpu" for t in sa.values())  # the released model is on the CPU


def test_tabular_cpu_is_the_default_bit_for_bit(adult_small, adult_schema):
    data = adult_small.head(300)
    kwargs = {"epsilon": 3.0, "epochs": 1, "batch_size": 64, "accountant": "rdp", "seed": 5}
    default = TabularSynthesizer(**kwargs).fit(data, adult_schema)
    explicit = TabularSynthesizer(**kwargs, device="cpu").fit(data, adult_schema)
    _same_fit(default, explicit)
    pd.testing.assert_frame_equal(default.sample(40, seed=1), explicit.sample(40, seed=1))


def _series() -> tuple[pd.DataFrame, SequenceSchema]:
    rng = np.random.default_rng(0)
    rows = [(i, t, float(np.sin(t + i) + rng.normal(0, 0.1))) for i in range(60) for t in range(6)]
    schema = SequenceSchema(id="id", time="t", length=6, values=(ValueColumn("v", -2.0, 2.0),))
    return pd.DataFrame(rows, columns=["id", "t", "v"]), schema


def test_sequence_cpu_is_the_default_bit_for_bit():
    frame, schema = _series()
    kwargs = {"epsilon": 3.0, "seed": 2, "model": "gan", "epochs": 2, "batch_size": 16, "critic_hidden": (8,)}
    kwargs["generator_hidden"] = 4
    default = SequenceSynthesizer(**kwargs).fit(frame, schema)
    explicit = SequenceSynthesizer(**kwargs, device="cpu").fit(frame, schema)
    _same_fit(default, explicit)
    pd.testing.assert_frame_equal(default.sample(5, seed=1), explicit.sample(5, seed=1))


def test_image_cpu_is_the_default_bit_for_bit():
    data = load_digits()
    images, labels = np.round(data.images[:200] * 255 / 16).astype(np.uint8), data.target[:200]
    kwargs = {"epsilon": 3.0, "seed": 0, "classes": [str(d) for d in range(10)], "epochs": 0.5, "batch_size": 64}
    kwargs |= {"max_sample_rate": 0.1, "width": 4}
    default = ImageSynthesizer(recipe="dcgan", **kwargs).fit(images, labels)
    explicit = ImageSynthesizer(recipe="dcgan", **kwargs, device="cpu").fit(images, labels)
    _same_fit(default, explicit)
    assert np.array_equal(default.sample(8, seed=1)[0], explicit.sample(8, seed=1)[0])


# ------------------------------------------------------------------ the rules the GPU path rests on
def _engine_files() -> list[Path]:
    return [p for p in sorted(SOURCE.rglob("*.py")) if "evaluation" not in p.relative_to(SOURCE).parts]


def _breaches() -> list[str]:
    found = []
    for path in _engine_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            where = f"{path.relative_to(SOURCE)}:{node.lineno}"
            keywords = {k.arg for k in node.keywords}
            is_torch = isinstance(node.func.value, ast.Name) and node.func.value.id == "torch"
            if is_torch and node.func.attr in DRAWS and "generator" in keywords and "device" not in keywords:
                found.append(f"{where}: torch.{node.func.attr} from a generator without device=")
            if is_torch and node.func.attr == "Generator" and "device" not in keywords:
                found.append(f"{where}: torch.Generator without device=")
            if node.func.attr == "numpy" and not (
                isinstance(node.func.value, ast.Call)
                and isinstance(node.func.value.func, ast.Attribute)
                and node.func.value.func.attr == "cpu"
            ):
                found.append(f"{where}: .numpy() without .cpu()")
    return found


def test_the_source_keeps_the_device_rules():
    """A draw from a CPU generator for a GPU tensor (or the reverse) fails only on a GPU; so does
    .numpy() on a GPU tensor. Checked in the source here, where no GPU can catch them."""
    assert _breaches() == []


def test_the_rule_check_can_fail(tmp_path, monkeypatch):
    bad = tmp_path / "bad.py"
    bad.write_text("import torch\ng = torch.Generator()\nx = torch.rand(3, generator=g)\ny = x.numpy()\n")
    monkeypatch.setattr(f"{__name__}._engine_files", lambda: [bad])
    monkeypatch.setattr(f"{__name__}.SOURCE", tmp_path)
    assert len(_breaches()) == 3
