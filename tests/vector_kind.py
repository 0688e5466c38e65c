"""A tiny data kind that lives only here: rows of d numbers, released as their DP mean.

It shows that a kind plugs into dpgan through its registration alone (dpgan.kinds): the facade,
its model file, its models (`dpgan models`), the command line's fit, sample and evaluate, inspect's
line and the report's words are all named by `VECTOR` below; nothing in src/ names it.

The release: each row is clipped to L2 norm `row_norm` (one row moves the sum by at most that);
the row count and the clipped sum are two Gaussian releases at one σ calibrated to (ε, δ) on the
ledger (sensitivity 1 for the count, `row_norm` for the sum, so the sum's noise is σ·row_norm).
A row that is not finite becomes the zero vector (it still counts): no row decides whether the fit
runs. Sampling draws around the released mean: post-processing, free.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from dpgan.api import Synthesizer, check_sample_count
from dpgan.errors import InputError, ModelFileError
from dpgan.kinds import Kind
from dpgan.model_catalog import ModelEntry, model_entry, refuse_unread_settings
from dpgan.privacy.accounting import PrivacyLedger
from dpgan.privacy.mechanisms import noisy_count, noisy_counts
from dpgan.privacy.releases import charge_gaussian
from dpgan.serialization import read_model_dir, write_model_dir
from dpgan.setting import setting
from dpgan.training.context import FitContext

NAME = "vector"
SPREAD = 0.1  # the public spread of samples around the released mean


@dataclass(frozen=True)
class VectorSettings:
    """The kind's one setting (a `setting` field: the command line offers it as --row-norm)."""

    row_norm: float = setting(1.0, "each row's L2 norm is clipped to this (the sum's sensitivity)")


# the kind's one model (`dpgan models` lists it through the registration): DP statistics reading row_norm
VECTOR_MODELS = (
    ModelEntry("mean", "statistics", "each row clipped to row_norm, the DP mean of rows", ("row_norm",), default=True),
)


class VectorSynthesizer(Synthesizer):
    """The DP mean of rows of numbers, as a facade: fit, sample, save, load, privacy_report."""

    def __init__(self, *, epsilon: float, delta: float = 1e-5, **settings: Any) -> None:
        budget = {
            k: settings.pop(k) for k in ("accountant", "seed", "noise_multiplier", "device", "threads") if k in settings
        }
        model_entry(VECTOR_MODELS, settings.pop("model", None), NAME)  # its one model, or one line
        refuse_unread_settings(VECTOR_MODELS[0], settings, VECTOR_MODELS)  # a setting it does not read: one line
        super().__init__(epsilon=epsilon, delta=delta, **budget)
        self.settings = VectorSettings(**settings)
        self.mean: np.ndarray | None = None

    def fit(self, data: Any) -> VectorSynthesizer:
        rows = np.asarray(data, dtype=np.float64)
        if rows.ndim != 2:
            raise InputError("vector data is a 2-D array: one row per unit")
        rows = np.where(np.isfinite(rows).all(axis=1, keepdims=True), rows, 0.0)
        norms = np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)
        clipped = rows * np.minimum(1.0, self.settings.row_norm / norms)
        ctx = FitContext.open(self.budget)
        sigma = ctx.target(1.0).sigma(1.0, 2, ctx.ledger.committed())
        charge_gaussian(ctx.ledger, "vector count and sum", sigma, count=2)
        count = max(noisy_count(len(rows), sigma, ctx.rng), 1.0)
        total = noisy_counts(clipped.sum(axis=0) / self.settings.row_norm, sigma, ctx.rng) * self.settings.row_norm
        self.mean = total / count
        self.ledger = ctx.ledger
        self.generator = torch.nn.Identity()  # fitted (the base class's mark)
        self.training = {"rows": count, "noise_multiplier": sigma, "seeded": self.seed is not None}
        return self

    def sample(self, n: int, seed: int | None = None) -> np.ndarray:
        self._require_fitted()
        n = check_sample_count(n, 10**7)
        assert self.mean is not None
        return np.random.default_rng(seed).normal(self.mean, SPREAD, size=(n, len(self.mean)))

    def _report_details(self) -> dict[str, Any]:
        return {
            "kind": NAME,
            "unit_of_privacy": VECTOR.unit_of_privacy,
            "width": 0 if self.mean is None else len(self.mean),
        }

    def save(self, path: str | Path, *, overwrite: bool = False) -> Path:
        self._require_fitted()
        metadata = {
            "kind": NAME, "epsilon": self.epsilon, "delta": self.delta, "accountant": self.accountant,
            "ledger": self.ledger.to_dict(), "training": self.training, "row_norm": self.settings.row_norm,
        }  # fmt: skip
        return write_model_dir(path, {"mean": torch.as_tensor(self.mean)}, metadata, overwrite=overwrite)

    @classmethod
    def load(cls, path: str | Path) -> VectorSynthesizer:
        tensors, meta = read_model_dir(path)
        if meta.get("kind") != NAME:
            raise ModelFileError(f"{path} is not a {NAME} model")
        synth = cls(epsilon=meta["epsilon"], delta=meta["delta"], accountant=meta["accountant"])
        synth.settings = VectorSettings(row_norm=meta["row_norm"])
        synth.ledger = PrivacyLedger.from_dict(meta["ledger"])
        synth.training = meta["training"]
        synth.mean = tensors["mean"].numpy()
        synth.generator = torch.nn.Identity()
        return synth


