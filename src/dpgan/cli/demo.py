"""`dpgan demo` (what `make demo` runs): fit on the bundled UCI Adult, write the synthetic CSV, the
released model and the evaluation report (`dpgan evaluate`'s), and print where each went.

Like every command that writes, it replaces an earlier output only with `--overwrite`: a second
`make demo` says in one line how to rerun, before any data is read, instead of silently replacing
the first run's model and report (which a user may have kept or be comparing against).
A table command: the table kind's registration (dpgan.tables.registration) adds it to the parser.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from itertools import groupby
from pathlib import Path
from typing import Any

from dpgan.cli.arguments import check_budget
from dpgan.cli.options import budget_options, compute_options, option_groups
from dpgan.cli.output import ProgressBar
from dpgan.cli.settings_flags import add_kind_flags
from dpgan.cli.tables import add_condition_flags, synth_kwargs, table_evaluation
from dpgan.errors import InputError
from dpgan.serialization import check_model_destination

SYNTHETIC_CSV = "adult-synthetic.csv"
MODEL = "model"
REPORT = "report"  # metrics.json and report.html, as `dpgan evaluate --out` writes them
OUTPUTS = (SYNTHETIC_CSV, MODEL, REPORT)
# the report's utility models: `dpgan evaluate`'s but the MLP, minutes on Adult's 32,561 rows
DEMO_MODELS = ("decision_tree", "random_forest", "logistic_regression")
RERUN = "`dpgan demo --overwrite` (`make demo DEMO_FLAGS=--overwrite`)"


def add_demo_command(command: Callable[[str, str], argparse.ArgumentParser]) -> None:
    """`dpgan demo` in the parser (`command(name, help)` gives its sub-parser): the tables' fit
    flags, a budget of ε = 3 by default, and where its outputs go."""
    demo = command(
        "demo",
        "fit on the bundled UCI Adult at ε=3, sample it, write the evaluation report (about a minute on 2 cores)",
    )
    g = option_groups(demo, "budget", "output", "compute", "tables", "loop", "advanced")  # the tables' demo
    compute_options(g["compute"])
    budget_options(g, 3.0)
    add_condition_flags(g["tables"])
    add_kind_flags(g, own_flags=False)  # the table settings' flags and the loop's
    g["output"].add_argument(
        "--out-dir", default="dpgan-demo", help="where the synthetic CSV, the model and the evaluation report go"
    )
    g["output"].add_argument("--overwrite", action="store_true", help="replace an earlier demo's outputs in --out-dir")
    demo.set_defaults(func=cmd_demo)


def check_demo_destination(out_dir: str | Path, overwrite: bool) -> Path:
    """Where the demo writes: a folder holding none of its outputs, or any with `overwrite`
    (which replaces those outputs and nothing else in the folder). Checked before the data loads."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise InputError(f"{out} is a file: give --out-dir a folder")
    earlier = [name for name in OUTPUTS if (out / name).exists()]
    if earlier and not overwrite:
        raise InputError(
            f"{out} holds an earlier demo's {', '.join(earlier)}: rerun with {RERUN} to replace them, "
            "or give another --out-dir"
        )
    check_model_destination(out / MODEL, overwrite=True)  # a folder there that is no model is never replaced
    if (out / REPORT).exists() and not (out / REPORT).is_dir():
        raise InputError(f"{out / REPORT} is a file, not the demo's report folder")
    return out


def cmd_demo(args: argparse.Namespace) -> int:
    check_budget(args)
    out = check_demo_destination(args.out_dir, args.overwrite)
    from dpgan import datasets
    from dpgan.tables.schema.table import Schema

    train, test = datasets.load_adult()
    schema = Schema.from_json(datasets.adult_schema_path())
    print(f"UCI Adult: {len(train)} training rows, {len(test)} test rows; ε={args.epsilon}, δ={args.delta:g}")
    return run_demo(train, test, schema, out, args)


def run_demo(train: Any, test: Any, schema: Any, out: Path, args: argparse.Namespace) -> int:
    """Fit, sample as many rows as `train`, save, evaluate (its random forests are the utility
    check); print the paths."""
    from dpgan.evaluation.headline import headline_line
    from dpgan.synthesizers import TabularSynthesizer
    from dpgan.tables.reading.table_io import write_table

    started = time.time()
    synth = TabularSynthesizer(**synth_kwargs(args))
    synth.fit(train, schema=schema, progress=ProgressBar(not args.quiet, args.accountant))
    fit_seconds = time.time() - started
    synthetic = synth.sample(len(train), seed=args.seed)
    csv_path = write_table(synthetic, out / SYNTHETIC_CSV)
    model_path = synth.save(out / MODEL, overwrite=True)  # the destination was checked before the fit
    report = synth.privacy_report()
    print(f"fit in {fit_seconds:.0f} s; {len(synthetic)} synthetic rows")
    print(
        f"privacy spent: ε={report['epsilon']:.4f} at δ={report['delta']:g} ({report['accountant']}); "
        f"RDP bound {report['epsilon_by_accountant']['rdp']:.4f}"
    )
    for (name, alone), run in groupby((e["name"], e["epsilon_alone"]) for e in report["events"]):
        times = len(list(run))  # the same release made several times (the marginals tree's picks): one line
        print(f"  - {name}: ε alone {alone:.4f}" + (f" each, ×{times}" if times > 1 else ""))
    target = schema.target or "income"
    metrics, _, report_path = table_evaluation(
        train, synthetic, test, target, out / REPORT, schema=schema, model_dir=model_path, quiet=args.quiet,
        seed=0 if args.seed is None else args.seed, n_jobs=2, models=DEMO_MODELS,
    )  # fmt: skip
    forest, balanced = metrics["utility"]["random_forest"]["accuracy"], metrics["balanced_rf_accuracy"]
    print("utility check (train on the rows named, test on real test rows):")
    for label, real, synth_score in (
        ("random forest accuracy on the real test set", forest["trtr"], forest["tstr"]),
        ("balanced random forest accuracy (dp-GAN protocol)", balanced["real"], balanced["synthetic"]),
    ):
        shown = "n/a (one class)" if synth_score is None else f"{synth_score:.3f}"
        print(f"  {label}: real {real:.3f}, synthetic {shown}")
    print(headline_line(metrics))
    print(f"wrote the model to {model_path}")
    print(f"wrote {len(synthetic)} synthetic rows to {csv_path}")
    print(f"wrote the evaluation report to {report_path} (open it in a browser)")
    return 0
