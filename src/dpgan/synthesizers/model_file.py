"""What a tabular model directory holds: model.json's entries and the safetensors weights.

Only released values are written: the DP-trained generator and label model, the public (or DP)
schema, the ledger and the training summary. The critic, the per-fit shard key and any row of
the data never are (DESIGN.md invariant 7). Reading is strict and pickle-free: every weight must
fit the network the metadata describes, or the model is refused (serialization.py checks the
content hash). The keys and their order are the saved format: models saved by earlier versions
load unchanged, so change them only with a format version.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import torch

from dpgan import __version__
from dpgan.errors import ModelFileError
from dpgan.privacy.ledger import PrivacyLedger
from dpgan.serialization import read_model_dir
from dpgan.tables.codec.conditioning import Condition
from dpgan.tables.codec.encoder import TableEncoder
from dpgan.tables.fit.plan import FittedTable
from dpgan.tables.sampling.label_model import LabelModel, split_tensors
from dpgan.tables.sampling.marginals_model import MARGINALS_MODEL, TableMarginals
from dpgan.tables.schema.table import Schema
from dpgan.tables.settings import TableSettings, loop_config, split_settings
from dpgan.training.config import TrainingConfig
from dpgan.training.fake_rows import build_generator
from dpgan.training.selection import GeneratorMixture

T = TypeVar("T")


def model_metadata(
    fitted: FittedTable,
    *,
    recipe: str,
    epsilon_target: float,
    delta: float,
    accountant: str,
    config: TrainingConfig,
    settings: TableSettings,
) -> dict[str, Any]:
    """model.json's entries for a fitted model (the ε it states is the ledger's, by `accountant`);
    the loop's and the table's settings share one flat "config" record (their names are distinct)."""
    return {
        "dpgan_version": __version__,
        "torch_version": torch.__version__,
        "recipe": recipe,
        "condition": None if fitted.condition is None else fitted.condition.to_dict(),
        "epsilon_target": epsilon_target,
        "delta": delta,
        "accountant": accountant,
        "epsilon": fitted.ledger.epsilon(delta, accountant),
        "schema": fitted.schema.to_dict(),
        "dtypes": fitted.encoder.dtypes,
        "config": {**config.to_dict(), **settings.to_dict()},
        "ledger": fitted.ledger.to_dict(),
        "training": fitted.training,
        "label_model": None if fitted.label_model is None else fitted.label_model.to_dict(),
    }


def model_tensors(fitted: FittedTable) -> dict[str, torch.Tensor]:
    """The generator's weights, and the label model's under their own prefix."""
    tensors = dict(fitted.generator.state_dict())
    if fitted.label_model is not None:
        tensors.update(fitted.label_model.tensors())
    return tensors


def fitted_from_model(meta: dict[str, Any], tensors: dict[str, torch.Tensor], config: TrainingConfig) -> FittedTable:
    """The released state from model.json's entries and the weights, strictly: a missing key or
    a weight that does not fit raises (KeyError, TypeError, ValueError or RuntimeError)."""
    condition_meta = meta.get("condition")
    condition = None if condition_meta is None else Condition.from_dict(condition_meta)
    schema = Schema.from_dict(meta["schema"])
    encoder = TableEncoder(schema, meta.get("dtypes"))
    ledger = PrivacyLedger.from_dict(meta["ledger"])
    training = dict(meta["training"])
    if meta.get("recipe") == MARGINALS_MODEL:  # the statistics model: its tables, no network
        marginals = TableMarginals.from_files(encoder, training["marginals"], tensors)
        return FittedTable(ledger, schema, encoder, marginals, condition, None, training)
    generator: torch.nn.Module = build_generator(config, encoder.spans, condition.slice if condition else None)
    members = len((training.get("selection") or {}).get("chosen_steps") or [None])
    if members > 1:  # the union of the top Q selected generators (dpgan.training.selection)
        generator = GeneratorMixture(
            [build_generator(config, encoder.spans, condition.slice if condition else None) for _ in range(members)]
        )
    generator_tensors, label_tensors = split_tensors(tensors)
    generator.load_state_dict(generator_tensors, strict=True)
    label_meta = meta.get("label_model")
    if label_meta is None and label_tensors:
        raise ValueError("label-model weights without a label-model entry")
    label_model = None if label_meta is None else LabelModel.from_saved(label_meta, label_tensors, encoder)
    generator.eval()
    return FittedTable(ledger, schema, encoder, generator, condition, label_model, training)


def load_table_synthesizer(cls: type[T], path: str | Path) -> T:
    """A TabularSynthesizer (`cls`) from its model directory, checked: one clear line when the
    metadata and the weights do not fit together (no pickle: dpgan.serialization)."""
    tensors, meta = read_model_dir(path)
    try:
        synth = cls(  # type: ignore[call-arg]
            recipe=meta.get("recipe", "dp-gan"),
            epsilon=meta["epsilon_target"],
            delta=meta["delta"],
            accountant=meta["accountant"],
        )
        synth.config = loop_config(meta["config"])  # type: ignore[attr-defined]
        synth.settings = TableSettings.from_dict(split_settings(meta["config"])[0])  # type: ignore[attr-defined]
        synth.adopt(fitted_from_model(meta, tensors, synth.config))  # type: ignore[attr-defined]
    except (KeyError, TypeError, ValueError, RuntimeError) as exc:
        raise ModelFileError(f"{path} holds an inconsistent model: {exc}") from None
    return synth
