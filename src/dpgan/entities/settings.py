"""The entity kind's settings and models (no PyTorch, no pandas: the command line reads them first).

`max_events` (k) is part of the public schema (the unit's bound), not a setting: see schema.py.
"""

from __future__ import annotations

from dataclasses import dataclass

from dpgan.errors import InputError
from dpgan.model_catalog import ModelEntry
from dpgan.setting import setting

MODEL_SETTINGS = (
    "link",
    "choose_link",
    "bins",
    "position_buckets",
    "count_groups",
    "time_bins",
    "event_pairs",
    "own_values",
    "counts_above_k",
)
GAN_SETTINGS = ("bins", "event_hidden", "step_noise")
EVENT_PAIRS = ("chain", "pooled", "none")
ENTITY_MODELS = (
    ModelEntry(
        "linked",
        "statistics",
        "parents from DP 2-way tables with a link column; events per entity, time span and each event "
        "column from DP histograms conditioned on the parent's link value (and the event's position)",
        MODEL_SETTINGS,
        default=True,
    ),
    ModelEntry(
        "independent",
        "statistics",
        "the same DP tables with the link cut: events per entity and event columns drawn without the "
        "parent (a baseline)",
        MODEL_SETTINGS,
    ),
    ModelEntry(
        "gan",
        "GAN",
        "DoppelGANger-like: an attribute generator (the parent row, the count, first time and span), then an LSTM "
        "emitting up to k events (columns, time gap, end flag); DP-SGD on a critic of whole entities",
        GAN_SETTINGS,
    ),
)
DEFAULT_MODEL = "linked"
# the training loop's defaults for the entity GAN (the user's settings go over them): chosen on the
# validation split of bench/entities.py (bench/notes/36-entities.md)
GAN_DEFAULTS = {"batch_size": 256, "epochs": 60.0, "ema_decay": 0.99}


@dataclass(frozen=True)
class EntitySettings:
    """What the entity models read besides the training loop's (each a `setting`: the command line
    offers it as a flag); each model's entry names the ones it reads."""

    model: str = DEFAULT_MODEL
    link: str | None = setting(
        None,
        "the parent column (categorical or boolean) that the events per entity and the event columns are "
        "conditioned on",
        metavar="COLUMN",
        shown="chosen with DP (--choose-link), else the parents' first categorical column",
    )
    choose_link: bool = setting(
        True,
        "without --link: choose the link among the parents' categorical columns with DP (the exponential "
        "mechanism, 5 % of ε); off: the first one in schema order, at no cost",
    )
    bins: int = setting(16, "bins of a numeric column without bins of its own in the schema")
    position_buckets: int = setting(2, "an event's place in its entity's history, in this many equal parts")
    count_groups: int = setting(
        1,
        "the event tables' groups by the entity's count of events (1-3, 4-15, 16-63, ...: a factor of 4 each); "
        "1: one group",
    )
    time_bins: int = setting(24, "bins of an entity's first time and of its time span")
    event_pairs: str = setting(
        "pooled",
        "how an event's columns are drawn: chain (each from its 2-way table with the one before it, given "
        "the link), pooled (the same pairs over all entities), none (each alone given the link and position)",
        choices=EVENT_PAIRS,
    )
    event_hidden: int = setting(64, "the gan model's event LSTM: hidden units")
    step_noise: int = setting(4, "the gan model's event LSTM: noise numbers per event")
    own_values: bool = setting(
        True,
        "release each entity's own value of every event column and its share (own_values.py: one cell per "
        "entity) and give its events that value with that share (on: chosen on the validation sets, "
        "bench/notes/36-entities.md)",
    )

    counts_above_k: bool = setting(
        True,
        "draw an entity's count of events above k (up to max(64k, 1024)); off: no entity has more than k "
        "events (public, e.g. a series set's longest length), so the count table stops at k",
    )

    def check(self) -> None:
        if self.model not in {m.name for m in ENTITY_MODELS}:
            known = ", ".join(m.name for m in ENTITY_MODELS)
            raise InputError(f"unknown entity model {self.model!r}; known: {known}")
        limits = {"bins": 256, "position_buckets": 16, "count_groups": 6, "time_bins": 256, "event_hidden": 1024,
                  "step_noise": 64}  # fmt: skip
        for name, most in limits.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= most:
                raise InputError(f"{name} must be a whole number from 1 to {most}")
        if self.event_pairs not in EVENT_PAIRS:
            raise InputError(f"event_pairs must be one of {', '.join(EVENT_PAIRS)}")
        if not isinstance(self.choose_link, bool):
            raise InputError("choose_link must be true or false")
        if not isinstance(self.own_values, bool):
            raise InputError("own_values must be true or false")
        if not isinstance(self.counts_above_k, bool):
            raise InputError("counts_above_k must be true or false")
        if self.link is not None and (not isinstance(self.link, str) or not self.link):
            raise InputError("link must be a parent column's name")

    @property
    def linked(self) -> bool:
        return self.model == "linked"


__all__ = [
    "DEFAULT_MODEL", "ENTITY_MODELS", "EVENT_PAIRS", "EntitySettings", "GAN_DEFAULTS", "GAN_SETTINGS", "MODEL_SETTINGS",
]  # fmt: skip
