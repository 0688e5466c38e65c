"""`dpgan evaluate` (tables and series; images: dpgan.cli.images) and `dpgan audit`."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from dpgan.cli.arguments import check_budget, check_file, check_model_dir, positive
from dpgan.cli.output import StageProgress, short
from dpgan.cli.settings_flags import flag_name
from dpgan.errors import InputError
from dpgan.tables.reading.table_io import check_readable


def cmd_evaluate(args: argparse.Namespace) -> int:
    if args.kind == "image":
        from dpgan.cli.images import evaluate_image

        return evaluate_image(args)
    for path in (args.real, args.synthetic, args.test):
        check_readable(path)
    if args.kind == "sequence":
        return evaluate_sequences_command(args)
    if args.target is None:
        raise InputError("--target names the column to predict in the utility tests (tables)")
    schema_path = check_file(args.schema, "schema file") if args.schema else None
    if args.model is not None:
        check_model_dir(args.model)
    if args.jobs < 1:
        raise InputError(f"--jobs must be a positive number of cores, not {args.jobs}")
    if args.audit and args.model is None:
        raise InputError("--audit audits the model that made the synthetic table: give --model")
    from dpgan.tables.reading.table_io import read_table
    from dpgan.tables.schema.table import Schema

    schema = Schema.from_json(schema_path) if schema_path is not None else None
    real, synthetic, test = (read_table(p, schema) for p in (args.real, args.synthetic, args.test))
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


def evaluate_sequences_command(args: argparse.Namespace) -> int:
    """`dpgan evaluate --kind sequence`: three long tables of series, the schema from --schema or
    the --model that made the synthetic ones; writes metrics.json and report.html."""
    if args.model is None and args.schema is None:
        raise InputError("--kind sequence needs the sequence schema: --schema S.json or --model MODEL_DIR")
    if args.model is not None:
        check_model_dir(args.model)

    from dpgan.evaluation.evaluate import save_metrics
    from dpgan.evaluation.headline import headline_line
    from dpgan.evaluation.sequences.metrics import evaluate_sequences
    from dpgan.evaluation.sequences.report import write_sequence_report
    from dpgan.sequences.codec import label_names, read_long, unscale
    from dpgan.sequences.schema import SequenceSchema
    from dpgan.synthesizers import SequenceSynthesizer, load_model
    from dpgan.tables.reading.table_io import read_table

    model = load_model(args.model) if args.model is not None else None
    if model is not None and not isinstance(model, SequenceSynthesizer):
        raise InputError("--model is a table model; --kind sequence needs a sequence model")
    schema = SequenceSchema.from_json(check_file(args.schema, "schema file")) if args.schema else model.schema  # type: ignore[union-attr]
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
        f"DTW to the nearest real series: synthetic {short(dtw['synthetic_mean'])}, "
        f"held-out floor {short(dtw['heldout_mean'])}; membership AUC {short(metrics['membership_auc'])}"
    )
    return 0


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
        check_model_dir(args.model)
        if given:
            flags = ", ".join(flag_name(key) for key in given)
            raise InputError(f"{flags} describe a configuration to audit; a MODEL_DIR has its own")
    check_budget(args)
    positive(args.rows, "--rows", integer=True)
    positive(args.trials, "--trials", integer=True)
    positive(args.steps, "--steps", integer=True)
    if args.schema is not None:
        check_file(args.schema, "schema file")
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


def evaluation_audit(model_dir: str | Path, seed: int, progress: Any) -> dict[str, Any]:
    """`evaluate --audit`: the default audit of the model, for metrics.json and the report."""
    from dpgan.evaluation.audit import audit_model

    result = audit_model(model_dir, seed=seed, progress=lambda done, total: progress("audit", done, total))
    return result.to_dict()
