"""The table kind's commands (registered in dpgan.tables.registration): its fit flags, `dpgan fit
--kind table`, `dpgan sample` on a table model and `dpgan evaluate --kind table`.

A model's destination is checked before any private row is read; every argument before PyTorch
or pandas load."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dpgan.cli.arguments import (
    LOOP_FLAGS,
    check_file,
    check_model_dir,
    chosen_model,
    geo_pair,
    parse_conditions,
    table_hints,
)
from dpgan.cli.options import hierarchy_option, key_option
from dpgan.cli.output import ProgressBar, StageProgress, print_report_warning, short
from dpgan.cli.settings_flags import given_settings
from dpgan.errors import InputError
from dpgan.serialization import check_model_destination
from dpgan.tables.reading.table_io import check_readable, check_writable
from dpgan.training.config import TrainingConfig


def parse_keys(items: list[str] | None) -> dict[str, str] | None:
    """`--key id` → {"id": "integer"}; `--key order=uuid`, `--key ref=P-######` (dpgan.tables.schema.keys)."""
    if not items:
        return None
    out: dict[str, str] = {}
    for item in items:
        column, _, form = item.partition("=")
        if not column.strip():
            raise InputError(f"--key takes COLUMN or COLUMN=FORMAT (integer, uuid, P-######), got {item!r}")
        out[column.strip()] = form.strip() or "integer"
    return out


def parse_hierarchies(items: list[str] | None) -> dict[str, dict[str, Any]] | None:
    """`--hierarchy zip=prefix:3,1` → {"zip": {"prefix": [3, 1]}}; `--hierarchy icd=@tree.json` reads
    a JSON hierarchy object (`{"parents": [...]}`) from a public file."""
    if not items:
        return None
    out: dict[str, dict[str, Any]] = {}
    for item in items:
        column, sep, rule = item.partition("=")
        kind, colon, spec = rule.partition(":")
        if sep and column and rule.startswith("@"):
            from dpgan.tables.schema.table import read_schema_file

            out[column] = read_schema_file(check_file(rule[1:], "hierarchy file"))
            continue
        try:
            lengths = [int(v) for v in spec.split(",")]
        except ValueError:
            lengths = []
        if not (sep and column and colon and kind == "prefix" and lengths):
            raise InputError(f"--hierarchy takes COLUMN=prefix:3,1 or COLUMN=@FILE.json, got {item!r}")
        out[column] = {"prefix": lengths}
    return out


def synth_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """The table facade's keywords from the flags: the budget, where it runs, the loop's flags, and
    the settings flags generated from the settings classes (dpgan.cli.settings_flags)."""
    kwargs: dict[str, Any] = {
        "epsilon": args.epsilon,
        "delta": args.delta,
        "seed": args.seed,
        "accountant": args.accountant,
    }
    for key in ("device", "threads", *LOOP_FLAGS, "noise_multiplier"):
        if getattr(args, key, None) is not None:
            kwargs[key] = getattr(args, key)
    model = chosen_model(args)
    if model is not None:
        kwargs["model"] = model
    if getattr(args, "schema_from_data_without_dp", False):
        kwargs["schema_from_data_without_dp"] = True
    if getattr(args, "condition_column", None):
        kwargs["condition"] = args.condition_column
    if getattr(args, "geo", None):
        kwargs["geo_pairs"] = tuple(geo_pair(item) for item in args.geo)
    from dpgan.tables.settings import TableSettings  # the table facade's own settings (no PyTorch)

    return kwargs | given_settings(args, (TrainingConfig, TableSettings))


def add_condition_flags(tables: argparse._ArgumentGroup) -> None:
    """--condition-column and --geo: the table flags `fit` and `demo` share."""
    tables.add_argument(
        "--condition-column", help="categorical column to condition on (conditional recipes: the target)"
    )
    tables.add_argument(
        "--geo",
        action="append",
        metavar="LAT,LON",
        help="model a latitude and a longitude column as one 2-D column (a grid of their bins; repeatable)",
    )


def add_fit_flags(tables: argparse._ArgumentGroup, add_settings: Callable[[], None]) -> None:
    """The fit help's tables section: the condition flags, the settings' flags, then the table's own."""
    add_condition_flags(tables)
    add_settings()
    tables.add_argument(
        "--schema-from-data-without-dp",
        action="store_true",
        help="read bounds and categories off the data WITHOUT privacy (the guarantee then excludes the schema)",
    )
    key_option(tables)
    hierarchy_option(tables)
    tables.add_argument(
        "--keep-identifier-columns",
        action="store_true",
        help="with --schema-from-data-without-dp: keep text columns that are nearly unique per row",
    )
    tables.add_argument(
        "--public-data",
        metavar="FILE",
        help="a PUBLIC table of the same schema (.csv or .parquet): G and the critic are pre-trained on it "
        "without noise (no ε spent; the model records its name, SHA-256 and rows). Never a part of the private table",
    )
    tables.add_argument(
        "--public-warm-start-steps",
        type=int,
        default=500,
        metavar="N",
        help="with --public-data: non-private rounds on it",
    )


