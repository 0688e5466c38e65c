"""Command line: a thin layer over the library. Errors print one line on stderr, no traceback.

Every argument is checked before PyTorch, pandas or the data are loaded, and a model's destination
before any private row is read: a typo costs a second, not a wasted fit and its budget.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import sys
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dpgan import __version__
from dpgan.cli_progress import ProgressBar, StageProgress
from dpgan.errors import DPGanError, DPGanWarning, InputError
from dpgan.recipes import RECIPES
from dpgan.recipes.images import IMAGE_RECIPES
from dpgan.serialization import METADATA, check_model_destination, model_kind
from dpgan.tables.table_io import check_readable, check_writable
from dpgan.threads import ENVIRONMENT, describe_threads, fit_threads, resolve_threads

ACCOUNTANTS = ("pld", "rdp", "rdp-classic")
MAX_SAMPLE_ROWS = 100_000_000


# ---------------------------------------------------------------- argument checks (no heavy imports)


def _positive(value: float | None, flag: str, *, integer: bool = False) -> None:
    if value is None:
        return
    if not math.isfinite(value) or value <= 0 or (integer and int(value) != value):
        kind = "a positive whole number" if integer else "a positive number"
        raise InputError(f"{flag} must be {kind}, not {value:g}")


LOOP_FLAGS = ("epochs", "max_steps", "max_examples", "batch_size")  # fit flags that are the loop's settings, by name


def loop_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The loop's settings the user gave as flags (--epochs, --max-steps, --max-examples, --batch-size)."""
    return {key: getattr(args, key) for key in LOOP_FLAGS if getattr(args, key, None) is not None}


def _check_budget(args: argparse.Namespace) -> None:
    epsilon = getattr(args, "epsilon", None)
    if epsilon is not None:
        _positive(epsilon, "--epsilon")
    delta = getattr(args, "delta", None)
    if delta is not None and not 0.0 < delta < 1.0:
        raise InputError(f"--delta must be in (0, 1), not {delta:g}")
    _positive(getattr(args, "epochs", None), "--epochs")
    _positive(getattr(args, "batch_size", None), "--batch-size", integer=True)
    _positive(getattr(args, "noise_multiplier", None), "--noise-multiplier")


def _check_file(path: str, what: str) -> Path:
    if not Path(path).is_file():
        raise InputError(f"{what} not found: {path}")
    return Path(path)


def _check_model_dir(path: str) -> Path:
    if not Path(path).is_dir():
        raise InputError(f"model directory not found: {path}")
    return Path(path)


def _names(text: str | None, flag: str) -> list[str] | None:
    """`A,B` → ["A", "B"] (None stays None); an empty or repeated name is one line."""
    if text is None:
        return None
    names = [n.strip() for n in text.split(",")]
    if any(not n for n in names) or len(set(names)) != len(names):
        raise InputError(f"{flag} lists distinct, non-empty column names: A,B")
    return names


def _categorical(items: list[str] | None) -> list[str]:
    return [name.strip() for item in items or [] for name in item.split(",") if name.strip()]


def _bounds(items: list[str] | None) -> dict[str, tuple[float, float]]:
    """`--bounds age=0:120` → {"age": (0.0, 120.0)}."""
    out: dict[str, tuple[float, float]] = {}
    for item in items or []:
        column, sep, span = item.partition("=")
        low, colon, high = span.partition(":")
        try:
            pair = (float(low), float(high))
        except ValueError:
            pair = (math.nan, math.nan)
        if not (sep and colon and column) or not (
            math.isfinite(pair[0]) and math.isfinite(pair[1]) and pair[0] < pair[1]
        ):
            raise InputError(f"--bounds takes COLUMN=LOW:HIGH with LOW < HIGH, got {item!r}")
        out[column] = pair
    return out


def _categories(items: list[str] | None) -> dict[str, list[str]]:
    """`--categories deny=no,yes` → {"deny": ["no", "yes"]}."""
    out: dict[str, list[str]] = {}
    for item in items or []:
        column, sep, values = item.partition("=")
        listed = [v.strip() for v in values.split(",") if v.strip()]
        if not (sep and column and listed):
            raise InputError(f"--categories takes COLUMN=VALUE[,VALUE...], got {item!r}")
        out[column] = listed
    return out


def _geo_pair(item: str) -> tuple[str, str]:
    """`--geo lat,lon` → ("lat", "lon")."""
    names = tuple(name.strip() for name in item.split(","))
    if len(names) != 2 or not all(names):
        raise InputError(f"--geo takes LATITUDE,LONGITUDE column names, got {item!r}")
    return names  # type: ignore[return-value]


def parse_conditions(items: list[str] | None) -> dict[str, str] | None:
    """`--condition income='>50K'` → {"income": ">50K"}; values stay strings (matched by text)."""
    if not items:
        return None
    out = {}
    for item in items:
        column, sep, value = item.partition("=")
        if not sep or not column:
            raise InputError(f"--condition takes COLUMN=VALUE, got {item!r}")
        out[column] = value
    return out


