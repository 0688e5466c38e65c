"""`dpgan`'s argument parser: every command, its options and the function that runs it."""

from __future__ import annotations

import argparse
import functools

from dpgan import __version__, kinds
from dpgan.cli.arguments import ACCOUNTANTS
from dpgan.cli.commands import cmd_inspect, cmd_models, cmd_privacy, cmd_sample
from dpgan.cli.evaluate import cmd_audit, cmd_evaluate
from dpgan.cli.fit import cmd_fit
from dpgan.cli.kind_flags import parser_defaults
from dpgan.cli.options import (
    MAX_SAMPLE_RATE,
    HelpFormatter,
    Parser,
    budget_options,
    compute_options,
    hint_options,
    kind_sections,
    number,
    option_groups,
)
from dpgan.cli.settings_flags import add_kind_flags
from dpgan.recipes import RECIPES
from dpgan.tables.registration import DTGAN_G_LOOP, TABLE_LOOP


def audit_options(audit: argparse.ArgumentParser) -> None:
    audit.add_argument(
        "model_dir",
        nargs="?",
        metavar="MODEL_DIR",
        help="saved model directory: a table, sequence or image (dcgan, dp-cgan) model; its settings are audited, "
        "never data",
    )
    audit.add_argument("--epsilon", type=float, help="audit a configuration instead: its target ε")
    audit.add_argument("--delta", type=float, help="with --epsilon (default: 1e-5)")
    audit.add_argument(
        "--model", choices=list(RECIPES), help="with --epsilon: the table model to audit, by name (default: dp-gan)"
    )
    audit.add_argument("--recipe", choices=list(RECIPES), help="another word for --model")
    audit.add_argument("--rows", type=int, help="with --epsilon: table size N (default: 32561, Adult's)")
    audit.add_argument(
        "--batch-size",
        type=int,
        help=f"with --epsilon (default: {number(TABLE_LOOP['batch_size'])}, "
        f"dtgan-g {number(DTGAN_G_LOOP['batch_size'])}; at most {MAX_SAMPLE_RATE:.0%}% of --rows)",
    )
    audit.add_argument(
        "--epochs",
        type=float,
        help=f"with --epsilon (default: {number(TABLE_LOOP['epochs'])}, dtgan-g {number(DTGAN_G_LOOP['epochs'])})",
    )
    audit.add_argument("--schema", help="with --epsilon: public schema JSON (default: the bundled Adult schema)")
    audit.add_argument("--accountant", choices=ACCOUNTANTS, help="with --epsilon: calibrates σ (default: pld)")
    audit.add_argument(
        "--mode",
        default="step",
        choices=("step", "one-run", "black-box"),
        help="what is audited (README 'Audit'; sequence and image models: step)",
    )
    audit.add_argument("--trials", type=int, help="trials per world (step: 10000; black-box: 30 trainings)")
    audit.add_argument("--steps", type=int, help="private steps per trial (step: 1; one-run: the model's T)")
    audit.add_argument("--sample-rate", type=float, help="Poisson rate of the audited steps (step: 1)")
    audit.add_argument(
        "--ablate", choices=("noise", "clipping"), help="switch it off in the audited step: a control that must fail"
    )
    audit.add_argument("--confidence", type=float, default=0.95, help="confidence of the bound")
    audit.add_argument("--seed", type=int, default=0, help="seed of the audit's own randomness")
    audit.add_argument("--json", action="store_true", help="print the result as JSON")
    audit.add_argument("--quiet", action="store_true", help="no progress bar")
    audit.set_defaults(func=cmd_audit)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="dpgan", description="Differentially private synthetic data with GANs.", formatter_class=HelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"dpgan {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    def command(name: str, help_text: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=help_text, description=help_text, formatter_class=HelpFormatter)

    for kind in kinds.kinds():  # a kind's own commands (the tables' demo and schema): its registration's
        for path in kind.commands:
            kinds.load(path)(command)

    fit = command("fit", "fit a DP synthesizer on a table, series or images and save the model")
    g = option_groups(fit, "data", "budget", "output", "compute", *kind_sections(), "loop", "advanced")
    data, output, compute = g["data"], g["output"], g["compute"]
    data.add_argument(
        "data", help="the private data: a .csv or .parquet table or a Parquet folder; an .npz or PNG folder"
    )
    described = [k.description for k in kinds.kinds()]
    data.add_argument(
        "--kind",
        choices=kinds.names(),
        default=kinds.default_kind().name,
        help=", or ".join([", ".join(described[:-1]), described[-1]]) if len(described) > 1 else described[0],
    )
    data.add_argument("--schema", help="public schema JSON (costs no budget); without it the domain is bought with DP")
    hint_options(data)
    data.add_argument(
        "--strict",
        action="store_true",
        help="refuse cells outside the schema instead of mapping them in (messages never show the values)",
    )
    data.add_argument(
        "--stream",
        action="store_true",
        help="read a Parquet file in record batches, never whole (a directory of Parquet files always is)",
    )
    budget_options(g, None)
    add_kind_flags(g)  # each kind's section: its settings' flags and its own (its registration's add_flags)
    output.add_argument("--out", required=True, help="model directory (new or empty)")
    output.add_argument("--overwrite", action="store_true", help="replace an existing model in --out")
    output.add_argument(
        "--checkpoint",
        help="directory for the fit's checkpoint; rerun the same command to resume a killed fit (secret: "
        "it holds the fit's noise seed; deleted when the fit succeeds)",
    )
    output.add_argument(
        "--checkpoint-every", type=int, default=100, help="with --checkpoint: private steps between checkpoints"
    )
    compute_options(compute)
    compute.add_argument(
        "--device",
        default="cpu",
        metavar="{cpu,cuda,cuda:N,auto}",
        help="where to train, for every --kind (auto: cuda when there is a GPU); the model is saved for the CPU",
    )
    compute.add_argument(
        "--memory-budget-mb",
        type=float,
        default=512.0,
        help="with --stream or a directory: the encoded rows held at once stay under this many MiB "
        "(it changes the work, not the model)",
    )
    fit.set_defaults(func=functools.partial(cmd_fit, defaults=parser_defaults(fit)))

    sample = command("sample", "sample rows, series or images from a saved model (post-processing: no privacy cost)")
    compute_options(sample)
    sample.add_argument("model", help="model directory written by fit")
    sample.add_argument("-n", type=int, required=True, help="number of rows (tables), series or images")
    sample.add_argument(
        "--out", required=True, help="output: a .csv or .parquet table (tables, series); an .npz or a folder (images)"
    )
    sample.add_argument(
        "--overwrite", action="store_true", help="replace an existing --out (atomically: the old one stays until done)"
    )
    sample.add_argument("--seed", type=int, help="reproducible sampling")
    sample.add_argument(
        "--condition",
        action="append",
        metavar="COLUMN=VALUE",
        help="generate rows with this value (a conditional model's column, or the label model's target)",
    )
    sample.add_argument(
        "--region-points",
        action="append",
        metavar="COLUMN",
        help="add COLUMN_latitude/_longitude: a point in each row's region box from the schema (repeatable)",
    )
    sample.set_defaults(func=cmd_sample)

    inspect = command("inspect", "print a saved model's privacy ledger and ε")
    inspect.add_argument("model", help="model directory written by fit")
    inspect.add_argument("--json", action="store_true", help="the full report as JSON")
    inspect.set_defaults(func=cmd_inspect)

    models = command("models", "list each kind's models (what --model chooses), one line each")
    models.add_argument("--kind", choices=kinds.names(), help="one kind's models only (default: every kind's)")
    models.set_defaults(func=cmd_models)

    privacy = command("privacy", "ε of Poisson-subsampled Gaussian DP-SGD, or σ for a target ε")
    privacy.add_argument("--sample-rate", type=float, required=True, help="Poisson sampling rate q")
    privacy.add_argument("--steps", type=int, required=True, help="number of noisy steps T")
    privacy.add_argument("--delta", type=float, required=True, help="δ")
    privacy.add_argument("--noise-multiplier", type=float, help="σ (noise std / clipping norm): prints ε")
    privacy.add_argument("--epsilon", type=float, help="target ε: prints the σ that reaches it")
    privacy.add_argument("--accountant", default="pld", choices=ACCOUNTANTS, help="how ε is computed")
    privacy.add_argument("--json", action="store_true", help="print JSON")
    privacy.set_defaults(func=cmd_privacy)

    evaluate = command(
        "evaluate",
        "utility, fidelity, privacy ledger (and attacks) of synthetic data (a table, series or images) against "
        "real held-out data, in an HTML report",
    )
    compute_options(evaluate)
    evaluate.add_argument(
        "--real",
        required=True,
        help="the real training data the model was fitted on (a table; images: .npz or a folder)",
    )
    evaluate.add_argument("--synthetic", required=True, help="the synthetic data to evaluate (what dpgan sample wrote)")
    evaluate.add_argument(
        "--test", required=True, help="real held-out data the model never saw (rows, series or images)"
    )
    evaluate.add_argument("--target", help="column to predict in the utility tests (tables; entities: a parent column)")
    for side in ("real", "test", "synthetic"):  # entities: each side is two tables
        evaluate.add_argument(f"--{side}-events", help=f"entities: the {side} events (--{side}: the parents)")
    evaluate.add_argument(
        "--kind",
        choices=kinds.names(),
        default=kinds.default_kind().name,
        help=kinds.in_words([k.noun for k in kinds.kinds()], "or"),
    )
    evaluate.add_argument("--classes", help="image: the label list A,B,... (default: the --model's)")
    evaluate.add_argument("--schema", help="public schema JSON (column kinds)")
    evaluate.add_argument("--model", help="the model directory that generated the synthetic data (its ledger)")
    evaluate.add_argument("--attacks", action="store_true", help="also run the privacy attacks (slow)")
    evaluate.add_argument("--audit", action="store_true", help="also run the default privacy audit of --model")
    evaluate.add_argument("--attack-shadows", type=int, help="shadow sets per target in the membership attack")
    evaluate.add_argument("--attack-test-runs", type=int, help="fresh test fits per target in the membership attack")
    evaluate.add_argument("--attack-epochs", type=float, help="epochs of the attacks' retrained models (cost knob)")
    evaluate.add_argument("--seed", type=int, default=0, help="seed of the evaluation models")
    evaluate.add_argument("--jobs", type=int, default=1, help="CPU cores for the evaluation models")
    evaluate.add_argument("--quiet", action="store_true", help="no progress bars")
    evaluate.add_argument("--out", required=True, help="report directory: metrics.json and report.html")
    evaluate.set_defaults(func=cmd_evaluate)

    audit_options(
        compute_options(command("audit", "an empirical lower bound on ε (privacy audit), next to the claimed ε"))
    )
    return parser