def fit_command(args: argparse.Namespace, settings: dict[str, Any]) -> int:
    """`dpgan fit --kind table`: a CSV or Parquet table, held whole or read in record batches, on
    one process or under torchrun (every rank fits, rank 0 alone prints and writes)."""
    from dpgan.tables.reading.parquet_source import ParquetSource, should_stream

    source = ParquetSource(args.data, memory_budget_mb=args.memory_budget_mb)
    # public inputs only: a directory of Parquet files, or --stream (never the file's size: a row could tip it)
    streamed = should_stream(args.data, args.stream)
    if streamed:
        source.files()  # a missing path, an empty directory or a non-Parquet file: refused now
    data_path = source.path if streamed else check_readable(args.data)
    schema_path = check_file(args.schema, "schema file") if args.schema else None
    out = check_model_destination(args.out, args.overwrite)  # before any private row is read
    categorical, bounds, categories = table_hints(args)
    if schema_path is not None and (categorical or bounds or categories):
        raise InputError(
            "--categorical, --categories and --bounds describe a table without a schema: write them into it"
        )

    from dpgan.tables.schema.table import Schema

    schema = Schema.from_json(schema_path) if schema_path is not None else None  # before PyTorch loads

    from dpgan.privacy.distributed import rank_session
    from dpgan.synthesizers import TabularSynthesizer
    from dpgan.tables.reading.table_io import read_private_table

    synth = TabularSynthesizer(**(synth_kwargs(args) | settings))  # checks the remaining settings before reading data
    with rank_session(device=str(synth.device)) as context:  # under torchrun: rank 0 alone prints and writes
        data = source if streamed else read_private_table(data_path)
        return fit_table(args, synth, data, schema, out, context.is_main)


def fit_table(args: argparse.Namespace, synth: Any, data: Any, schema: Any, out: Path, main: bool) -> int:
    """The table fit of `fit_command` on this rank (`main`: the one that prints and writes)."""
    categorical, bounds, categories = table_hints(args)
    synth.fit(
        data,
        schema=schema,
        target=args.target,
        categorical=categorical,
        bounds=bounds,
        categories=categories,
        strict=args.strict,
        keep_identifiers=args.keep_identifier_columns,
        keys=parse_keys(args.key),
        hierarchies=parse_hierarchies(args.hierarchy),
        progress=ProgressBar(not args.quiet and main, args.accountant),
        checkpoint=args.checkpoint,
        checkpoint_every=args.checkpoint_every,
        public_data=args.public_data,
        public_warm_start_steps=args.public_warm_start_steps,
    )
    if not main:
        return 0
    synth.save(out, overwrite=args.overwrite)
    report = synth.privacy_report()
    spent = f"ε={report['epsilon']:.4f}, δ={report['delta']:g} ({report['accountant']})"
    print(f"saved model to {out}: {spent}; model {synth.recipe.name}{'' if synth.model_named else ' (the default)'}")
    print_report_warning(report)
    return 0


def check_table_output(args: argparse.Namespace) -> Path:
    """`dpgan sample --out` for a table of rows (tables, and series as a long table): a .csv or
    .parquet file that does not exist yet, or --overwrite; checked before the model loads."""
    out = check_writable(args.out)
    if out.is_dir():
        raise InputError(f"output {out} is a directory: give a file name ending in .csv or .parquet")
    if out.exists() and not args.overwrite:
        raise InputError(f"{out} exists; pass --overwrite to replace it")
    return out


def sample_command(args: argparse.Namespace) -> int:
    """`dpgan sample` on a table model: streamed chunk by chunk into a file renamed into place when
    complete (memory flat in -n)."""
    out = check_table_output(args)
    conditions = parse_conditions(args.condition)
    from dpgan.synthesizers import load_model

    synth = load_model(args.model)
    synth.sample_to(out, args.n, seed=args.seed, conditions=conditions, region_points=args.region_points or ())  # type: ignore[attr-defined]
    print(f"wrote {args.n} rows to {out}")
    return 0


