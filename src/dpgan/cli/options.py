"""The parser's shared pieces: one-line usage errors, defaults in the help, and the option groups
that `fit`, `demo`, `schema` and `audit` share. No PyTorch: the defaults are numbers pinned by tests."""

from __future__ import annotations

import argparse
import sys
import textwrap
from typing import Any

from dpgan import kinds
from dpgan.cli.arguments import ACCOUNTANTS
from dpgan.threads import ENVIRONMENT


class Parser(argparse.ArgumentParser):
    """argparse, with its usage errors as one line like every other error (exit code 2)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"dpgan: error: {message} (see {self.prog} --help)", file=sys.stderr)
        sys.exit(2)


class HelpFormatter(argparse.HelpFormatter):
    """Shows "(default: X)" after an option's help when it has a meaningful default and the help
    does not state one itself (a default given as a rule, e.g. per data kind, is written in the help)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        stated = "%(default)" in text or "default:" in text
        if not stated and default not in (None, False, argparse.SUPPRESS) and action.option_strings:
            text += " (default: %(default)s)"
        return text

    def _split_lines(self, text: str, width: int) -> list[str]:
        """Wrapped at spaces only: a hyphenated name (a default such as gaussian-copula, a flag)
        stays on one line, where a user can read and copy it."""
        return textwrap.wrap(self._whitespace_matcher.sub(" ", text).strip(), width, break_on_hyphens=False)


MAX_SAMPLE_RATE = 0.05  # the expected batch is at most this share of the rows (TrainingConfig.max_sample_rate)


def number(value: float) -> str:
    """1024 → "1,024", 60.0 → "60": a default as a person reads it."""
    return f"{int(value):,}" if float(value).is_integer() else f"{value:g}"


# The loop's defaults per data kind are each kind's registration's (`Kind.loop_defaults`), shown in
# `fit --help` as numbers: the CLI cannot import them from the settings (that would load PyTorch
# before the arguments are checked), so tests/cli/test_cli_help.py pins them to TrainingConfig, the
# recipes, SEQUENCE_DEFAULTS and IMAGE_DEFAULTS.
def per_kind(key: str) -> str:
    """The default rule in numbers, e.g. `1,024 for tables (dtgan-g: 64), 256 for series, 1,024 for
    image GANs` (the default image recipe trains none)."""
    said = []
    for kind in kinds.kinds():
        if key not in kind.loop_defaults:
            continue
        text = f"{number(kind.loop_defaults[key])} for {kind.loop_words}"
        text += "".join(f" ({name}: {number(loop[key])})" for name, loop in kind.recipe_loops.items() if key in loop)
        said.append(text)
    return ", ".join(said)


def default_models() -> str:
    """--model's default in words, each kind's own: `marginals for tables with a target named
    (dp-gan without), gaussian-copula for series, ...`."""
    said = []
    for k in (k for k in kinds.kinds() if k.models is not None):
        when = [m for m in k.model_entries() if m.default_when]
        instead = "".join(f"{m.name} for {k.noun} when {m.default_when}, " for m in when)
        said.append(f"{instead}{k.model().name} for {k.noun}{' otherwise' if when else ''}")
    return ", ".join(said)


def max_examples_rule() -> str:
    """--max-examples' default in words: `0, no cap, for series; 2,000,000 for tables (dtgan-g: 0),
    1,024,000 for image GANs`."""
    looped = [k for k in kinds.kinds() if "max_examples" in k.loop_defaults]  # kinds with a GAN loop
    uncapped = [k.loop_words for k in looped if not k.loop_defaults["max_examples"]]
    capped = [k for k in looped if k.loop_defaults["max_examples"]]
    said = [f"0, no cap, for {kinds.in_words(uncapped)}"] if uncapped else []
    said += [
        f"{number(k.loop_defaults['max_examples'])} for {k.loop_words}"
        + "".join(
            f" ({name}: {number(loop['max_examples'])})"
            for name, loop in k.recipe_loops.items()
            if "max_examples" in loop
        )
        for k in capped
    ]
    return "; ".join(said)


def option_groups(parser: argparse.ArgumentParser, *keys: str) -> dict[str, Any]:
    """The help's sections, in the order of `keys` (`kind_sections` names the kinds'): what every
    kind shares, then each kind's own, then the loop and the published options that are off by default."""
    sections = {
        "data": ("data", "the private input and its public description (costs no budget)"),
        "budget": ("budget", "the (ε, δ) guarantee and how ε is computed"),
        "output": ("output", None),
        "compute": ("compute", None),
        **{k.section[0]: k.section[1:] for k in kinds.kinds()},  # each kind's own (its registration's)
        "loop": (
            "training loop",
            f"the expected batch is at most {MAX_SAMPLE_RATE:.0%} of the rows; steps T = ⌈epochs·N/L⌉, then the caps",
        ),
        "advanced": ("advanced", "published options, off by default"),
    }
    return {key: parser.add_argument_group(*sections[key]) for key in keys}


