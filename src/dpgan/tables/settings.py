"""The table kind's settings besides the loop's: its codec, its plug-ins' switches, shares of ε and
knobs, and the DP checkpoint selection (the loop's own settings stay in TrainingConfig).

Each plug-in (dpgan.tables.fit.plugins) reads its own fields; a recipe (dpgan.recipes) names the
plug-ins it turns on by default (`Recipe.plugins`), the user's keywords and flags come on top.
None of these settings is read from private data. A saved model keeps them beside the loop's in
one flat "config" record (the names are distinct), so a model saved before the split loads as it
was, and options that are off are left out of the file, as they were.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

from dpgan.errors import InputError
from dpgan.setting import setting
from dpgan.training.config import TrainingConfig

LABEL_MODEL_KINDS = ("auto", "dp-sgd", "pair-tables")
SELECTION_KEYS = (
    "select_checkpoints",
    "selection_budget_fraction",
    "select_top",
    "selection_holdout",
    "selection_samples",
)
PAIR_KEYS = ("pair_anchor", "pair_budget_fraction", "pair_warmup_steps", "pair_weight", "pair_selection")


@dataclass
class TableSettings:
    """The table kind's codec, plug-in and selection settings (TrainingConfig keeps the loop's)."""

    # --- the codec (from the public schema alone) ---
    # Boob et al.'s binary codes: every integer column of at most 16 public levels (except the
    # target and the condition) coded as ±1 bits (dpgan.tables.schema.table.binary_coded). Off: RESULTS §14
    binary_codes: bool = setting(
        False, "code integer columns of at most 16 public levels as bits instead of bins (Boob et al.)"
    )
    # Boob et al.'s geo columns: (latitude, longitude) column pairs coded as one 2-D column
    # (dpgan.tables.codec.geo.GeoTransform); added to the public schema at fit time (dpgan.tables.schema.table.with_geo)
    geo_pairs: tuple[tuple[str, str], ...] = ()
    # --- DTGAN's auxiliary classifier (DP-SGD, its own share of ε): its loss guides G ---
    classifier_loss_weight: float = 0.0  # 0: no classifier
    classifier_epochs: float = 3.0
    classifier_budget_fraction: float = 0.1
    # --- DP one-way statistics of G's outputs (dpgan.statistics.tables.marginals): G is warm-started on them
    # and a penalty keeps its statistics near them (any recipe). On for dtgan-g, whose noisy
    # generator steps do not learn marginals; off elsewhere (it helps there too: RESULTS §9).
    marginal_anchor: bool = setting(False, "spend a share of ε on DP one-way statistics that warm-start and anchor G")
    marginal_budget_fraction: float = setting(0.05, "with --marginal-anchor: its share of ε", metavar="F")
    marginal_warmup_steps: int = 300
    # against a step's noise the penalty needs weight: on Adult at ε=1 (dtgan-g, one seed) weight 1
    # left mean JSD 0.082 and WD 0.040, weight 10 gave 0.010 and 0.012 (RESULTS §8)
    marginal_weight: float = 10.0
    # --- DP 2-way tables of G's outputs (dpgan.statistics.tables.pair_marginals): every pair of columns'
    # categories/bins measured once, G warm-started on them and kept near them. On by default:
    # at ε = 1 on the validation splits of adult, hmda, chile, churn and flchain it lowered JSD,
    # WD and the association difference on all five and the accuracy gap on all five (RESULTS §14)
    pair_anchor: bool = setting(
        True, "DP 2-way tables of every pair of columns warm-start and anchor G (--no-pair-anchor: the critic alone)"
    )
    pair_budget_fraction: float = setting(0.3, "the 2-way tables' share of ε", metavar="F")
    pair_warmup_steps: int = 300
    pair_weight: float = 10.0
    # a DP probe of every pair chooses which to measure (dpgan.statistics.tables.pair_selection): the
    # target's pairs and a tree's worth of the most dependent others
    pair_selection: bool = setting(
        True, "probe every pair with DP and measure only the target's and the most dependent ones"
    )
    # --- DP checkpoint selection (dpgan.training.selection; Boob et al.): G's average is kept at
    # this many evenly spaced steps (0 = off), each scored on a held-out share of the rows (each
    # record held out with probability selection_holdout, by a keyed hash of the record) by the
    # Brier score of its 2-way marginals, and the best select_top released by the exponential
    # mechanism at selection_budget_fraction of ε (select_top > 1: the union of their samples)
    select_checkpoints: int = setting(
        0,
        "keep G at K evenly spaced steps, release the best on held-out rows (exponential mechanism; 0: off)",
        metavar="K",
        advanced=True,
    )
    selection_budget_fraction: float = setting(
        0.05, "with --select-checkpoints: its share of ε", metavar="F", advanced=True
    )
    select_top: int = setting(
        1, "with --select-checkpoints: release the union of the top Q generators' samples", metavar="Q", advanced=True
    )
    selection_holdout: float = 0.1
    selection_samples: int = 2000
    # --- label model (dpgan.tables.sampling.label_model): a DP-SGD classifier of the schema's target
    # redraws that column in every sampled row (its own share of ε; off for tables without a
    # categorical target). A linear model by default: on Adult it beat an MLP at the same ε.
    label_model: bool = setting(True, "a DP classifier redraws the target in sampled rows (--no-label-model: G's own)")
    # "dp-sgd": a classifier trained with DP-SGD on label_model_budget_fraction of ε; "pair-tables":
    # naive Bayes read off the 2-way anchor's DP tables (dpgan.tables.sampling.table_label_model), no ε of its
    # own; "auto": pair-tables when the 2-way anchor measures the target, else dp-sgd. "auto" is the
    # default: on the validation splits of adult, hmda, chile, churn and flchain, at ε = 1 and 3, the
    # tables' naive Bayes had the smaller AUC gap on all five tables at both ε (RESULTS §14)
    label_model_kind: str = setting(
        "auto",
        "dp-sgd: a classifier on its own share of ε; pair-tables: naive Bayes from the 2-way tables (no ε); "
        "auto: pair-tables when the 2-way tables measure the target, else dp-sgd",
        choices=LABEL_MODEL_KINDS,
    )
    # 0.25 (was 0.1): better TSTR on every validation table, Adult's included (bench/RESULTS.md §10)
    label_model_budget_fraction: float = setting(0.25, "with a dp-sgd label model: its share of ε", metavar="F")
    label_model_hidden: tuple[int, ...] = ()
    label_model_epochs: float = 10.0
    label_model_batch_size: int = 2048
    label_model_max_sample_rate: float = 1.0
    label_model_lr: float = 3e-2
    label_model_max_grad_norm: float = 4.0

    def check(self) -> None:
        """Reject settings no fit can run, with a message that names the setting."""
        if self.label_model_kind not in LABEL_MODEL_KINDS:
            allowed = ", ".join(LABEL_MODEL_KINDS)
            raise InputError(f"label_model_kind must be one of {allowed}, not {self.label_model_kind!r}")
        for name in ("classifier_budget_fraction", "label_model_budget_fraction", "marginal_budget_fraction"):
            if not 0.0 < getattr(self, name) < 0.5:
                raise InputError(f"{name} must be in (0, 0.5)")
        if not (self.label_model_epochs > 0 and self.label_model_lr > 0 and self.label_model_max_grad_norm > 0):
            raise InputError("label_model_epochs, label_model_lr and label_model_max_grad_norm must be positive")
        if self.label_model_batch_size < 1 or any(width < 1 for width in self.label_model_hidden):
            raise InputError("label_model_batch_size and label_model_hidden widths must be ≥ 1")
        if not 0.0 < self.label_model_max_sample_rate <= 1.0:
            raise InputError("label_model_max_sample_rate must be in (0, 1]")
        if not (self.classifier_loss_weight >= 0 and self.classifier_epochs > 0):
            raise InputError("classifier_loss_weight must be ≥ 0 and classifier_epochs positive")
        if self.marginal_warmup_steps < 0 or not self.marginal_weight >= 0:
            raise InputError("marginal_warmup_steps and marginal_weight must be ≥ 0")
        if not 0.0 < self.pair_budget_fraction < 0.9:
            raise InputError("pair_budget_fraction must be in (0, 0.9)")
        if self.pair_warmup_steps < 0 or not self.pair_weight >= 0:
            raise InputError("pair_warmup_steps and pair_weight must be ≥ 0")
        self._check_selection()
        if self.label_model and self.label_model_kind == "pair-tables" and not self.pair_anchor:
            raise InputError("label_model_kind='pair-tables' reads the 2-way anchor's tables: keep pair_anchor on")
        pairs = self.geo_pairs
        if isinstance(pairs, (str, bytes)) or not all(
            isinstance(p, (tuple, list)) and len(p) == 2 and all(isinstance(c, str) for c in p) for p in pairs
        ):
            raise InputError("geo_pairs must be (latitude, longitude) pairs of column names")
        self.geo_pairs = tuple(tuple(p) for p in pairs)  # type: ignore[misc]

    def _check_selection(self) -> None:
        if self.select_checkpoints < 0 or self.select_checkpoints == 1:
            raise InputError("select_checkpoints must be 0 (off) or at least 2")
        if self.select_checkpoints and not 1 <= self.select_top < self.select_checkpoints:
            raise InputError("select_top must be at least 1 and below select_checkpoints")
        if not 0.0 < self.selection_budget_fraction < 0.5 or not 0.0 < self.selection_holdout < 0.5:
            raise InputError("selection_budget_fraction and selection_holdout must be in (0, 0.5)")
        if self.selection_samples < 100:
            raise InputError("selection_samples must be at least 100")

    def to_dict(self) -> dict[str, Any]:
        """Every setting, except the 2-way anchor, codec and selection options while they are off:
        a model saved before they existed re-saves unchanged, and `from_dict` fills them in as off."""
        data = asdict(self)
        if not self.pair_anchor:
            for key in PAIR_KEYS:
                del data[key]
        if not self.binary_codes:
            del data["binary_codes"]
        if self.label_model_kind == "dp-sgd":
            del data["label_model_kind"]
        if not self.geo_pairs:
            del data["geo_pairs"]
        else:
            data["geo_pairs"] = [list(pair) for pair in self.geo_pairs]
        if self.select_checkpoints == 0:
            for key in SELECTION_KEYS:
                del data[key]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TableSettings:
        data = dict(data)
        # a model saved before the 2-way anchor existed (or with it off) has no key: it was off
        data.setdefault("pair_anchor", False)
        data.setdefault("pair_selection", False)  # before the choice existed every pair was measured
        data.setdefault("label_model_kind", "dp-sgd")  # likewise: before it existed, every label model was
        if "label_model_hidden" in data:
            data["label_model_hidden"] = tuple(data["label_model_hidden"])
        if "geo_pairs" in data:
            data["geo_pairs"] = tuple(tuple(pair) for pair in data["geo_pairs"])
        return cls(**data)


TABLE_SETTING_KEYS = frozenset(f.name for f in fields(TableSettings))


def split_settings(flat: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A flat record (keywords, or a saved model's "config") split into the table kind's settings
    and the rest (the loop's)."""
    ours = {key: value for key, value in flat.items() if key in TABLE_SETTING_KEYS}
    return ours, {key: value for key, value in flat.items() if key not in TABLE_SETTING_KEYS}


def loop_config(saved: Mapping[str, Any]) -> TrainingConfig:
    """The loop's settings of a saved model's flat "config" record, past the table kind's (which a
    series or image model saved as off before the split)."""
    return TrainingConfig.from_dict(split_settings(saved)[1])


__all__ = ["LABEL_MODEL_KINDS", "TABLE_SETTING_KEYS", "TableSettings", "loop_config", "split_settings"]