def _synth_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "epsilon": args.epsilon,
        "delta": args.delta,
        "seed": args.seed,
        "accountant": args.accountant,
    }
    if getattr(args, "device", None) is not None:
        kwargs["device"] = args.device
    if getattr(args, "threads", None) is not None:
        kwargs["threads"] = args.threads
    for key in ("recipe", *LOOP_FLAGS, "noise_multiplier"):
        if getattr(args, key, None) is not None:
            kwargs[key] = getattr(args, key)
    if getattr(args, "schema_from_data_without_dp", False):
        kwargs["schema_from_data_without_dp"] = True
    if getattr(args, "condition_column", None):
        kwargs["condition"] = args.condition_column
    if getattr(args, "no_label_model", False):
        kwargs["label_model"] = False
    if getattr(args, "marginal_anchor", None) is not None:
        kwargs["marginal_anchor"] = args.marginal_anchor
    if getattr(args, "pair_anchor", None) is not None:
        kwargs["pair_anchor"] = True
        kwargs["pair_budget_fraction"] = args.pair_anchor
    if getattr(args, "no_pair_anchor", False):
        kwargs["pair_anchor"] = False
    if getattr(args, "label_model_kind", None) is not None:
        kwargs["label_model_kind"] = args.label_model_kind
    if getattr(args, "binary_codes", False):
        kwargs["binary_codes"] = True
    if getattr(args, "geo", None):
        kwargs["geo_pairs"] = tuple(_geo_pair(item) for item in args.geo)
    if getattr(args, "clipping_groups", None) is not None:
        kwargs["clipping_groups"] = args.clipping_groups
    if getattr(args, "adaptive_clip_quantile", None) is not None:
        kwargs["adaptive_clip_quantile"] = args.adaptive_clip_quantile
    for key in ("select_checkpoints", "select_top", "selection_budget_fraction"):
        if getattr(args, key, None) is not None:
            kwargs[key] = getattr(args, key)
    return kwargs


# ---------------------------------------------------------------- output


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:  # noqa: ANN001
    """dpgan's own warnings as one line each on stderr; other libraries' warnings are not the user's concern."""
    if issubclass(category, DPGanWarning):
        print(f"dpgan: warning: {message}", file=sys.stderr)


def _print_report_warning(report: dict[str, Any]) -> None:
    if report.get("warning"):
        print("WARNING: " + report["warning"])


# ---------------------------------------------------------------- commands


def cmd_fit(args: argparse.Namespace) -> int:
    _check_budget(args)
    if args.kind != "table" and int(os.environ.get("WORLD_SIZE") or 1) > 1:
        raise InputError("a distributed fit (torchrun) is for tables only: fit series and images in one process")
    if args.kind == "sequence":
        return _fit_sequence(args)
    if args.kind == "image":
        from dpgan.cli_images import fit_image

        return fit_image(args, loop_settings(args))
    if args.recipe is not None and args.recipe not in RECIPES:
        raise InputError(f"--recipe {args.recipe} is an image recipe; table recipes: {', '.join(RECIPES)}")
    if args.classes is not None or args.unconditional:
        raise InputError("--classes and --unconditional need --kind image")
    sequence_only = ("id_column", "time_column", "length", "label_column", "entity_column", "value_columns")
    if any(getattr(args, k) is not None for k in sequence_only) or args.critic != "mlp":
        raise InputError(
            "--id-column, --time-column, --length, --label-column, --entity-column, --value-columns, --critic "
            "need --kind sequence"
        )
    from dpgan.tables.parquet_source import ParquetSource, should_stream

    source = ParquetSource(args.data, memory_budget_mb=args.memory_budget_mb)
    # public inputs only: a directory of Parquet files, or --stream (never the file's size: a row could tip it)
    streamed = should_stream(args.data, args.stream)
    if streamed:
        source.files()  # a missing path, an empty directory or a non-Parquet file: refused now
    data_path = source.path if streamed else check_readable(args.data)
    schema_path = _check_file(args.schema, "schema file") if args.schema else None
    out = check_model_destination(args.out, args.overwrite)  # before any private row is read
    categorical, bounds, categories = _categorical(args.categorical), _bounds(args.bounds), _categories(args.categories)
    if schema_path is not None and (categorical or bounds or categories):
        raise InputError(
            "--categorical, --categories and --bounds describe a table without a schema: write them into it"
        )

    from dpgan.tables.schema import Schema

    schema = Schema.from_json(schema_path) if schema_path is not None else None  # before PyTorch loads

    from dpgan.privacy.distributed import process_group_context
    from dpgan.synthesizers import TabularSynthesizer
    from dpgan.tables.table_io import read_private_table

    synth = TabularSynthesizer(**_synth_kwargs(args))  # checks the remaining settings before reading data
    context = process_group_context(
        device=str(synth.device)
    )  # under torchrun: every rank fits, rank 0 alone prints and writes
    if streamed and context.distributed:
        raise InputError("a Parquet table read in batches is fitted in one process: run it without torchrun")
    try:
        data = source if streamed else read_private_table(data_path)
        return _fit_table(args, synth, data, schema, out, context.is_main)
    finally:
        if context.distributed:
            import torch.distributed

            torch.distributed.destroy_process_group()