# ---------------------------------------------------------------- the command line's functions


def fit_command(args: argparse.Namespace, settings: dict[str, Any]) -> int:
    """`dpgan fit DATA.npy --kind vector`: `settings` are the flags of VectorSettings given."""
    chosen = {} if args.model is None else {"model": args.model}  # checked against VECTOR_MODELS by `dpgan fit`
    synth = VectorSynthesizer(epsilon=args.epsilon, delta=args.delta, accountant=args.accountant, seed=args.seed,
                              **chosen, **settings)  # fmt: skip
    synth.fit(np.load(args.data))
    synth.save(args.out, overwrite=args.overwrite)
    print(f"saved a {NAME} model to {args.out}: ε={synth.privacy_report()['epsilon']:.4f}")
    return 0


def sample_command(args: argparse.Namespace) -> int:
    """`dpgan sample MODEL -n N --out OUT.npy` on a vector model."""
    from dpgan.synthesizers import load_model

    np.save(args.out, load_model(args.model).sample(args.n, seed=args.seed))
    print(f"wrote {args.n} vectors to {args.out}")
    return 0


def evaluate_command(args: argparse.Namespace) -> int:
    """`dpgan evaluate --kind vector`: the gap between the real and the synthetic means, and the
    model's privacy section worded by the kind's registration (dpgan.evaluation.report_core)."""
    from dpgan.evaluation.report_core import privacy_section
    from dpgan.synthesizers import load_model

    real, synthetic = np.load(args.real), np.load(args.synthetic)
    privacy = load_model(args.model).privacy_report() if args.model else None
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    gap = float(np.linalg.norm(real.mean(axis=0) - synthetic.mean(axis=0)))
    (out / "metrics.json").write_text(json.dumps({"mean_gap": gap, "privacy": privacy}, default=str))
    (out / "report.html").write_text(privacy_section(privacy, NAME))
    print(f"mean gap {gap:.4f}")
    return 0


VECTOR = Kind(
    name=NAME,
    order=90,
    facade="vector_kind:VectorSynthesizer",
    description="rows of numbers (an .npy)",
    noun="vectors",
    units="vectors",
    unit_of_privacy="one vector (add or remove one row)",
    section=("vectors", "vectors (--kind vector)", "an .npy of rows"),
    fit="vector_kind:fit_command",
    sample="vector_kind:sample_command",
    evaluate="vector_kind:evaluate_command",
    settings=("vector_kind:VectorSettings",),
    models="vector_kind:VECTOR_MODELS",
    inspect_line="width: {width}; unit of privacy: {unit_of_privacy}",
)