def kind_sections() -> list[str]:
    """The help's section of each registered kind, in the kinds' order."""
    return [k.section[0] for k in kinds.kinds()]


def budget_options(g: dict[str, Any], epsilon_default: float | None) -> None:
    """The budget and loop options of `fit` and `demo`; `g` maps a section name (`option_groups`)
    to its argument group. Help strings go through argparse's %-formatting, so a percent sign is
    written %% (`{rate:.0%}%` prints "5%"). The kinds' flags follow (settings_flags.add_kind_flags)."""
    budget, loop = g["budget"], g["loop"]
    budget.add_argument(
        "--epsilon",
        type=float,
        default=epsilon_default,
        required=epsilon_default is None,
        help="the privacy budget ε: what the whole fit may spend, every private read included",
    )
    budget.add_argument("--delta", type=float, default=1e-5, help="δ of the (ε, δ) guarantee; keep it below 1/rows")
    budget.add_argument("--accountant", default="pld", choices=ACCOUNTANTS, help="how ε is computed from the ledger")
    budget.add_argument(
        "--noise-multiplier",
        type=float,
        help="fix σ instead and train until ε is spent (default: σ calibrated so that the planned steps land on ε)",
    )
    budget.add_argument("--seed", type=int, help="reproducible runs, for experiments only (not for a release)")
    g["output"].add_argument("--quiet", action="store_true", help="no progress bar")
    loop.add_argument(
        "--model",
        metavar="NAME",
        help=f"the model to fit, by its name, one word for every kind (default: {default_models()}); `dpgan models` "
        "lists each kind's models, their families (DP statistics, GAN, a GAN on statistics) and what each is; "
        "a setting the model does not read is refused",
    )
    loop.add_argument(
        "--recipe",
        metavar="NAME",
        help="another word for --model, for tables and images (a GAN's recipe: see README 'Recipes')",
    )
    loop.add_argument(
        "--epochs",
        type=float,
        help=f"passes over the data; σ is calibrated to land on ε (default: {per_kind('epochs')})",
    )
    loop.add_argument(
        "--batch-size",
        type=int,
        help=f"expected Poisson batch size L, q = L/N (default: {per_kind('batch_size')}; "
        f"never above {MAX_SAMPLE_RATE:.0%}% of the rows)",
    )
    loop.add_argument(
        "--max-steps",
        type=int,
        help="at most this many private steps whatever --epochs gives (default: 0, no cap)",
    )
    loop.add_argument(
        "--max-examples",
        type=int,
        help=f"at most E per-example gradients, T ≤ ⌈E/L⌉ (default: {max_examples_rule()}; "
        "a table's cap gives way to --epochs; for the marginals model, rows read: past E, a Poisson sample)",
    )


def hint_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--target", help="the column to predict: the label model and conditional recipes use it")
    p.add_argument(
        "--categorical",
        action="append",
        metavar="COLUMN[,COLUMN...]",
        help="columns whose values are categories even if they look like numbers (public hint, free)",
    )
    p.add_argument(
        "--categories",
        action="append",
        metavar="COLUMN=VALUE[,VALUE...]",
        help="a column's public list of values, e.g. a target's labels (free; no value is lost to a threshold)",
    )
    p.add_argument(
        "--bounds",
        action="append",
        metavar="COLUMN=LOW:HIGH",
        help="public bounds of a numeric column (free; values outside are clamped; a sequence value column "
        "without them gets DP-estimated bounds)",
    )


def key_option(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """--key: one flag that two kinds read (`fit`'s table and entity sections, `schema`): added by
    whichever section comes first (a group shares its parser's option strings)."""
    if "--key" in p._option_string_actions:
        return
    p.add_argument(
        "--key",
        action="append",
        metavar="COLUMN[=FORMAT]",
        help="tables: a key column (unique ids): never read nor learned, free; sampling writes fresh unique values, "
        "FORMAT integer (default), uuid, or a prefix and #s (P-######); entities: the one column of both tables "
        "naming each event's entity",
    )


def hierarchy_option(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """--hierarchy: a code column's public hierarchy (tables: `fit` and `schema`)."""
    p.add_argument(
        "--hierarchy",
        action="append",
        metavar="COLUMN=prefix:3,1|COLUMN=@FILE.json",
        help="a code column's public hierarchy: a value too rare to release falls back to its released prefix "
        "(021*) or parent instead of (other); one more DP histogram per level",
    )


def compute_options(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """--threads and --verbose, on every command that trains or evaluates (dpgan.threads)."""
    parser.add_argument(
        "--threads",
        metavar="N|auto",
        help=f"CPU threads for PyTorch and BLAS (default: ${ENVIRONMENT}, else auto: the cores other jobs "
        "leave free, re-read as the fit runs; small networks thrash on a core another job holds)",
    )
    parser.add_argument("--verbose", action="store_true", help="print the compute settings chosen (threads)")
    return parser