def _fit_table(args: argparse.Namespace, synth: Any, data: Any, schema: Any, out: Path, main: bool) -> int:
    """The table fit of `cmd_fit` on this rank (`main`: the one that prints and writes)."""
    categorical, bounds, categories = _categorical(args.categorical), _bounds(args.bounds), _categories(args.categories)
    if not main:
        warnings.simplefilter("ignore", DPGanWarning)
    synth.fit(
        data,
        schema=schema,
        target=args.target,
        categorical=categorical,
        bounds=bounds,
        categories=categories,
        strict=args.strict,
        keep_identifiers=args.keep_identifier_columns,
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
    print(f"saved model to {out}: ε={report['epsilon']:.4f}, δ={report['delta']:g} ({report['accountant']})")
    _print_report_warning(report)
    return 0


def _fit_sequence(args: argparse.Namespace) -> int:
    """`dpgan fit --kind sequence`: a long table of series (one row per reading) with a sequence
    schema, or the columns' roles given as options; bounds and labels not given (--bounds,
    --categories, or null in the schema) are estimated with DP in the fit's ledger."""
    data_path = check_readable(args.data)
    schema_path = _check_file(args.schema, "schema file") if args.schema else None
    out = check_model_destination(args.out, args.overwrite)  # before any private row is read
    bounds, categories = _bounds(args.bounds), _categories(args.categories)
    if schema_path is not None and (bounds or categories):
        raise InputError("--bounds and --categories describe series without a schema: write them into it")

    from dpgan.sequences.schema import SequenceSchema, schema_from_options
    from dpgan.tables.table_io import read_header

    if schema_path is not None:
        schema = SequenceSchema.from_json(schema_path)
    else:
        names, _ = read_header(data_path)
        schema = schema_from_options(
            names,
            id=_names(args.id_column, "--id-column"),
            time=args.time_column,
            length=args.length,
            bounds=bounds,
            label=args.label_column,
            categories=categories,
            entity=args.entity_column,
            max_series_per_entity=args.max_series_per_entity,
            value_columns=_names(args.value_columns, "--value-columns"),
        )

    from dpgan.synthesizers import SequenceSynthesizer
    from dpgan.tables.table_io import read_private_table

    settings = loop_settings(args)
    synth = SequenceSynthesizer(
        epsilon=args.epsilon,
        delta=args.delta,
        accountant=args.accountant,
        seed=args.seed,
        noise_multiplier=args.noise_multiplier,
        critic=args.critic,
        device=args.device,
        threads=args.threads,
        **settings,
    )
    synth.fit(read_private_table(data_path), schema, progress=ProgressBar(not args.quiet, args.accountant))
    synth.save(out, overwrite=args.overwrite)
    report = synth.privacy_report()
    print(f"saved model to {out}: ε={report['epsilon']:.4f}, δ={report['delta']:g} ({report['accountant']})")
    print(f"unit of privacy: {report['unit_of_privacy']}")
    if report["dp_schema"]:
        print(f"schema: {report['schema_source']}")
    print(f"{synth.unit_summary()} (noisy counts)")
    return 0


def _evaluate_sequences(args: argparse.Namespace) -> int:
    """`dpgan evaluate --kind sequence`: three long tables of series, the schema from --schema or
    the --model that made the synthetic ones; writes metrics.json and report.html."""
    if args.model is None and args.schema is None:
        raise InputError("--kind sequence needs the sequence schema: --schema S.json or --model MODEL_DIR")
    if args.model is not None:
        _check_model_dir(args.model)

    from dpgan.evaluation.evaluate import save_metrics
    from dpgan.evaluation.headline import headline_line
    from dpgan.evaluation.sequence_report import write_sequence_report
    from dpgan.evaluation.sequences import evaluate_sequences
    from dpgan.sequences.codec import label_names, read_long, unscale
    from dpgan.sequences.schema import SequenceSchema
    from dpgan.synthesizers import SequenceSynthesizer, load_model
    from dpgan.tables.table_io import read_table

    model = load_model(args.model) if args.model is not None else None
    if model is not None and not isinstance(model, SequenceSynthesizer):
        raise InputError("--model is a table model; --kind sequence needs a sequence model")
    schema = SequenceSchema.from_json(_check_file(args.schema, "schema file")) if args.schema else model.schema  # type: ignore[union-attr]
    assert schema is not None
    arrays, labels = [], []
    for path in (args.real, args.synthetic, args.test):
        series = read_long(read_table(path), schema)
        arrays.append(unscale(series.values, schema))
        labels.append(label_names(series.labels, schema))
    metrics = evaluate_sequences(
        *arrays, real_labels=labels[0], synthetic_labels=labels[1], test_labels=labels[2], seed=args.seed
    )
    if model is not None:
        metrics["privacy"] = model.privacy_report() | {"model_dir": str(args.model)}
    out = Path(args.out)
    metrics_path = save_metrics(metrics, out / "metrics.json")
    report_path = write_sequence_report(out / "report.html", metrics, *arrays, schema.value_names)
    dtw = metrics["dtw_nearest"]
    print(f"wrote {metrics_path} and {report_path}")
    print(headline_line(metrics))
    print(
        f"DTW to the nearest real series: synthetic {_short(dtw['synthetic_mean'])}, "
        f"held-out floor {_short(dtw['heldout_mean'])}; membership AUC {_short(metrics['membership_auc'])}"
    )
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    data_path = check_readable(args.data)
    out = Path(args.out)
    if out.suffix.lower() != ".json":
        raise InputError(f"--out must end in .json, not {out.name!r}")
    if out.exists() and not args.overwrite:
        raise InputError(f"{out} exists; pass --overwrite to replace it")
    if args.template:
        if args.epsilon is not None:
            raise InputError("--template reads no values and spends no budget: drop --epsilon")
        from dpgan.tables.schema_template import schema_template
        from dpgan.tables.table_io import read_header

        names, declared = read_header(data_path)
        out.write_text(json.dumps(schema_template(names, declared, target=args.target), indent=1) + "\n")
        print(
            f"wrote a schema template for {len(names)} columns to {out} (no values read): fill in its kinds and domains"
        )
        return 0
    if args.epsilon is None:
        raise InputError("give --epsilon to learn the schema with DP, or --template to write one to fill in by hand")
    _check_budget(args)
    categorical, bounds, categories = _categorical(args.categorical), _bounds(args.bounds), _categories(args.categories)

    from dpgan.tables.preparation import buy_schema
    from dpgan.tables.table_io import read_private_table

    schema, notes = buy_schema(
        read_private_table(data_path),
        epsilon=args.epsilon,
        delta=args.delta,
        accountant=args.accountant,
        target=args.target,
        categorical=categorical,
        bounds=bounds,
        categories=categories,
        seed=args.seed,
    )
    for note in notes:
        print(f"dpgan: note: {note}", file=sys.stderr)
    schema.to_json(out)
    print(
        f"wrote a schema learned with DP (ε={args.epsilon:g}, δ={args.delta:g}) to {out}; a fit with it counts "
        "this purchase in its own ledger. Inspect and edit it freely."
    )
    return 0


def cmd_sample(args: argparse.Namespace) -> int:
    _check_model_dir(args.model)
    if not (Path(args.model) / METADATA).is_file():  # before --out is judged by a kind it may not be
        raise InputError(f"{args.model} is not a dpgan model (it has no {METADATA}): give a directory written by fit")
    _positive(args.n, "-n", integer=True)
    if args.n > MAX_SAMPLE_ROWS:
        raise InputError(f"-n {args.n} is too large; sample at most {MAX_SAMPLE_ROWS} rows per call")
    if model_kind(args.model) == "image":
        from dpgan.cli_images import check_image_destination, sample_image

        out = check_image_destination(args.out, args.overwrite)  # before the model and PyTorch load
        from dpgan.synthesizers import load_model

        return sample_image(load_model(args.model), out, args)
    out = check_writable(args.out)
    if out.is_dir():
        raise InputError(f"output {out} is a directory: give a file name ending in .csv or .parquet")
    if out.exists() and not args.overwrite:
        raise InputError(f"{out} exists; pass --overwrite to replace it")
    conditions = parse_conditions(args.condition)

    from dpgan.synthesizers import SequenceSynthesizer, load_model
    from dpgan.tables.table_io import write_table

    synth = load_model(args.model)
    if isinstance(synth, SequenceSynthesizer):  # -n series, written as a long table
        if args.region_points:
            raise InputError("--region-points applies to table models")
        label = None
        if conditions:
            column, label = next(iter(conditions.items()))
            if len(conditions) > 1 or column != synth.schema.label:  # type: ignore[union-attr]
                raise InputError("a sequence model takes one --condition, on its label column")
        frame = synth.sample(args.n, seed=args.seed, label=label)
        write_table(frame, out)
        print(f"wrote {args.n} series ({len(frame)} rows) to {out}")
        return 0
    # streamed chunk by chunk into a file renamed into place when complete: memory flat in -n
    synth.sample_to(out, args.n, seed=args.seed, conditions=conditions, region_points=args.region_points or ())
    print(f"wrote {args.n} rows to {out}")
    return 0


def cmd_inspect(args: argparse.Namespace) -> int:
    _check_model_dir(args.model)
    from dpgan.inspection import inspect_model

    report = inspect_model(args.model)
    if args.json:
        print(json.dumps(report, indent=1, default=str))
        return 0
    if report.get("certified") is False:
        print(f"NOT certified: no ε is claimed for this model ({report['reason']})")
        print(f"recipe: {report['recipe']}; ledger entries (the label release only): {len(report['ledger'])}")
        return 0
    print(f"ε = {report['epsilon']:.4f} at δ = {report['delta']:g} ({report['accountant']} accountant)")
    print(f"  RDP: {report['epsilon_by_accountant']['rdp']:.4f}   PLD: {report['epsilon_by_accountant']['pld']:.4f}")
    print("ledger (every read of the private table):")
    for e in report["events"]:
        print(f"  {e['name']}: {e['mechanism_text']}, ×{e['count']}, ε alone={e['epsilon_alone']:.4f}")
    _print_report_warning(report)
    if "schema_source" in report:
        print(f"schema: {report['schema_source']}")
    if report.get("kind") == "image":
        print(f"recipe: {report['recipe']}; unit of privacy: {report['unit_of_privacy']}")
    if "units_summary" in report:
        print(f"units read (noisy counts): {report['units_summary']}")
    if "repairs_summary" in report:
        print(f"cells mapped into the schema (noisy counts): {report['repairs_summary']}")
    if "input_rule" in report:
        print(f"input rule: {report['input_rule']}")
    return 0


def cmd_privacy(args: argparse.Namespace) -> int:
    if not 0.0 < args.sample_rate <= 1.0:
        raise InputError("--sample-rate must be in (0, 1]")
    if args.steps <= 0:
        raise InputError("--steps must be positive")
    if (args.noise_multiplier is None) == (args.epsilon is None):
        raise InputError("give exactly one of --noise-multiplier (to get ε) or --epsilon (to get σ)")
    _check_budget(args)
    from dpgan.privacy.accounting import epsilon_of
    from dpgan.privacy.calibration import calibrate_noise_multiplier
    from dpgan.privacy.releases import sampled_steps_event

    if args.noise_multiplier is not None:
        entry = sampled_steps_event("dp-sgd", args.noise_multiplier, sampling_rate=args.sample_rate, count=args.steps)
        result: dict[str, Any] = {
            "rdp": epsilon_of([entry], args.delta, "rdp"),
            "pld": epsilon_of([entry], args.delta, "pld"),
        }
        if args.accountant == "rdp-classic":
            result["rdp_classic"] = epsilon_of([entry], args.delta, "rdp-classic")
    else:
        sigma = calibrate_noise_multiplier(
            sample_rate=args.sample_rate,
            steps=args.steps,
            epsilon=args.epsilon,
            delta=args.delta,
            accountant=args.accountant,
        )
        result = {"noise_multiplier": sigma, "accountant": args.accountant}
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key}: {value}")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    _check_budget(args)
    from dpgan import datasets
    from dpgan.evaluation.utility import balanced_rf_accuracy, tstr_accuracy
    from dpgan.synthesizers import TabularSynthesizer
    from dpgan.tables.schema import Schema
    from dpgan.tables.table_io import write_table

    out = Path(args.out_dir)
    train, test = datasets.load_adult()
    schema = Schema.from_json(datasets.adult_schema_path())
    print(f"UCI Adult: {len(train)} training rows, {len(test)} test rows; ε={args.epsilon}, δ={args.delta:g}")
    started = time.time()
    synth = TabularSynthesizer(**_synth_kwargs(args))
    synth.fit(train, schema=schema, progress=ProgressBar(not args.quiet, args.accountant))
    fit_seconds = time.time() - started
    synthetic = synth.sample(len(train), seed=args.seed)
    write_table(synthetic, out / "adult-synthetic.csv")
    synth.save(out / "model", overwrite=True)
    report = synth.privacy_report()
    print(f"fit in {fit_seconds:.0f} s; wrote {len(synthetic)} synthetic rows to {out / 'adult-synthetic.csv'}")
    print(
        f"privacy spent: ε={report['epsilon']:.4f} at δ={report['delta']:g} ({report['accountant']}); "
        f"RDP bound {report['epsilon_by_accountant']['rdp']:.4f}"
    )
    for event in report["events"]:
        print(f"  - {event['name']}: ε alone {event['epsilon_alone']:.4f}")
    target = schema.target or "income"
    rows = [
        ("random forest accuracy on the real test set", tstr_accuracy),
        ("balanced random forest accuracy (dp-GAN protocol)", balanced_rf_accuracy),
    ]
    print("utility check (train on the rows named, test on real test rows):")
    for label, metric in rows:
        real, synth_score = metric(train, test, target), metric(synthetic, test, target)
        shown = "n/a (one class)" if synth_score is None else f"{synth_score:.3f}"
        print(f"  {label}: real {real:.3f}, synthetic {shown}")
    return 0