def evaluate_command(args: argparse.Namespace) -> int:
    """`dpgan evaluate --kind table`: utility (TSTR/TRTR on --target), fidelity, the model's ledger
    and, on request, the attacks and the audit; writes metrics.json and report.html."""
    for path in (args.real, args.synthetic, args.test):
        check_readable(path)
    if args.target is None:
        raise InputError("--target names the column to predict in the utility tests (tables)")
    schema_path = check_file(args.schema, "schema file") if args.schema else None
    if args.model is not None:
        check_model_dir(args.model)
    if args.jobs < 1:
        raise InputError(f"--jobs must be a positive number of cores, not {args.jobs}")
    if args.audit and args.model is None:
        raise InputError("--audit audits the model that made the synthetic table: give --model")
    from dpgan.evaluation.tables.learned_columns import released_schema
    from dpgan.tables.reading.table_io import read_table
    from dpgan.tables.schema.table import Schema

    schema = Schema.from_json(schema_path) if schema_path is not None else None
    # the model's schema when none is given: its code columns read as text (`02139` stays `02139`)
    reading = schema if schema is not None else released_schema(args.model)
    real, synthetic, test = (read_table(p, reading) for p in (args.real, args.synthetic, args.test))
    attack_config = None
    if args.attacks:
        from dpgan.evaluation.attacks import AttackConfig

        knobs = {"n_shadow": args.attack_shadows, "n_test_runs": args.attack_test_runs, "epochs": args.attack_epochs}
        attack_config = AttackConfig(seed=args.seed, **{k: v for k, v in knobs.items() if v is not None})
    metrics, metrics_path, report_path = table_evaluation(
        real, synthetic, test, args.target, Path(args.out), schema=schema, model_dir=args.model, quiet=args.quiet,
        seed=args.seed, n_jobs=args.jobs, attacks=args.attacks, attack_config=attack_config, audit=args.audit,
    )  # fmt: skip
    print(f"wrote {metrics_path} and {report_path}")
    print_table_summary(metrics)
    return 0


def table_evaluation(
    real: Any,
    synthetic: Any,
    test: Any,
    target: str,
    out: Path,
    *,
    schema: Any = None,
    model_dir: str | Path | None = None,
    quiet: bool = False,
    seed: int = 0,
    n_jobs: int = 1,
    attacks: bool = False,
    attack_config: Any = None,
    audit: bool = False,
    models: tuple[str, ...] | None = None,
) -> tuple[dict[str, Any], Path, Path]:
    """A table's evaluation as `dpgan evaluate` writes it (`dpgan demo` too): metrics.json and
    report.html under `out`; the metrics and both paths. `models`: the utility models (default: all)."""
    from dpgan.evaluation.evaluate import evaluate, save_metrics
    from dpgan.evaluation.tables.report import write_report

    progress = StageProgress(not quiet)
    try:
        metrics = evaluate(
            real, synthetic, test, target, schema=schema, model_dir=model_dir, attacks=attacks,
            attack_config=attack_config, progress=progress, seed=seed, n_jobs=n_jobs, models=models,
        )  # fmt: skip
        if audit:
            assert model_dir is not None
            metrics["audit"] = evaluation_audit(model_dir, seed, progress)
        metrics_path = save_metrics(metrics, out / "metrics.json")
        report_path = write_report(metrics, out / "report.html", real=real, synthetic=synthetic, progress=progress)
    finally:
        progress.close()
    return metrics, metrics_path, report_path


def evaluation_audit(model_dir: str | Path, seed: int, progress: Any) -> dict[str, Any]:
    """`evaluate --audit`: the default audit of the model, for metrics.json and the report."""
    from dpgan.evaluation.audit import audit_model

    result = audit_model(model_dir, seed=seed, progress=lambda done, total: progress("audit", done, total))
    return result.to_dict()


def print_table_summary(metrics: dict[str, Any]) -> None:
    """The headline and the mean utility and fidelity, as `evaluate` prints them."""
    from dpgan.evaluation.headline import headline_line

    print(headline_line(metrics))
    fidelity = metrics["fidelity"]
    mean = metrics["utility_summary"]["mean"]
    name = "accuracy" if "accuracy" in mean else "r2"
    print(
        f"mean {name} over models: synthetic {short(mean[name]['tstr'])}, real {short(mean[name]['trtr'])}; "
        f"JSD {short(fidelity['jsd_mean'])}, WD {short(fidelity['wd_mean'])}, "
        f"association diff {short(fidelity['association_diff'])}"
    )
    from dpgan.evaluation.tables.learned_columns import learned_lines
    from dpgan.evaluation.tables.rules import rules_line

    line = rules_line(metrics.get("rules"))
    if line is not None:
        print(line)
    for text in learned_lines(metrics.get("learned")):
        print(text)


__all__ = ["add_condition_flags", "add_fit_flags", "check_table_output", "evaluate_command", "fit_command",
           "print_table_summary", "sample_command", "synth_kwargs", "table_evaluation"]  # fmt: skip
