"""The data kinds, by name: what the command line, `load_model`, `inspect`, the audit and the
reports ask, so that none of them branches on a kind's name.

Each kind registers one `Kind` from its own folder (`dpgan/<folder>/registration.py`: tables,
sequences, images); a kind outside dpgan (a plug-in, or a test's) calls `register` itself. A
registration names its code by import path ("module:attribute"), loaded when a command first uses
it (`load`), so `dpgan --help` and `dpgan inspect` load neither PyTorch nor pandas, and `dpgan
sample` on a table model loads no series or image code.

The built-in kinds are found without importing anything of them but their registration modules:
every sub-package of dpgan that holds a `registration.py` (`discover`). The fit pipeline's own
registry (dpgan.fit.register_kind) is a different thing at a different depth: the unit sources a
kind trains from ("table", "table-stream"), registered when the kind's fit code loads (PyTorch).
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpgan.errors import InputError, ModelFileError

if TYPE_CHECKING:
    from dpgan.model_catalog import ModelEntry

METADATA = "model.json"  # dpgan.serialization.METADATA (not imported: it loads PyTorch)


@dataclass(frozen=True)
class Kind:
    """One data kind's registration: its words, its facade, its command line and its reports.

    Every "module:attribute" is loaded on first use (`load`). The command line's functions take the
    parsed arguments (`fit(args, settings)` with `settings` the settings flags given; `sample(args)`
    and `evaluate(args)`) and return the exit code.
    """

    name: str  # --kind's value, and model.json's "kind"
    order: int  # where the kind comes in --kind's choices and in the help's sections
    facade: str  # "module:Class": the public synthesizer; its `load(path)` reads a model file
    description: str  # `fit --kind`'s help: "a table of rows"
    noun: str  # the data, plural: "tables", "series", "images"
    units: str  # what a synthetic data set counts: "rows", "series", "images"
    unit_of_privacy: str  # the guarantee's unit in words: "one row (add or remove one row)"
    section: tuple[str, str, str | None]  # the fit help's section: key, title, description
    fit: str  # "module:function"(args, settings) -> exit code: `dpgan fit --kind NAME`
    sample: str  # "module:function"(args) -> exit code: `dpgan sample` on a model of this kind
    evaluate: str  # "module:function"(args) -> exit code: `dpgan evaluate --kind NAME`
    settings: tuple[str, ...] = ()  # "module:Class" settings records whose fields are fit flags
    models: str | None = None  # "module:attribute": its models, a tuple of dpgan.model_catalog.ModelEntry
    flags: tuple[str, ...] = ()  # the fit's plain flags (dest names) it reads, beyond every kind's
    add_flags: str | None = None  # "module:function"(group, add_settings): its section's own flags
    loop_defaults: Mapping[str, float] = field(default_factory=dict)  # the loop's defaults, for the help
    loop_words: str = ""  # whom the loop's defaults are for, in the help: "tables", "image GANs"
    recipe_loops: Mapping[str, Mapping[str, float]] = field(default_factory=dict)  # a recipe's own loop defaults
    inspect_line: str | None = None  # `dpgan inspect`'s own line, a format of the report's keys
    # "module:function"(model.json) -> {"source", "columns": [{"name", "text", ...}], "rules"} or None:
    # what the model learned per column, from its public metadata (`dpgan inspect`, the report)
    learned: str | None = None
    audit: str | None = None  # "module:function"(path) -> AuditTarget: what `dpgan audit` examines
    # "module:function"(command) each: a command of this kind alone (the tables' `dpgan demo` and
    # `dpgan schema`), added to the parser by `command(name, help)` -> its sub-parser
    commands: tuple[str, ...] = ()
    default: bool = False  # the kind --kind means when not given
    unmarked_files: bool = False  # model.json without "kind" is this kind's (files written before kinds were named)
    distributed: bool = False  # fits under torchrun (several processes)
    distributed_words: str = ""  # what of the kind fits under torchrun when not all of it (the refusal's words)

    def load(self, attribute: str) -> Any:
        """One of the registration's "module:attribute" names, imported (the first use loads it)."""
        path = getattr(self, attribute)
        if path is None:
            raise InputError(f"the {self.name} kind has no {attribute}")
        return load(path)

    def model_entries(self) -> tuple[ModelEntry, ...]:
        """The kind's models (`dpgan models`, `--model`), loaded on first use; none if it names none."""
        return () if self.models is None else tuple(self.load("models"))

    def model(self, name: str | None = None) -> ModelEntry:
        """The kind's model `name` (None: its default), or one line naming the kind's models."""
        from dpgan.model_catalog import model_entry

        return model_entry(self.model_entries(), name, self.name)