def cmd_evaluate(args: argparse.Namespace) -> int:
    if args.kind == "image":
        from dpgan.cli_images import evaluate_image

        return evaluate_image(args)
    for path in (args.real, args.synthetic, args.test):
        check_readable(path)
    if args.kind == "sequence":
        return _evaluate_sequences(args)
    if args.target is None:
        raise InputError("--target names the column to predict in the utility tests (tables)")
    schema_path = _check_file(args.schema, "schema file") if args.schema else None
    if args.model is not None:
        _check_model_dir(args.model)
    if args.jobs < 1:
        raise InputError(f"--jobs must be a positive number of cores, not {args.jobs}")
    if args.audit and args.model is None:
        raise InputError("--audit audits the model that made the synthetic table: give --model")
    from dpgan.evaluation.evaluate import evaluate, save_metrics
    from dpgan.evaluation.headline import headline_line
    from dpgan.evaluation.report import write_report
    from dpgan.tables.schema import Schema
    from dpgan.tables.table_io import read_table

    schema = Schema.from_json(schema_path) if schema_path is not None else None
    real, synthetic, test = (read_table(p, schema) for p in (args.real, args.synthetic, args.test))
    progress = StageProgress(not args.quiet)
    attack_config = None
    if args.attacks:
        from dpgan.evaluation.attacks import AttackConfig

        knobs = {"n_shadow": args.attack_shadows, "n_test_runs": args.attack_test_runs, "epochs": args.attack_epochs}
        attack_config = AttackConfig(seed=args.seed, **{k: v for k, v in knobs.items() if v is not None})
    try:
        metrics = evaluate(
            real, synthetic, test, args.target, schema=schema, model_dir=args.model, attacks=args.attacks,
            attack_config=attack_config, progress=progress, seed=args.seed, n_jobs=args.jobs,
        )  # fmt: skip
        if args.audit:
            metrics["audit"] = evaluation_audit(args.model, args.seed, progress)
        out = Path(args.out)
        metrics_path = save_metrics(metrics, out / "metrics.json")
        report_path = write_report(metrics, out / "report.html", real=real, synthetic=synthetic, progress=progress)
    finally:
        progress.close()
    print(f"wrote {metrics_path} and {report_path}")
    print(headline_line(metrics))
    fidelity = metrics["fidelity"]
    mean = metrics["utility_summary"]["mean"]
    name = "accuracy" if "accuracy" in mean else "r2"
    print(
        f"mean {name} over models: synthetic {_short(mean[name]['tstr'])}, real {_short(mean[name]['trtr'])}; "
        f"JSD {_short(fidelity['jsd_mean'])}, WD {_short(fidelity['wd_mean'])}, "
        f"association diff {_short(fidelity['association_diff'])}"
    )
    return 0


