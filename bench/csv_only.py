"""dpgan as a new user meets it: a CSV and nothing else, against the same fit with a hand-written schema.

For each table (bench/tables), seed and ε: the train split is written to a CSV and read back as the
CLI reads it (`dpgan.cli.read_table`), then fitted twice at the same ε and seed:
  schema     `fit(frame, schema=<bench/tables/schemas/NAME.json>)`: public domains, written from documentation;
  no-schema  `fit(frame, schema=None)`: the domains are bought with DP (share of ε in the ledger); when
             dpgan's `fit` takes public hints (`target=`), `--hint-target` passes the table's target.
Each fit samples len(train) rows, scored by dpgan's evaluation against the chosen real split
(`--split validation` chooses defaults; `test` is scored once, at the end): TSTR vs TRTR with four
models (accuracy and ROC AUC, or R² for a numeric target), the majority-class baseline, mean JSD and WD,
fit seconds and the ε the ledger spent. A no-schema row also records what the DP-learned schema got
wrong against the hand-written one and the training rows (clamped ranges, categories folded into
(other), kinds). One JSON line per fit goes to bench/results/csv_only_<split>.jsonl.

Big tables: `--max-train-rows` (default 20,000) keeps a seeded uniform subset of the train split, so a fit
stays within minutes on one core (flights: 20,000 of 202,066; diamonds: 20,000 of 32,364), and
`--max-eval-rows` (default 20,000) caps the scored split the same way. A numeric target's missing
values cannot be scored: those rows are left out of the real, synthetic and scored tables (counted).

    python bench/tables/fetch.py                                   # once: archive + CSVs in bench/data/
    python bench/csv_only.py --tables hmda chile --seeds 0 --epsilon 1 --split validation --threads 1
    python bench/csv_only.py --summary bench/results/csv_only_validation.jsonl
"""

from __future__ import annotations

import argparse
import inspect
import json
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from dpgan import Schema, TabularSynthesizer
from dpgan.errors import DPGanError
from dpgan.evaluation import evaluate
from dpgan.evaluation.tables.every_column import every_column_tstr
from dpgan.evaluation.tables.fidelity import as_labels, column_kinds, fidelity, marginal_error, two_way_marginal_error
from dpgan.evaluation.tables.learned_columns import column_gaps
from dpgan.statistics.tables import tree_marginals
from dpgan.tables.fit import marginals as table_marginals
from dpgan.tables.inference import numeric as schema_inference
from dpgan.tables.reading.table_io import read_private_table, read_table, write_table
from dpgan.tables.schema.columns import ColumnSpec
from dpgan.tables.schema.learned import learned_columns
from tables import TABLES, TUNING_TABLES, schema_path, split

DELTA = 1e-5
MODES = ("schema", "no-schema")
RESULTS_DIR = Path(__file__).resolve().parent / "results"
THREE_WAY_SETS = 200  # triples scored by the 3-way marginal error (a fixed seeded draw when there are more)


def fit_accepts_target() -> bool:
    """Whether this dpgan's `fit` takes the public `target=` hint (added after the 'before' numbers)."""
    return "target" in inspect.signature(TabularSynthesizer.fit).parameters


def round_trip(frame: pd.DataFrame, directory: Path, name: str, schema: Schema | None) -> pd.DataFrame:
    """Write a split as a user's CSV and read it back with inferred dtypes (for scoring)."""
    path = write_table(frame, directory / f"{name}.csv")
    return read_table(path, schema)


def without_missing_target(frame: pd.DataFrame, target: str) -> pd.DataFrame:
    return frame[pd.to_numeric(frame[target], errors="coerce").notna()].reset_index(drop=True)


def majority_accuracy(train: pd.DataFrame, scored: pd.DataFrame, target: str) -> float:
    """Accuracy of always predicting the real training set's most frequent class."""
    majority = as_labels(train[target]).value_counts().index[0]
    return float((as_labels(scored[target]) == majority).mean())


