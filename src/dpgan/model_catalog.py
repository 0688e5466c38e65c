"""Each kind's models in one vocabulary, and the one refusal of a setting the chosen model has not.

A model is chosen by its name, the same word for every kind (`model=` in Python, `--model` on the
command line; tables and images also take their older word, `recipe`). Each kind's registration
(dpgan.kinds: `Kind.models`) names its tuple of `ModelEntry` by import path; the entries live
beside what they describe (the table recipes in dpgan.recipes, the image recipes in
dpgan.recipes.images, the series models in dpgan.sequences.settings) and, like this module, load
neither PyTorch nor pandas: `dpgan models` and the fit's help read them before anything heavy.

Settings live with the part that reads them. An entry lists the settings fields its model reads
(its statistics, its networks, its plug-ins); a model that trains (a GAN, or a GAN on statistics)
reads the training loop's (dpgan.training.config.TrainingConfig) too. A setting given that the
chosen model does not read would silently do nothing, so it is one line instead
(`refuse_unread_settings`): the same check for every kind's models, in Python and on the command line.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields

from dpgan.errors import InputError
from dpgan.training.config import TrainingConfig

# the two families of dpgan.model, and their composition
FAMILIES = {
    "statistics": "DP statistics on all of ε are the model: no network, no GAN steps",
    "GAN": "a generator trained against a critic with DP (its plug-ins may release DP statistics first)",
    "GAN on statistics": "a statistics model released first, and a GAN trained on the rest of ε on top of it",
}
LOOP_SETTINGS = tuple(f.name for f in fields(TrainingConfig))  # what every model that trains reads


@dataclass(frozen=True)
class ModelEntry:
    """One model of a kind: its name (the word that chooses it), its family (a key of FAMILIES),
    one line saying what it is, the settings fields it reads besides the loop's, whether it is
    the model a fit that names none gets, and (`default_when`) the public fact under which it is
    that model instead (tables: the marginals model when a target is named)."""

    name: str
    family: str
    description: str
    settings: tuple[str, ...] = ()
    default: bool = False
    default_when: str = ""

    def default_words(self) -> str:
        """How `dpgan models` marks it: `(default)`, `(default when a target is named)` or nothing."""
        if self.default_when:
            return f" (default when {self.default_when})"
        return " (default)" if self.default else ""

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise ValueError(f"model {self.name!r}: family must be one of {', '.join(FAMILIES)}")

    @property
    def trains(self) -> bool:
        """Whether it trains a network (and so reads the training loop's settings)."""
        return self.family != "statistics"

    def reads(self) -> tuple[str, ...]:
        """Every settings field the model reads: its own, then (a model that trains) the loop's."""
        return (*self.settings, *(LOOP_SETTINGS if self.trains else ()))


def refuse_unread_settings(entry: ModelEntry, given: Iterable[str], models: Sequence[ModelEntry] = ()) -> None:
    """One line naming each setting in `given` (the names the user set: defaults left alone are not
    given) that the model `entry` does not read; `models`, the kind's, say which of them read it."""
    read = set(entry.reads())
    unread = sorted(set(given) - read)
    if not unread:
        return
    own = ", ".join(entry.settings) or "none"
    loop = " and the training loop's" if entry.trains else ""
    readers = [m.name for m in models if unread[0] in m.reads()]
    elsewhere = f"; {unread[0]!r} is a setting of {', '.join(readers)}" if readers else ""
    said = f"setting {unread[0]!r}" if len(unread) == 1 else f"settings {', '.join(map(repr, unread))}"
    raise InputError(f"the {entry.name} model has no {said} (its settings: {own}{loop}{elsewhere})")


def one_name(model: str | None, recipe: str | None, words: tuple[str, str] = ("model", "recipe")) -> str | None:
    """The model named by `model` or by its other word `recipe` (None: neither names one); both,
    naming two different models, is one line. `words` are the two as the caller's user wrote them."""
    if model is not None and recipe is not None and model != recipe:
        raise InputError(
            f"{words[0]} {model!r} and {words[1]} {recipe!r} name two models: give one "
            f"({words[1]} is another word for {words[0]})"
        )
    return model if model is not None else recipe


def model_entry(models: Sequence[ModelEntry], name: str | None = None, kind: str = "this") -> ModelEntry:
    """The entry of `models` named `name` (None: the one marked default, the model a fit that names
    none gets), or one line naming the `kind`'s models."""
    for entry in models:
        if entry.name == name or (name is None and entry.default):
            return entry
    known = ", ".join(m.name for m in models) or "none"
    raise InputError(f"{name!r} is not a model of the {kind} kind; its models: {known} (dpgan models)")


__all__ = ["FAMILIES", "LOOP_SETTINGS", "ModelEntry", "model_entry", "one_name", "refuse_unread_settings"]
