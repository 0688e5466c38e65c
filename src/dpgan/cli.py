"""Command line: a thin layer over the library. Errors print one line on stderr, no traceback."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from dpgan.errors import DPGanError, InputError
from dpgan.recipes import RECIPES
from dpgan.schema import Schema


def read_table(path: str | Path, schema: Schema | None = None) -> pd.DataFrame:
    """CSV or Parquet; with a schema, categorical columns of string categories are read as text."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"data file not found: {path}")
    try:
        if path.suffix.lower() == ".parquet":
            frame = pd.read_parquet(path)
        elif path.suffix.lower() in (".csv", ".gz", ".txt"):
            frame = pd.read_csv(path, skipinitialspace=True)
        else:
            raise InputError(f"unsupported data format {path.suffix!r}: use .csv or .parquet")
    except (ValueError, OSError, pd.errors.ParserError) as exc:
        if isinstance(exc, InputError):
            raise
        raise InputError(f"cannot read {path}: {exc}") from None
    if schema is not None:
        for spec in schema.columns:
            if spec.kind == "categorical" and spec.name in frame and all(isinstance(c, str) for c in spec.categories):
                column = frame[spec.name]
                frame[spec.name] = column.where(column.isna(), column.astype(str)).astype(object)
    return frame


def write_table(frame: pd.DataFrame, path: str | Path) -> Path:
    path = Path(path)
    if path.suffix.lower() not in (".csv", ".parquet"):
        raise InputError(f"output must end in .csv or .parquet, not {path.name!r}")
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix.lower() == ".parquet":
        frame.to_parquet(path, index=False)
    else:
        frame.to_csv(path, index=False)
    return path