def _short(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def cmd_audit(args: argparse.Namespace) -> int:
    """`dpgan audit`: an empirical lower bound on ε next to the claimed ε (dpgan.evaluation.audit)."""
    if (args.model is None) == (args.epsilon is None):
        raise InputError("give a MODEL_DIR or --epsilon E (a configuration to audit), not both")
    configuration = {
        "delta": args.delta, "recipe": args.recipe, "rows": args.rows, "batch_size": args.batch_size,
        "epochs": args.epochs, "schema": args.schema, "accountant": args.accountant,
    }  # fmt: skip
    given = {key: value for key, value in configuration.items() if value is not None}
    if args.model is not None:
        _check_model_dir(args.model)
        if given:
            flags = ", ".join("--" + key.replace("_", "-") for key in given)
            raise InputError(f"{flags} describe a configuration to audit; a MODEL_DIR has its own")
    _check_budget(args)
    _positive(args.rows, "--rows", integer=True)
    _positive(args.trials, "--trials", integer=True)
    _positive(args.steps, "--steps", integer=True)
    if args.schema is not None:
        _check_file(args.schema, "schema file")
    from dpgan.evaluation.audit import audit_config, audit_model

    bar = StageProgress(not args.quiet)
    options = {
        "mode": args.mode, "trials": args.trials, "steps": args.steps, "sample_rate": args.sample_rate,
        "ablate": args.ablate, "confidence": args.confidence, "seed": args.seed,
        "progress": lambda done, total: bar(f"audit: {args.mode}", done, total),
    }  # fmt: skip
    try:
        if args.model is not None:
            result = audit_model(args.model, **options)
        else:
            result = audit_config(epsilon=args.epsilon, **given, **options)
    finally:
        bar.close()
    print(json.dumps(result.to_dict(), indent=1) if args.json else result.to_text())
    return 0


def _audit_options(audit: argparse.ArgumentParser) -> None:
    audit.add_argument(
        "model",
        nargs="?",
        help="saved model directory: a table, sequence or image (dcgan, dp-cgan) model; its settings are audited, "
        "never data",
    )
    audit.add_argument("--epsilon", type=float, help="audit a configuration instead: its target ε")
    audit.add_argument("--delta", type=float, help="with --epsilon (default: 1e-5)")
    audit.add_argument("--recipe", choices=list(RECIPES), help="with --epsilon (default: dp-gan)")
    audit.add_argument("--rows", type=int, help="with --epsilon: table size N (default: 32561, Adult's)")
    audit.add_argument(
        "--batch-size",
        type=int,
        help=f"with --epsilon (default: {_number(LOOP_DEFAULTS['table']['batch_size'])}, "
        f"dtgan-g {_number(DTGAN_G_LOOP['batch_size'])}; at most {MAX_SAMPLE_RATE:.0%}% of --rows)",
    )
    audit.add_argument(
        "--epochs",
        type=float,
        help=f"with --epsilon (default: {_number(LOOP_DEFAULTS['table']['epochs'])}, "
        f"dtgan-g {_number(DTGAN_G_LOOP['epochs'])})",
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


def evaluation_audit(model_dir: str | Path, seed: int, progress: Any) -> dict[str, Any]:
    """`evaluate --audit`: the default audit of the model, for metrics.json and the report."""
    from dpgan.evaluation.audit import audit_model

    result = audit_model(model_dir, seed=seed, progress=lambda done, total: progress("audit", done, total))
    return result.to_dict()


# ---------------------------------------------------------------- the parser


class _Parser(argparse.ArgumentParser):
    """argparse, with its usage errors as one line like every other error (exit code 2)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"dpgan: error: {message} (see {self.prog} --help)", file=sys.stderr)
        sys.exit(2)


class _HelpFormatter(argparse.HelpFormatter):
    """Shows "(default: X)" after an option's help when it has a meaningful default and the help
    does not state one itself (a default given as a rule, e.g. per data kind, is written in the help)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        stated = "%(default)" in text or "default:" in text
        if not stated and default not in (None, False, argparse.SUPPRESS) and action.option_strings:
            text += " (default: %(default)s)"
        return text


# The loop's defaults per data kind, shown in `fit --help` as numbers. cli.py cannot import them (that
# would load PyTorch before the arguments are checked): tests/test_cli_help.py pins them to
# TrainingConfig, the recipes, SEQUENCE_DEFAULTS and IMAGE_DEFAULTS.
LOOP_DEFAULTS: dict[str, dict[str, float]] = {
    "table": {"epochs": 60.0, "batch_size": 1024, "max_steps": 0, "max_examples": 0},
    "sequence": {"epochs": 60.0, "batch_size": 256, "max_steps": 0, "max_examples": 0},
    "image": {"epochs": 200.0, "batch_size": 1024, "max_steps": 0, "max_examples": 1_024_000},
}
DTGAN_G_LOOP = {"epochs": 10.0, "batch_size": 64}  # the one table recipe with its own loop
MAX_SAMPLE_RATE = 0.05  # the expected batch is at most this share of the rows (TrainingConfig.max_sample_rate)
PAIR_SHARE = 0.3  # --pair-anchor's default share of ε (TrainingConfig.pair_budget_fraction)
LABEL_MODEL_KINDS = ("auto", "dp-sgd", "pair-tables")  # dpgan.training.config.LABEL_MODEL_KINDS


def _number(value: float) -> str:
    """1024 → "1,024", 60.0 → "60": a default as a person reads it."""
    return f"{int(value):,}" if float(value).is_integer() else f"{value:g}"


def _per_kind(key: str) -> str:
    """The default rule in numbers, e.g. `1,024 for tables (dtgan-g: 64), 256 for series, 1,024 for images`."""
    table = f"{_number(LOOP_DEFAULTS['table'][key])} for tables"
    if key in DTGAN_G_LOOP:
        table += f" (dtgan-g: {_number(DTGAN_G_LOOP[key])})"
    return (
        f"{table}, {_number(LOOP_DEFAULTS['sequence'][key])} for series, "
        f"{_number(LOOP_DEFAULTS['image'][key])} for images"
    )


def _option_groups(parser: argparse.ArgumentParser, *keys: str) -> dict[str, Any]:
    """The help's sections, in this order: what every kind shares, then each kind's own, then the
    loop and the published options that are off by default."""
    sections = {
        "data": ("data", "the private input and its public description (costs no budget)"),
        "budget": ("budget", "the (ε, δ) guarantee and how ε is computed"),
        "output": ("output", None),
        "compute": ("compute", None),
        "tables": ("tables (--kind table, the default)", None),
        "series": ("series (--kind sequence)", "a long table, one row per reading"),
        "images": ("images (--kind image)", "an .npz (arrays 'images' [+ 'labels']) or a folder of PNGs"),
        "loop": (
            "training loop",
            f"the expected batch is at most {MAX_SAMPLE_RATE:.0%} of the rows; steps T = ⌈epochs·N/L⌉, then the caps",
        ),
        "advanced": ("advanced", "published options, off by default"),
    }
    return {key: parser.add_argument_group(*sections[key]) for key in keys}


def _budget_options(g: dict[str, Any], epsilon_default: float | None) -> None:
    """The budget, loop, table and advanced options of `fit` and `demo`; `g` maps a section name
    (`_option_groups`) to its argument group. Help strings go through argparse's %-formatting, so a
    percent sign is written %% (`{rate:.0%}%` prints "5%")."""
    budget, loop, tables, advanced = g["budget"], g["loop"], g["tables"], g["advanced"]
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
        "--recipe",
        choices=list(dict.fromkeys([*RECIPES, *IMAGE_RECIPES])),
        help="training recipe (default: dp-gan for tables, dcgan for images; series have one; see README 'Recipes')",
    )
    loop.add_argument(
        "--epochs",
        type=float,
        help=f"passes over the data; σ is calibrated to land on ε (default: {_per_kind('epochs')})",
    )
    loop.add_argument(
        "--batch-size",
        type=int,
        help=f"expected Poisson batch size L, q = L/N (default: {_per_kind('batch_size')}; "
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
        help="at most E per-example gradients, T ≤ ⌈E/L⌉ (default: 0, no cap, for tables and series; "
        f"{_number(LOOP_DEFAULTS['image']['max_examples'])} for images)",
    )
    tables.add_argument(
        "--condition-column", help="categorical column to condition on (conditional recipes: the target)"
    )
    tables.add_argument(
        "--no-label-model",
        action="store_true",
        help="keep the generator's own target column (no DP classifier redraws it)",
    )
    tables.add_argument(
        "--label-model-kind",
        choices=list(LABEL_MODEL_KINDS),
        default=None,
        help="dp-sgd: a classifier on its own share of ε; pair-tables: naive Bayes from the 2-way tables (no ε); "
        "auto: pair-tables when the 2-way tables measure the target, else dp-sgd (default: auto)",
    )
    tables.add_argument(
        "--marginal-anchor",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="spend 5%% of ε on DP one-way statistics that warm-start and anchor G "
        "(default: on for dtgan-g only; --no-marginal-anchor runs dtgan-g as in the paper)",
    )
    tables.add_argument(
        "--pair-anchor",
        type=float,
        nargs="?",
        const=PAIR_SHARE,
        default=None,
        metavar="SHARE",
        help="spend SHARE of ε on DP 2-way tables of every pair of columns that warm-start and anchor G, so "
        f"that it learns how columns depend on each other (default: on, SHARE {PAIR_SHARE:g})",
    )
    tables.add_argument(
        "--no-pair-anchor",
        action="store_true",
        help="no 2-way tables: G learns how columns go together from the critic alone (as the papers' recipes)",
    )
    tables.add_argument(
        "--geo",
        action="append",
        metavar="LAT,LON",
        help="model a latitude and a longitude column as one 2-D column (a grid of their bins; repeatable)",
    )
    tables.add_argument(
        "--binary-codes",
        action="store_true",
        help="code integer columns of at most 16 public levels as bits instead of bins (Boob et al.; default: off)",
    )
    advanced.add_argument(
        "--clipping-groups",
        choices=["none", "per-layer"],
        default=None,
        help="per-layer: clip each critic layer to C/sqrt(k) with its own noise (same ε; default: none)",
    )
    advanced.add_argument(
        "--adaptive-clip-quantile",
        type=float,
        default=None,
        metavar="Q",
        help="move the clipping norm towards this quantile of the records' gradient norms, from a noisy "
        "count inside each step's ε (Andrew et al. 2021; default: off)",
    )
    advanced.add_argument(
        "--select-checkpoints",
        type=int,
        default=None,
        metavar="K",
        help="keep G at K evenly spaced steps and release the best on a held-out 10%% of the rows, chosen "
        "by the exponential mechanism (Boob et al.; default: off)",
    )
    advanced.add_argument(
        "--select-top",
        type=int,
        default=None,
        metavar="Q",
        help="with --select-checkpoints: release the union of the top Q generators' samples (default: 1)",
    )
    advanced.add_argument(
        "--selection-budget-fraction",
        type=float,
        default=None,
        metavar="F",
        help="with --select-checkpoints: the selection's share of ε (default: 0.05)",
    )


def _hint_options(p: argparse.ArgumentParser) -> None:
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


def _compute_options(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """--threads and --verbose, on every command that trains or evaluates (dpgan.threads)."""
    parser.add_argument(
        "--threads",
        metavar="N|auto",
        help=f"CPU threads for PyTorch and BLAS (default: ${ENVIRONMENT}, else auto: the cores other jobs "
        "leave free, re-read as the fit runs; small networks thrash on a core another job holds)",
    )
    parser.add_argument("--verbose", action="store_true", help="print the compute settings chosen (threads)")
    return parser


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="dpgan", description="Differentially private synthetic data with GANs.", formatter_class=_HelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"dpgan {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    def command(name: str, help_text: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=help_text, description=help_text, formatter_class=_HelpFormatter)

    demo = command("demo", "fit on the bundled UCI Adult at ε=3 and check utility (about 2 minutes on 2 cores)")
    g = _option_groups(demo, "budget", "output", "compute", "tables", "loop", "advanced")
    _compute_options(g["compute"])
    _budget_options(g, 3.0)
    g["output"].add_argument("--out-dir", default="dpgan-demo", help="where the synthetic CSV and the model go")
    demo.set_defaults(func=cmd_demo)

    fit = command("fit", "fit a DP synthesizer on a table, series or images and save the model")
    g = _option_groups(fit, "data", "budget", "output", "compute", "tables", "series", "images", "loop", "advanced")
    data, output, compute = g["data"], g["output"], g["compute"]
    tables, series, images = g["tables"], g["series"], g["images"]
    data.add_argument(
        "data", help="the private data: a .csv or .parquet table or a Parquet folder; an .npz or PNG folder"
    )
    data.add_argument(
        "--kind",
        choices=["table", "sequence", "image"],
        default="table",
        help="a table of rows, series in a long table, or images (an .npz or a folder of PNGs)",
    )
    data.add_argument("--schema", help="public schema JSON (costs no budget); without it the domain is bought with DP")
    _hint_options(data)
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
    _budget_options(g, None)
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
    _compute_options(compute)
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
    tables.add_argument(
        "--schema-from-data-without-dp",
        action="store_true",
        help="read bounds and categories off the data WITHOUT privacy (the guarantee then excludes the schema)",
    )
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
    series.add_argument("--id-column", help="the column naming each series, or several (district,day) that do together")
    series.add_argument(
        "--value-columns", help="the measured columns A,B,... (default: every column that has no other role)"
    )
    series.add_argument("--time-column", help="the column ordering readings within a series")
    series.add_argument("--length", type=int, help="readings per series (others are dropped, counted)")
    series.add_argument(
        "--label-column",
        help="a label constant along each series (public labels: --categories L=A,B; else released with DP)",
    )
    series.add_argument("--entity-column", help="protect every series of one owner together")
    series.add_argument("--max-series-per-entity", type=int, default=1, help="series kept per entity (public)")
    series.add_argument("--critic", choices=["mlp", "lstm"], default="mlp", help="the critic on a series")
    images.add_argument(
        "--classes", help="the public label list A,B,... (free); without it the label set is released with DP"
    )
    images.add_argument("--unconditional", action="store_true", help="ignore labels (an unconditional GAN)")
    images.add_argument(
        "--image-shape",
        metavar="CxHxW",
        help="the public image shape, e.g. 1x28x28; PNGs of another shape are dropped and counted "
        "(without it a folder's shape is released with DP)",
    )
    fit.set_defaults(func=cmd_fit)

    schema = command("schema", "learn a schema with DP (or write a template) to inspect, edit and reuse with --schema")
    schema.add_argument("data", help="the private table (.csv or .parquet)")
    schema.add_argument("--epsilon", type=float, help="budget for the schema; a fit with it counts this too")
    schema.add_argument("--delta", type=float, default=1e-5, help="δ for the schema's release")
    schema.add_argument("--accountant", default="pld", choices=ACCOUNTANTS, help="how ε is computed")
    schema.add_argument("--seed", type=int, help="reproducible noise, for experiments only")
    schema.add_argument(
        "--template", action="store_true", help="read only the header (names, declared types): no values, no budget"
    )
    _hint_options(schema)
    schema.add_argument("--out", required=True, help="schema JSON to write")
    schema.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
    schema.set_defaults(func=cmd_schema)

    sample = command("sample", "sample rows, series or images from a saved model (post-processing: no privacy cost)")
    _compute_options(sample)
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

    privacy = command("privacy", "ε of Poisson-subsampled Gaussian DP-SGD, or σ for a target ε")
    privacy.add_argument("--sample-rate", type=float, required=True, help="Poisson sampling rate q")
    privacy.add_argument("--steps", type=int, required=True, help="number of noisy steps T")
    privacy.add_argument("--delta", type=float, required=True, help="δ")
    privacy.add_argument("--noise-multiplier", type=float, help="σ (noise std / clipping norm): prints ε")
    privacy.add_argument("--epsilon", type=float, help="target ε: prints the σ that reaches it")
    privacy.add_argument("--accountant", default="pld", choices=ACCOUNTANTS, help="how ε is computed")
    privacy.add_argument("--json", action="store_true", help="print JSON")
    privacy.set_defaults(func=cmd_privacy)

    evaluate = command("evaluate", "utility, fidelity, privacy ledger (and attacks) of a synthetic table")
    _compute_options(evaluate)
    evaluate.add_argument("--real", required=True, help="the real training table the model was fitted on")
    evaluate.add_argument("--synthetic", required=True, help="the synthetic table to evaluate")
    evaluate.add_argument("--test", required=True, help="real rows the model never saw")
    evaluate.add_argument("--target", help="column to predict in the utility tests (tables)")
    evaluate.add_argument(
        "--kind", choices=["table", "sequence", "image"], default="table", help="tables, series or images"
    )
    evaluate.add_argument("--classes", help="image: the label list A,B,... (default: the --model's)")
    evaluate.add_argument("--schema", help="public schema JSON (column kinds)")
    evaluate.add_argument("--model", help="the model directory that generated the synthetic table (its ledger)")
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

    _audit_options(
        _compute_options(command("audit", "an empirical lower bound on ε (privacy audit), next to the claimed ε"))
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # --help, --version, or a usage error already printed as one line
        return int(exit_.code or 0)
    try:
        computes = hasattr(args, "threads")  # the commands that train, sample, evaluate or audit
        threads = resolve_threads(args.threads) if computes else 1
        with warnings.catch_warnings(), fit_threads(threads) if computes else contextlib.nullcontext(1) as started:
            if getattr(args, "verbose", False):
                print(describe_threads(threads, started), file=sys.stderr)
            warnings.showwarning = _show_warning
            warnings.simplefilter("default", DPGanWarning)
            return int(args.func(args))
    except DPGanError as exc:
        print(f"dpgan: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("dpgan: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # last resort: one line, no traceback, no exception text (it may quote data)
        if os.environ.get("DPGAN_DEBUG"):
            raise
        print(f"dpgan: error: unexpected {type(exc).__name__} (DPGAN_DEBUG=1 shows where)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