_KINDS: dict[str, Kind] = {}
_DISCOVERED = False


def load(path: str) -> Any:
    """ "module:attribute" → the attribute."""
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def register(kind: Kind) -> Kind:
    """Make `kind` known by its name (a second registration of one name must be the same)."""
    known = _KINDS.get(kind.name)
    if known is not None and known != kind:
        raise InputError(f"a data kind named {kind.name!r} is registered already")
    _KINDS[kind.name] = kind
    return kind


def unregister(name: str) -> None:
    """Forget a kind registered by `register` (a test's kind, when the test is done)."""
    _KINDS.pop(name, None)


def discover() -> None:
    """Import every dpgan sub-package's `registration.py` (each registers its kind), once. The
    folders are found on disk, so a new kind's folder needs no line anywhere else."""
    global _DISCOVERED
    if _DISCOVERED:
        return
    _DISCOVERED = True
    root = Path(__file__).parent
    for folder in sorted(p.parent.name for p in root.glob("*/registration.py")):
        importlib.import_module(f"dpgan.{folder}.registration")


def kinds() -> list[Kind]:
    """Every registered kind, in their order."""
    discover()
    return sorted(_KINDS.values(), key=lambda k: (k.order, k.name))


def names() -> list[str]:
    return [k.name for k in kinds()]


def kind(name: str) -> Kind:
    """The kind registered as `name`."""
    discover()
    if name not in _KINDS:
        raise InputError(f"unknown data kind {name!r}; known: {', '.join(names())}")
    return _KINDS[name]


def default_kind() -> Kind:
    """The kind `--kind` means when not given (the one registered as the default)."""
    return next(k for k in kinds() if k.default)


def kind_of_metadata(metadata: Mapping[str, Any], where: str | Path = "the model") -> Kind:
    """The kind of a model whose model.json is `metadata`: its "kind", or the kind whose files
    carry none."""
    name = metadata.get("kind")
    if name is None:
        unmarked = [k for k in kinds() if k.unmarked_files]
        if unmarked:
            return unmarked[0]
    if not isinstance(name, str) or name not in names():
        raise ModelFileError(f"{where} is a model of an unknown kind {name!r}; known: {', '.join(names())}")
    return _KINDS[name]


def kind_of_model(path: str | Path) -> Kind:
    """The kind of the model directory `path`, from model.json's "kind" alone (no weights, no
    PyTorch). An unreadable model.json is the default kind's, whose load then refuses the directory
    with its own clear line (dpgan.serialization.read_model_dir checks it whole)."""
    try:
        metadata = json.loads((Path(path) / METADATA).read_text())
    except (OSError, UnicodeDecodeError, ValueError):
        metadata = None
    if not isinstance(metadata, dict):
        return default_kind()
    return kind_of_metadata(metadata, path)


def in_words(items: list[str], last: str = "and") -> str:
    """["a", "b", "c"] → "a, b and c" (the help's and the messages' lists of kinds)."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} {last} {items[-1]}"


__all__ = ["Kind", "default_kind", "discover", "in_words", "kind", "kind_of_metadata", "kind_of_model", "kinds",
           "load", "names", "register", "unregister"]  # fmt: skip
