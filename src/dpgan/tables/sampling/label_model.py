"""The label model: a DP-SGD classifier that redraws the target column of every generated row.

Why: a GAN trained through a noisy, clipped critic learns the columns and their joint shape well,
but blurs how the target depends on the other columns, which is what a model trained on the
synthetic rows needs most. On Adult, the generated feature rows are nearly as good as the real
ones once their labels come from a good classifier (bench/RESULTS.md §7). So dpgan trains a
small classifier P(target | other columns) with DP-SGD on its own share of ε (one ledger entry)
and, at sampling time, draws each generated row's target from it. Applying a released DP model
to generated rows is post-processing: the samples cost nothing further.

The classifier is released with the generator (it is DP-trained); it sees rows in the encoder's
layout, generated rows re-encoded exactly as real ones, so it is applied to what it was trained on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import torch

from dpgan.errors import InputError
from dpgan.models.output_spans import SOFTMAX
from dpgan.privacy.accounting import PrivacyLedger
from dpgan.privacy.calibration import ShareTarget
from dpgan.privacy.distributed import SINGLE_PROCESS, ProcessGroupContext
from dpgan.tables.codec.encoder import TableEncoder, sample_categories
from dpgan.tables.schema.columns import category_index
from dpgan.tables.schema.table import Schema
from dpgan.tables.settings import TableSettings
from dpgan.training.aux_classifier import AuxClassifier, drop_span, fit_private_classifier

TENSOR_PREFIX = "label_model."


def label_span(encoder: TableEncoder, column: str) -> tuple[int, int]:
    """The [start, stop) slots of `column`'s one-hot: the target must be one categorical block."""
    spans = [s for s in encoder.spans if s.column == column]
    if len(spans) != 1 or spans[0].activation != SOFTMAX:
        raise InputError(f"the label model needs a categorical or boolean target; {column!r} is not one")
    return spans[0].start, spans[0].stop


def label_target(schema: Schema) -> str | None:
    """The column the label model redraws: the schema's target when it is categorical or boolean."""
    if schema.target is None:  # Schema itself refuses a target that is not one of its columns
        return None
    return schema.target if schema[schema.target].kind in ("categorical", "boolean") else None


@dataclass
class LabelModel:
    """A frozen classifier of `column` from the other encoded columns, and where its slots are."""

    column: str
    start: int
    stop: int
    hidden: tuple[int, ...]
    classifier: AuxClassifier

    def probabilities(self, encoded: torch.Tensor) -> torch.Tensor:
        """P(target slot | other columns) for encoded rows (real layout: one-hots, not soft)."""
        with torch.no_grad():
            return torch.softmax(self.classifier(drop_span(encoded.float(), self.start, self.stop)), dim=1)

    def redraw(
        self, frame: pd.DataFrame, encoder: TableEncoder, rng: np.random.Generator
    ) -> tuple[pd.DataFrame, np.ndarray]:
        """`frame` with its target column drawn afresh from the classifier (every other column as
        is), and the drawn slot of each row."""
        encoded = torch.from_numpy(encoder.encode(frame))
        codes = sample_categories(self.probabilities(encoded).cpu().numpy(), rng)
        one_hot = np.eye(self.stop - self.start, dtype=np.float32)[codes]
        transform = next(t for t in encoder.transforms if t.spec.name == self.column)
        redrawn = frame.copy()
        redrawn[self.column] = transform.decode(one_hot, rng).set_axis(frame.index)
        return redrawn, codes

    def code_of(self, value: Any, encoder: TableEncoder) -> int:
        """The slot of a requested target value."""
        return category_index(self.column, encoder.schema[self.column].categories, value)

    def tensors(self) -> dict[str, torch.Tensor]:
        return {TENSOR_PREFIX + k: v for k, v in self.classifier.state_dict().items()}

    def to_dict(self) -> dict[str, Any]:
        return {"column": self.column, "start": self.start, "stop": self.stop, "hidden": list(self.hidden)}

    @classmethod
    def from_saved(cls, meta: dict[str, Any], tensors: dict[str, torch.Tensor], encoder: TableEncoder) -> "LabelModel":
        """Rebuild from model.json's entry and the label-model tensors of `split_tensors` (strict:
        every weight must fit)."""
        column = str(meta["column"])
        start, stop = label_span(encoder, column)
        if (start, stop) != (int(meta["start"]), int(meta["stop"])):
            raise ValueError(f"label model slots {meta['start']}..{meta['stop']} do not match the schema")
        hidden = tuple(int(h) for h in meta["hidden"])
        classifier = AuxClassifier(encoder.width - (stop - start), stop - start, hidden)
        classifier.load_state_dict(tensors, strict=True)
        classifier.eval()
        classifier.requires_grad_(False)
        return cls(column, start, stop, hidden, classifier)


def split_tensors(tensors: dict[str, torch.Tensor]) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    """(generator weights, label-model weights without their prefix) of one saved safetensors file."""
    generator = {k: v for k, v in tensors.items() if not k.startswith(TENSOR_PREFIX)}
    label = {k[len(TENSOR_PREFIX) :]: v for k, v in tensors.items() if k.startswith(TENSOR_PREFIX)}
    return generator, label


__all__ = ["LabelModel", "label_span", "label_target", "split_tensors"]


def fit_label_model(
    encoded: torch.Tensor,
    encoder: TableEncoder,
    column: str,
    settings: TableSettings,
    *,
    rows: int,
    share: ShareTarget,
    ledger: PrivacyLedger,
    generator: torch.Generator,
    context: ProcessGroupContext = SINGLE_PROCESS,
) -> LabelModel:
    """The label model of `column`, trained with DP-SGD to bring the ledger to `share`."""
    start, stop = label_span(encoder, column)
    classifier = fit_private_classifier(
        drop_span(encoded, start, stop),
        encoded[:, start:stop].argmax(dim=1),
        stop - start,
        rows=rows,
        epochs=settings.label_model_epochs,
        batch_size=settings.label_model_batch_size,
        max_sample_rate=settings.label_model_max_sample_rate,
        lr=settings.label_model_lr,
        hidden=settings.label_model_hidden,
        max_grad_norm=settings.label_model_max_grad_norm,
        share=share,
        ledger=ledger,
        generator=generator,
        mechanism="DP-SGD on the label model",
        note=f"predicts {column!r} from the other columns; redraws it in every sampled row",
        context=context,
    )
    return LabelModel(column, start, stop, settings.label_model_hidden, classifier)