def schema_gaps(learned: Schema, hand: Schema, train: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """Per column, what the DP-learned schema says next to the hand-written one and the training rows.

    Diagnostics for the benchmark only (they read the private rows exactly): the share of training
    values the learned bounds clamp, the share of rows folded into (other), kind and null mismatches.
    The shares are the evaluation report's (dpgan.evaluation.tables.learned_columns.column_gaps: a
    date read in its format, a code that falls back to a released parent not counted as folded), and
    "missed" holds the report's notes.
    """
    words = {e["name"]: e for e in learned_columns(learned.to_dict())}
    out: dict[str, dict[str, Any]] = {}
    for spec in learned.columns:
        truth: ColumnSpec = hand[spec.name]
        values = train[spec.name]
        facts, missed = column_gaps(spec, words[spec.name], values, None)
        entry: dict[str, Any] = {"kind": spec.kind, "hand_kind": truth.kind, "nullable": spec.nullable}
        entry["train_nulls"] = round(facts["null"], 4)
        entry["missed"] = missed
        present = 1.0 - facts["null"]
        if spec.is_numeric or spec.is_temporal:
            entry["range"] = [spec.min, spec.max]  # a date's on its scale (days since 1970-01-01)
            entry["clamped_share"] = round(facts["outside"], 4)
        if spec.is_numeric:
            numbers = pd.to_numeric(values, errors="coerce").dropna().to_numpy(dtype=np.float64)
            entry["train_range"] = [float(numbers.min()), float(numbers.max())] if len(numbers) else None
            entry["encoding"] = {"scale": spec.scale, "bins": spec.bins, "point_masses": list(spec.point_masses)}
        elif not spec.is_temporal:
            # among the rows with a value: a boolean cell that reads as no yes/no, or a category not kept
            lost = facts["unreadable"] if spec.kind == "boolean" else facts["folded"]
            entry["categories_kept"] = len(spec.categories) - (spec.other_category is not None)
            entry["train_distinct"] = int(values.dropna().astype(str).nunique())
            entry["other_share"] = round(lost / present, 4) if present > 0 else 0.0
        if truth.is_numeric:
            entry["hand_range"] = [truth.min, truth.max]
        elif truth.kind == "categorical":
            entry["hand_categories"] = len(truth.categories)
        out[spec.name] = entry
    return out


def independent_association_diff(real: pd.DataFrame, schema: Schema, seed: int) -> float:
    """The association difference of a copy of the real rows with each column shuffled on its own:
    the reference a synthesizer that learns no dependence between columns would score."""
    rng = np.random.default_rng(seed)
    shuffled = real.apply(lambda column: column.to_numpy()[rng.permutation(len(column))])
    return float(fidelity(real, shuffled, column_kinds(real, schema))["association_diff"])


def score_synthetic(
    name: str,
    hand: Schema,
    train_schema: pd.DataFrame,
    synthetic: pd.DataFrame,
    scored: pd.DataFrame,
    seed: int,
    threads: int,
    all_targets: bool = False,
) -> dict[str, Any]:
    """The same scores for every system's synthetic rows (dpgan's, or a peer's: bench/peers_compare.py):
    TSTR vs TRTR, one-way JSD/WD, the association difference (and an independent-columns copy's), the
    error on all 2-way marginals."""
    spec = TABLES[name]
    real, scored_rows = train_schema, scored
    dropped = {}
    if spec.task == "regression":
        before = {"real": len(real), "synthetic": len(synthetic), "scored": len(scored_rows)}
        real = without_missing_target(real, spec.target)
        synthetic = without_missing_target(synthetic, spec.target)
        scored_rows = without_missing_target(scored_rows, spec.target)
        after = {"real": len(real), "synthetic": len(synthetic), "scored": len(scored_rows)}
        dropped = {k: before[k] - after[k] for k in before}
    # a column the DP-learned schema made categorical where the hand schema says numeric: its
    # synthetic cells ("(other)") carry no number, so they are scored as missing (counted)
    not_numbers = {}
    for column in hand.columns:
        if column.is_numeric and column.name in synthetic:
            numeric = pd.to_numeric(synthetic[column.name], errors="coerce")
            bad = int((numeric.isna() & synthetic[column.name].notna()).sum())
            if bad:
                synthetic[column.name], not_numbers[column.name] = numeric, bad
    started = time.time()
    metrics = evaluate(real, synthetic, scored_rows, spec.target, schema=hand, seed=seed, n_jobs=threads)
    eval_seconds = time.time() - started
    mean = metrics["utility_summary"]["mean"]
    row: dict[str, Any] = {
        "missing_target_rows_dropped": dropped,
        "synthetic_cells_not_numbers": not_numbers,
        "eval_seconds": round(eval_seconds, 1),
        "jsd_mean": metrics["fidelity"]["jsd_mean"],
        "association_diff": metrics["fidelity"]["association_diff"],
        "association_diff_independent": independent_association_diff(real, hand, seed),
        "two_way_error": two_way_marginal_error(real, synthetic[list(real.columns)], hand),
        # AIM's workload: THREE_WAY_SETS triples drawn by a fixed seed (the same for every system)
        "three_way_error": marginal_error(real, synthetic[list(real.columns)], hand, way=3, max_sets=THREE_WAY_SETS),
        "wd_mean": metrics["fidelity"]["wd_mean"],
        "per_column": {
            column: round(entry["wd"] if "wd" in entry else entry["jsd"], 4)
            for column, entry in metrics["fidelity"]["per_column"].items()
            if entry.get("wd", entry.get("jsd")) is not None
        },
    }
    if all_targets:  # every column in turn as the target (dpgan.evaluation.every_column)
        started = time.time()
        every = every_column_tstr(real, synthetic[list(real.columns)], scored_rows, hand, seed=seed, n_jobs=threads)
        row["every_column_seconds"] = round(time.time() - started, 1)  # not in eval_seconds
        row["every_column"] = every
        for key in ("mean_auc", "mean_r2"):
            for side in ("tstr", "trtr"):
                row[f"every_column_{key[5:]}_{side}"] = None if every[key] is None else every[key][side]
    main_metric = "r2" if spec.task == "regression" else "roc_auc"
    row["per_model"] = {
        model: {k: scores[main_metric][k] for k in ("tstr", "trtr")} for model, scores in metrics["utility"].items()
    }
    if spec.task == "regression":
        row.update({f"r2_{k}": mean["r2"][k] for k in ("tstr", "trtr", "diff")})
    else:
        row.update({f"accuracy_{k}": mean["accuracy"][k] for k in ("tstr", "trtr", "diff")})
        row.update({f"auc_{k}": mean["roc_auc"][k] for k in ("tstr", "trtr", "diff")})
        if "balanced_accuracy" in mean:
            row.update({f"balanced_accuracy_{k}": mean["balanced_accuracy"][k] for k in ("tstr", "trtr", "diff")})
        row["majority_accuracy"] = majority_accuracy(real, scored_rows, spec.target)
        counts = as_labels(synthetic[spec.target]).value_counts(normalize=True)
        row["synthetic_target_shares"] = {str(k): round(float(v), 4) for k, v in counts.items()}
    return row


def prepared(name: str, parts: dict, split_name: str) -> tuple[Schema, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The hand schema, the train and scored parts read back in it, and the train part as `dpgan fit`
    reads a CSV: every cell as text (dpgan.tables.reading.table_io.read_private_table)."""
    hand = Schema.from_json(schema_path(name))
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        train_schema = round_trip(parts["train"], directory, "train", hand)
        scored = round_trip(parts[split_name], directory, split_name, hand)
        train_user = read_private_table(directory / "train.csv")
    return hand, train_schema, scored, train_user


def run_one(
    name: str,
    mode: str,
    seed: int,
    epsilon: float,
    split_name: str,
    threads: int,
    parts: dict,
    hint_target: bool,
    settings: dict[str, Any] | None = None,
    hint_labels: bool = False,
    all_targets: bool = False,
) -> dict[str, Any]:
    spec = TABLES[name]
    hand, train_schema, scored, train_user = prepared(name, parts, split_name)
    synth = TabularSynthesizer(epsilon=epsilon, delta=DELTA, seed=seed, **(settings or {}))
    hints: dict[str, Any] = {}
    if mode == "no-schema" and hint_target and fit_accepts_target():
        hints["target"] = spec.target  # what a user types: --target COLUMN (and --categorical COLUMN for a class)
        if spec.task != "regression":
            hints["categorical"] = [spec.target]
            if hint_labels:  # the labels as the table's documentation lists them: --categories TARGET=...
                hints["categories"] = {spec.target: [str(c) for c in hand[spec.target].categories]}
    started = time.time()
    try:
        if mode == "schema":
            synth.fit(train_user, schema=hand)
        else:
            synth.fit(train_user, schema=None, **hints)
    except DPGanError as exc:  # what the user sees: one line, no model; recorded as the run's result
        failed = {"table": name, "mode": mode, "hints": hints, "split": split_name, "epsilon": epsilon, "seed": seed}
        return failed | {"task": spec.task, "error": f"{type(exc).__name__}: {exc}"}
    fit_seconds = time.time() - started
    synthetic = synth.sample(len(train_schema), seed=seed)

    row: dict[str, Any] = {
        "table": name,
        "mode": mode,
        "hints": hints,
        "split": split_name,
        "epsilon": epsilon,
        "epsilon_spent": synth.ledger.epsilon(DELTA, synth.accountant),
        "seed": seed,
        "settings": settings or {},
        "task": spec.task,
        "rows": {"train": len(train_schema), "scored": len(scored)},
        "fit_seconds": round(fit_seconds, 1),
        "steps": synth.training.get("steps"),
        "noise_multiplier": synth.training.get("noise_multiplier"),
        "label_model": synth.training.get("label_model"),
        "schema_source": synth.training.get("schema_source"),
    }
    row.update(score_synthetic(name, hand, train_schema, synthetic, scored, seed, threads, all_targets))
    if mode == "no-schema":
        assert synth.schema is not None
        row["learned_schema"] = schema_gaps(synth.schema, hand, train_schema)
    return row


def run(args: argparse.Namespace) -> None:
    torch.set_num_threads(args.threads)
    if args.bin_placement:
        schema_inference.BIN_PLACEMENT = args.bin_placement
    if args.marginals_split:  # the marginals model's split of ε (a module constant: tuned here, not a setting)
        tree_marginals.ONE_WAY_SHARE, tree_marginals.SELECT_SHARE = args.marginals_split
    if args.marginals_structure:  # with a target: the class tree or MST's tree (a module constant too)
        table_marginals.STRUCTURE = args.marginals_structure
    out = Path(args.out) if args.out else RESULTS_DIR / f"csv_only_{args.split}.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    for seed in args.seeds:  # seeds outermost: a run cut short still covers every table
        for name in args.tables:
            parts = split(name, args.max_train_rows, args.max_eval_rows)
            for mode in args.modes:
                row = run_one(
                    name,
                    mode,
                    seed,
                    args.epsilon,
                    args.split,
                    args.threads,
                    parts,
                    args.hint_target,
                    settings(args),
                    args.hint_labels,
                    args.all_targets,
                )
                keys = ("table", "mode", "seed", "fit_seconds", "epsilon_spent", "accuracy_diff", "auc_diff", "r2_diff")
                row["bin_placement"] = schema_inference.BIN_PLACEMENT
                if row.get("settings", {}).get("model") == "marginals":
                    row["marginals_split"] = [tree_marginals.ONE_WAY_SHARE, tree_marginals.SELECT_SHARE]
                    row["marginals_structure"] = table_marginals.STRUCTURE
                brief = {k: row.get(k) for k in keys + ("majority_accuracy", "error")}
                print(json.dumps(brief), flush=True)
                with out.open("a") as handle:
                    handle.write(json.dumps(row) + "\n")


def settings(args: argparse.Namespace) -> dict[str, Any]:
    """`--set key=value` → TabularSynthesizer keyword settings (values parsed as JSON, else text)."""
    out: dict[str, Any] = {}
    for item in args.set or []:
        key, _, value = item.partition("=")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def _mean_sd(values: list[float], scale: float = 1.0, digits: int = 3) -> str:
    arr = np.array(values, dtype=float) * scale
    if len(arr) == 0 or np.isnan(arr).all():
        return "—"
    sd = arr.std(ddof=1) if len(arr) > 1 else 0.0
    return f"{np.nanmean(arr):.{digits}f} ± {sd:.{digits}f}" if len(arr) > 1 else f"{arr[0]:.{digits}f}"


def summary(path: Path) -> None:
    """Markdown: per table and mode, gaps to real data (accuracy points, AUC, or R²) and the majority baseline."""
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    groups: dict[tuple, list[dict]] = defaultdict(list)
    failures: dict[tuple, list[str]] = defaultdict(list)
    for row in rows:
        hint = "+target" if row.get("hints", {}).get("target") else ""
        hint += "+labels" if row.get("hints", {}).get("categories") else ""
        varied = "".join(f" {k}={v}" for k, v in sorted(row.get("settings", {}).items()))
        if row.get("marginals_split"):
            varied += " split=" + "/".join(f"{share:.2f}" for share in row["marginals_split"])
        if row.get("marginals_structure"):
            varied += f" structure={row['marginals_structure']}"
        key = (row["table"], row["epsilon"], row["mode"] + hint + varied)
        if "error" in row:
            failures[key].append(f"seed {row['seed']}: {row['error']}")
        else:
            groups[key].append(row)
    print("| table | ε | mode | seeds | ε spent | real acc. / R² | synth. acc. / R² | acc. gap (pts) / R² gap ", end="")
    print(
        "| real AUC | AUC gap | majority acc. | synth − majority (pts) | JSD | WD | assoc. | indep. "
        "| 2-way | 3-way | fit s |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    order = list(TABLES)
    for key in sorted(groups, key=lambda k: (order.index(k[0]) if k[0] in order else 99, k[1], k[2])):
        g = groups[key]
        table, eps, mode = key
        spent = max(r["epsilon_spent"] for r in g)
        jsd = _mean_sd([r["jsd_mean"] if r["jsd_mean"] is not None else np.nan for r in g])
        wd = _mean_sd([r["wd_mean"] if r["wd_mean"] is not None else np.nan for r in g])
        fit = f"{np.mean([r['fit_seconds'] for r in g]):.0f}"
        assoc = _mean_sd([r.get("association_diff", np.nan) for r in g], digits=2)
        independent = _mean_sd([r.get("association_diff_independent", np.nan) for r in g], digits=2)
        two_way = _mean_sd([r.get("two_way_error", np.nan) for r in g], digits=3)
        three_way = _mean_sd([r.get("three_way_error", np.nan) for r in g], digits=3)
        if g[0]["task"] == "regression":
            real = _mean_sd([r["r2_trtr"] for r in g])
            synth = _mean_sd([r["r2_tstr"] for r in g])
            gap = _mean_sd([r["r2_diff"] for r in g])
            cells = [real, synth, gap, "—", "—", "—", "—"]
        else:
            real = _mean_sd([r["accuracy_trtr"] for r in g], 100, 1)
            synth = _mean_sd([r["accuracy_tstr"] for r in g], 100, 1)
            gap = _mean_sd([r["accuracy_diff"] for r in g], 100, 1)
            auc_real = _mean_sd([r["auc_trtr"] for r in g])
            auc_gap = _mean_sd([r["auc_diff"] for r in g])
            majority = _mean_sd([r["majority_accuracy"] for r in g], 100, 1)
            ahead = _mean_sd([r["accuracy_tstr"] - r["majority_accuracy"] for r in g], 100, 1)
            cells = [real, synth, gap, auc_real, auc_gap, majority, ahead]
        head = f"| {table} | {eps:g} | {mode} | {len(g)} | {spent:.3f} | "
        scores = f" | {jsd} | {wd} | {assoc} | {independent} | {two_way} | {three_way} | {fit} |"
        print(head + " | ".join(cells) + scores)
    for key, messages in failures.items():
        table, eps, mode = key
        print(f"\nFit failed ({table}, ε = {eps:g}, {mode}): " + "; ".join(messages))
    every_column_summary(groups, order)


def every_column_summary(groups: dict[tuple, list[dict]], order: list[str]) -> None:
    """Markdown, when rows have it: TSTR with every column in turn as the target (random forest)."""
    keys = [k for k in groups if any("every_column" in r for r in groups[k])]
    if not keys:
        return
    print("\n| table | ε | mode | seeds | every column: AUC TSTR / TRTR (columns) ", end="")
    print("| every column: R² TSTR / TRTR (columns) | s |")
    print("|---|---|---|---|---|---|---|")
    for key in sorted(keys, key=lambda k: (order.index(k[0]) if k[0] in order else 99, k[1], k[2])):
        g = [r for r in groups[key] if "every_column" in r]
        cells = []
        for kind in ("auc", "r2"):
            means = [r["every_column"][f"mean_{kind}"] for r in g if r["every_column"][f"mean_{kind}"] is not None]
            if not means:
                cells.append("—")
                continue
            count = "/".join(sorted({str(m["columns"]) for m in means}))  # one count unless seeds differ
            tstr = _mean_sd([m["tstr"] for m in means])
            trtr = _mean_sd([m["trtr"] for m in means])
            cells.append(f"{tstr} / {trtr} ({count})")
        seconds = [r["every_column_seconds"] for r in g if "every_column_seconds" in r]
        cells.append(f"{np.mean(seconds):.0f}" if seconds else "—")
        print(f"| {key[0]} | {key[1]:g} | {key[2]} | {len(g)} | " + " | ".join(cells) + " |")


def schema_summary(path: Path, floor: float = 0.01) -> None:
    """Markdown: per table, what the DP-learned schemas got wrong (mean over the no-schema rows' seeds).

    Listed: numeric columns whose learned range (shown: the first seed's) clamps more than `floor` of
    the training values, categorical columns folding more than `floor` of the rows into (other), kinds other than the
    hand-written schema's, and columns made nullable that hold no missing value.
    """
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    by_table: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        if row.get("learned_schema"):
            by_table[row["table"]].append(row["learned_schema"])
    print("| table | seeds | ranges clamped (share of training values) | folded into (other) (share of rows) ", end="")
    print("| kind ≠ hand-written | nullable without nulls |")
    print("|---|---|---|---|---|---|")
    for table in [t for t in TABLES if t in by_table]:
        learned = by_table[table]
        columns = list(learned[0])
        clamped, folded, kinds, nullable = [], [], [], []
        for column in columns:
            entries = [s[column] for s in learned if column in s]
            first = entries[0]
            if first["kind"] != first["hand_kind"]:
                kinds.append(f"{column} {first['kind']} (hand: {first['hand_kind']})")
            if first["nullable"] and first["train_nulls"] == 0:
                nullable.append(column)
            shares = [e.get("clamped_share", 0.0) for e in entries]
            if np.mean(shares) > floor:
                lo, hi = first["range"]
                clamped.append(f"{column} {np.mean(shares):.0%} [{lo:g}, {hi:g}]")
            others = [e.get("other_share", 0.0) for e in entries]
            if np.mean(others) > floor:
                kept = sorted({e.get("categories_kept") for e in entries})
                kept_text = f"{kept[0]}" if len(kept) == 1 else f"{kept[0]}–{kept[-1]}"
                folded.append(f"{column} {np.mean(others):.0%} ({kept_text} of {first.get('train_distinct')} kept)")
        cells = [", ".join(part) or "—" for part in (clamped, folded, kinds, nullable)]
        print(f"| {table} | {len(learned)} | " + " | ".join(cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", nargs="+", default=TUNING_TABLES, choices=list(TABLES))
    parser.add_argument("--modes", nargs="+", default=list(MODES), choices=list(MODES))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--split", choices=("validation", "test"), default="validation")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--max-train-rows", type=int, default=20000)
    parser.add_argument("--max-eval-rows", type=int, default=20000)
    parser.add_argument(
        "--hint-target",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="pass target= to the no-schema fit when dpgan's fit accepts it (public hint)",
    )
    parser.add_argument(
        "--hint-labels",
        action="store_true",
        help="also pass the target's labels from its documentation (--categories TARGET=...), classification only",
    )
    parser.add_argument("--all-targets", action="store_true", help="also TSTR with every column as the target")
    parser.add_argument("--set", action="append", metavar="KEY=VALUE", help="a TabularSynthesizer setting to vary")
    parser.add_argument(
        "--bin-placement",
        choices=("quantile", "equal"),
        help="where learned numeric bins are cut (dpgan.tables.inference.numeric.BIN_PLACEMENT; default: dpgan's)",
    )
    parser.add_argument(
        "--marginals-split",
        nargs=2,
        type=float,
        metavar=("ONE_WAY", "SELECT"),
        help="with --set model=marginals: the cumulative shares of ε left that the 1-way tables and the picks reach",
    )
    parser.add_argument(
        "--marginals-structure",
        choices=("class", "tree"),
        help="with --set model=marginals and a target: the class tree (3-way tables given it) or MST's tree",
    )
    parser.add_argument("--out", help="default: bench/results/csv_only_<split>.jsonl")
    parser.add_argument("--summary", help="print the markdown table for a results file and exit")
    args = parser.parse_args()
    if args.summary:
        summary(Path(args.summary))
        print()
        schema_summary(Path(args.summary))
        return
    run(args)


if __name__ == "__main__":
    main()