class _ProgressBar:
    """tqdm bar with steps and the ε spent so far."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self.bar: Any = None

    def __call__(self, step: int, total: int, epsilon: float) -> None:
        if not self.enabled:
            return
        if self.bar is None:
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="step", desc="DP training", file=sys.stderr)
        self.bar.update(step - self.bar.n)
        self.bar.set_postfix_str(f"ε spent ≤ {epsilon:.3f}")
        if step >= total:
            self.bar.close()


def _synth_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "epsilon": args.epsilon,
        "delta": args.delta,
        "seed": args.seed,
        "accountant": args.accountant,
    }
    for key in ("recipe", "epochs", "batch_size", "noise_multiplier"):
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
    return kwargs


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


def cmd_fit(args: argparse.Namespace) -> int:
    from dpgan.synthesizers import TabularSynthesizer

    schema = Schema.from_json(args.schema) if args.schema else None
    synth = TabularSynthesizer(**_synth_kwargs(args))  # checks ε, δ before reading data
    data = read_table(args.data, schema)
    synth.fit(data, schema=schema, progress=_ProgressBar(not args.quiet))
    synth.save(args.out)
    report = synth.privacy_report()
    print(f"saved model to {args.out}: ε={report['epsilon']:.4f}, δ={report['delta']:g} ({report['accountant']})")
    if report.get("warning"):
        print("WARNING: " + report["warning"])
    return 0


def cmd_sample(args: argparse.Namespace) -> int:
    from dpgan.synthesizers import TabularSynthesizer

    synth = TabularSynthesizer.load(args.model)
    frame = synth.sample(args.n, seed=args.seed, conditions=parse_conditions(args.condition))
    write_table(frame, args.out)
    print(f"wrote {len(frame)} rows to {args.out}")
    return 0


def inspect_model(model_dir: str | Path) -> dict[str, Any]:
    from dpgan.synthesizers import TabularSynthesizer

    synth = TabularSynthesizer.load(model_dir)
    report = synth.privacy_report()
    return report


def cmd_inspect(args: argparse.Namespace) -> int:
    report = inspect_model(args.model)
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    print(f"ε = {report['epsilon']:.4f} at δ = {report['delta']:g} ({report['accountant']} accountant)")
    print(f"  RDP: {report['epsilon_by_accountant']['rdp']:.4f}   PLD: {report['epsilon_by_accountant']['pld']:.4f}")
    print(f"schema: {report['schema_source']}")
    if report.get("warning"):
        print("WARNING: " + report["warning"])
    print("events:")
    for e in report["events"]:
        print(
            f"  {e['name']}: σ={e['noise_multiplier']:.4g}, q={e['sampling_rate']:.4g}, "
            f"×{e['count']}, ε alone={e['epsilon_alone']:.4f}"
        )
    return 0


def cmd_privacy(args: argparse.Namespace) -> int:
    from dpgan.privacy.accounting import LedgerEntry, calibrate_noise_multiplier, check_epsilon_delta, epsilon_of

    if not 0.0 < args.sample_rate <= 1.0:
        raise InputError("--sample-rate must be in (0, 1]")
    if args.steps <= 0:
        raise InputError("--steps must be positive")
    if (args.noise_multiplier is None) == (args.epsilon is None):
        raise InputError("give exactly one of --noise-multiplier (to get ε) or --epsilon (to get σ)")
    if args.noise_multiplier is not None:
        check_epsilon_delta(1.0, args.delta)
        entry = LedgerEntry("dp-sgd", args.noise_multiplier, sampling_rate=args.sample_rate, count=args.steps)
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
    from dpgan import datasets
    from dpgan.evaluation.utility import balanced_rf_accuracy, tstr_accuracy
    from dpgan.synthesizers import TabularSynthesizer

    out = Path(args.out_dir)
    train, test = datasets.load_adult()
    schema = Schema.from_json(datasets.adult_schema_path())
    print(f"UCI Adult: {len(train)} training rows, {len(test)} test rows; ε={args.epsilon}, δ={args.delta:g}")
    started = time.time()
    synth = TabularSynthesizer(**_synth_kwargs(args))
    synth.fit(train, schema=schema, progress=_ProgressBar(not args.quiet))
    fit_seconds = time.time() - started
    synthetic = synth.sample(len(train), seed=args.seed)
    write_table(synthetic, out / "adult-synthetic.csv")
    synth.save(out / "model")
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


class _StageProgress:
    """tqdm bars for `evaluate`: one bar per stage ("utility", "fidelity", ...), on stderr."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self.bar: Any = None
        self.stage: str | None = None

    def __call__(self, stage: str, done: int, total: int) -> None:
        if not self.enabled:
            return
        from tqdm import tqdm

        group = stage.split(":")[0]
        if self.bar is None or group != self.stage:
            self.close()
            self.bar, self.stage = tqdm(total=total, desc=group, file=sys.stderr, leave=True), group
        self.bar.total = max(total, 1)
        self.bar.set_postfix_str(stage[len(group) + 1 :].strip(), refresh=False)
        self.bar.update(done - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def cmd_evaluate(args: argparse.Namespace) -> int:
    from dpgan.evaluation.evaluate import evaluate, save_metrics
    from dpgan.evaluation.report import write_report

    schema = Schema.from_json(args.schema) if args.schema else None
    if args.model is not None and not Path(args.model).is_dir():
        raise InputError(f"model directory not found: {args.model}")
    if args.audit and args.model is None:
        raise InputError("--audit audits the model that made the synthetic table: give --model")
    real, synthetic, test = (read_table(p, schema) for p in (args.real, args.synthetic, args.test))
    progress = _StageProgress(not args.quiet)
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
    from dpgan.evaluation.audit import audit_config, audit_model

    if (args.model is None) == (args.epsilon is None):
        raise InputError("give a MODEL_DIR or --epsilon E (a configuration to audit), not both")
    configuration = {
        "delta": args.delta, "recipe": args.recipe, "rows": args.rows, "batch_size": args.batch_size,
        "epochs": args.epochs, "schema": args.schema, "accountant": args.accountant,
    }  # fmt: skip
    given = {key: value for key, value in configuration.items() if value is not None}
    if args.model is not None and given:
        flags = ", ".join("--" + key.replace("_", "-") for key in given)
        raise InputError(f"{flags} describe a configuration to audit; a MODEL_DIR has its own")
    bar = _StageProgress(not args.quiet)
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


def _add_audit_parser(sub: Any) -> None:
    audit = sub.add_parser("audit", help="empirical lower bound on ε (privacy audit) next to the claimed ε")
    audit.add_argument("model", nargs="?", help="saved model directory (its settings are audited, never data)")
    audit.add_argument("--epsilon", type=float, help="audit a configuration instead: its target ε")
    audit.add_argument("--delta", type=float, help="with --epsilon (default 1e-5)")
    audit.add_argument("--recipe", help="with --epsilon (default dp-gan)")
    audit.add_argument("--rows", type=int, help="with --epsilon: table size N (default 32561, Adult)")
    audit.add_argument("--batch-size", type=int, help="with --epsilon (default: the recipe's)")
    audit.add_argument("--epochs", type=float, help="with --epsilon (default: the recipe's)")
    audit.add_argument("--schema", help="with --epsilon: public schema JSON (default: bundled Adult schema)")
    audit.add_argument("--accountant", help="with --epsilon: calibrates σ (default pld)")
    audit.add_argument("--mode", default="step", help="step (default), one-run or black-box")
    audit.add_argument("--trials", type=int, help="trials per world (step: 10000; black-box: 30 trainings)")
    audit.add_argument("--steps", type=int, help="private steps per trial (step: 1; one-run: the model's T)")
    audit.add_argument("--sample-rate", type=float, help="Poisson rate of the audited steps (step: 1)")
    audit.add_argument("--ablate", help="noise or clipping: switch it off in the audited step (a control)")
    audit.add_argument("--confidence", type=float, default=0.95, help="confidence of the bound (default 0.95)")
    audit.add_argument("--seed", type=int, default=0, help="seed of the audit's own randomness (default 0)")
    audit.add_argument("--json", action="store_true", help="print the result as JSON")
    audit.add_argument("--quiet", action="store_true", help="no progress bar")
    audit.set_defaults(func=cmd_audit)


def evaluation_audit(model_dir: str | Path, seed: int, progress: Any) -> dict[str, Any]:
    """`evaluate --audit`: the default audit of the model, for metrics.json and the report."""
    from dpgan.evaluation.audit import audit_model

    result = audit_model(model_dir, seed=seed, progress=lambda done, total: progress("audit", done, total))
    return result.to_dict()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dpgan", description="Differentially private synthetic data with GANs.")
    sub = parser.add_subparsers(dest="command", required=True)

    def budget(p: argparse.ArgumentParser, epsilon_default: float | None) -> None:
        p.add_argument("--epsilon", type=float, default=epsilon_default, required=epsilon_default is None)
        p.add_argument("--delta", type=float, default=1e-5)
        p.add_argument("--epochs", type=float)
        p.add_argument("--batch-size", type=int)
        p.add_argument("--noise-multiplier", type=float, help="fix σ and train until ε is spent")
        p.add_argument("--accountant", default="pld", choices=["pld", "rdp", "rdp-classic"])
        p.add_argument("--seed", type=int, help="reproducible runs, for experiments only")
        p.add_argument("--quiet", action="store_true", help="no progress bar")
        p.add_argument("--recipe", choices=list(RECIPES), help="training recipe (default dp-gan)")
        p.add_argument(
            "--condition-column", help="categorical column to condition on (conditional recipes: the target)"
        )
        p.add_argument(
            "--no-label-model",
            action="store_true",
            help="keep the generator's own target column (no DP classifier redraws it)",
        )
        p.add_argument(
            "--marginal-anchor",
            action=argparse.BooleanOptionalAction,
            default=None,
            help="spend 5%% of ε on DP one-way statistics that warm-start and anchor G "
            "(default: on for dtgan-g only; --no-marginal-anchor runs dtgan-g as in the paper)",
        )

    demo = sub.add_parser("demo", help="fit on bundled UCI Adult at ε=3 and check utility")
    budget(demo, 3.0)
    demo.add_argument("--out-dir", default="dpgan-demo")
    demo.set_defaults(func=cmd_demo)

    fit = sub.add_parser("fit", help="fit a DP synthesizer on a CSV or Parquet table")
    fit.add_argument("data")
    budget(fit, None)
    fit.add_argument("--schema", help="public schema JSON (costs no budget)")
    fit.add_argument(
        "--schema-from-data-without-dp",
        action="store_true",
        help="read bounds and categories off the data WITHOUT privacy (the guarantee then excludes the schema)",
    )
    fit.add_argument("--out", required=True, help="model directory")
    fit.set_defaults(func=cmd_fit)

    sample = sub.add_parser("sample", help="sample rows from a saved model")
    sample.add_argument("model")
    sample.add_argument("-n", type=int, required=True)
    sample.add_argument("--out", required=True)
    sample.add_argument("--seed", type=int)
    sample.add_argument(
        "--condition",
        action="append",
        metavar="COLUMN=VALUE",
        help="generate rows with this value (conditional models)",
    )
    sample.set_defaults(func=cmd_sample)

    inspect = sub.add_parser("inspect", help="print a saved model's privacy ledger")
    inspect.add_argument("model")
    inspect.add_argument("--json", action="store_true")
    inspect.set_defaults(func=cmd_inspect)

    privacy = sub.add_parser("privacy", help="ε of Poisson-subsampled Gaussian DP-SGD, or σ for a target ε")
    privacy.add_argument("--sample-rate", type=float, required=True)
    privacy.add_argument("--steps", type=int, required=True)
    privacy.add_argument("--delta", type=float, required=True)
    privacy.add_argument("--noise-multiplier", type=float)
    privacy.add_argument("--epsilon", type=float)
    privacy.add_argument("--accountant", default="pld", choices=["pld", "rdp", "rdp-classic"])
    privacy.add_argument("--json", action="store_true")
    privacy.set_defaults(func=cmd_privacy)
    evaluate = sub.add_parser("evaluate", help="utility, fidelity, privacy ledger (and attacks) of a synthetic table")
    evaluate.add_argument("--real", required=True, help="the real training table the model was fitted on")
    evaluate.add_argument("--synthetic", required=True, help="the synthetic table to evaluate")
    evaluate.add_argument("--test", required=True, help="real rows the model never saw")
    evaluate.add_argument("--target", required=True, help="column to predict in the utility tests")
    evaluate.add_argument("--schema", help="public schema JSON (column kinds)")
    evaluate.add_argument("--model", help="the model directory that generated the synthetic table (its ledger)")
    evaluate.add_argument("--attacks", action="store_true", help="also run the privacy attacks (slow)")
    evaluate.add_argument("--attack-shadows", type=int, help="shadow sets per target in the membership attack")
    evaluate.add_argument("--attack-test-runs", type=int, help="fresh test fits per target in the membership attack")
    evaluate.add_argument("--attack-epochs", type=float, help="epochs of the attacks' retrained models (cost knob)")
    evaluate.add_argument("--seed", type=int, default=0, help="seed of the evaluation models")
    evaluate.add_argument("--jobs", type=int, default=1, help="CPU cores for the evaluation models (default 1)")
    evaluate.add_argument("--quiet", action="store_true", help="no progress bars")
    evaluate.add_argument("--out", required=True, help="report directory: metrics.json and report.html")
    evaluate.add_argument("--audit", action="store_true", help="also run the default privacy audit of --model")
    evaluate.set_defaults(func=cmd_evaluate)
    _add_audit_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except DPGanError as exc:
        print(f"dpgan: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("dpgan: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # last resort: one line, no traceback
        print(f"dpgan: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
