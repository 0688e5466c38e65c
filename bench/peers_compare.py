"""dpgan, SmartNoise Synth's MST and AIM on the tables of bench/csv_only.py, scored by the same code.

dpgan runs its frozen default through csv_only.run_one (the CSV path with the hand-written schema).
Each peer runs in its own venv (bench/.venv-peers, made by bench/peers/setup.sh; never a dpgan
dependency) through bench/peers/run_peer.py, on the CSV of the same train split dpgan fits, with
the same public schema (categories and numeric bounds, 10 equal-width bins for numerics: nothing
read from the data outside ε). Its synthetic CSV is read back with the schema and scored by
csv_only.score_synthetic: TSTR vs TRTR (four classifiers), JSD/WD, the association difference and
the error on all 2-way marginals. A peer that passes `--timeout` seconds is recorded as such.

    bash bench/peers/setup.sh                                      # once
    python bench/peers_compare.py --systems dpgan mst aim --tables chile churn --epsilons 1 3 --seeds 0 --split test
    python bench/peers_compare.py --goal bench/results/peers_test.jsonl bench/results/peers_test.jsonl
    python bench/csv_only.py --summary bench/results/peers_test.jsonl
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
from pathlib import Path

import pandas as pd
import torch

from csv_only import DELTA, RESULTS_DIR, round_trip, run_one, score_synthetic
from dpgan import Schema
from tables import TABLES, TUNING_TABLES, schema_path, split

BENCH = Path(__file__).resolve().parent
PEER_PYTHON = BENCH / ".venv-peers" / "bin" / "python"
CTGAN_PYTHON = BENCH / ".venv-ctgan" / "bin" / "python"  # DP-CTGAN, PATE-CTGAN (torch 1.x, opacus 0.14)


def run_peer(
    system: str,
    name: str,
    epsilon: float,
    seed: int,
    split_name: str,
    parts: dict,
    timeout: int,
    all_targets: bool = False,
) -> dict:
    hand = Schema.from_json(schema_path(name))
    base = {"table": name, "mode": system, "split": split_name, "epsilon": epsilon, "seed": seed, "settings": {}}
    base["task"] = TABLES[name].task
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        train_schema = round_trip(parts["train"], directory, "train", hand)
        scored = round_trip(parts[split_name], directory, split_name, hand)
        out = directory / "synthetic.csv"
        python = CTGAN_PYTHON if system in ("dpctgan", "patectgan") else PEER_PYTHON
        command = [str(python), str(BENCH / "peers" / "run_peer.py"), "--synth", system]
        command += ["--train", str(directory / "train.csv"), "--schema", str(schema_path(name))]
        command += ["--epsilon", str(epsilon), "--delta", str(DELTA), "--rows", str(len(train_schema))]
        command += ["--seed", str(seed), "--out", str(out)]
        started = time.time()
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return base | {"error": f"did not finish within {timeout} s"}
        if done.returncode != 0:
            return base | {"error": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "failed"}
        side = json.loads(Path(str(out) + ".json").read_text())
        synthetic = round_trip(
            pd.read_csv(out, dtype=str, keep_default_na=False, na_values=[""]),
            directory,
            "synthetic_typed",
            hand,
        )
    row = base | {
        "rows": {"train": len(train_schema), "scored": len(scored)},
        "fit_seconds": round(side["fit_seconds"], 1),
        "wall_seconds": round(time.time() - started, 1),
        "epsilon_spent": epsilon,  # the peer's own accounting (zCDP → (ε, δ)); not re-checked here
    }
    return row | score_synthetic(name, hand, train_schema, synthetic, scored, seed, 1, all_targets)


def goal_check(dpgan_path: Path, peers_path: Path) -> None:
    """Markdown: issue 14's goal per table and ε, dpgan (schema rows) against each peer, seed means."""
    rows = [json.loads(line) for path in (dpgan_path, peers_path) for line in path.read_text().splitlines() if line]
    groups: dict[tuple, list[dict]] = {}
    for row in rows:
        if "error" not in row and not row.get("settings"):
            groups.setdefault((row["table"], row["epsilon"], row["mode"]), []).append(row)

    def mean(table: str, eps: float, system: str, key: str) -> float | None:
        values = [r[key] for r in groups.get((table, eps, system), []) if r.get(key) is not None]
        return sum(values) / len(values) if values else None

    print("| table | ε | peer | TSTR AUC / R²: dpgan vs peer | 2-way error: dpgan vs peer (ratio) "
          "| assoc.: dpgan vs peer (half indep.) | every column AUC / R²: dpgan vs peer |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for table, eps, system in sorted({(t, e, m) for t, e, m in groups if m != "schema"}):
        metric = "r2_tstr" if mean(table, eps, "schema", "r2_tstr") is not None else "auc_tstr"
        ours, theirs = mean(table, eps, "schema", metric), mean(table, eps, system, metric)
        two_ours, two_theirs = mean(table, eps, "schema", "two_way_error"), mean(table, eps, system, "two_way_error")
        assoc, peer_assoc = mean(table, eps, "schema", "association_diff"), mean(table, eps, system, "association_diff")
        half = mean(table, eps, "schema", "association_diff_independent")
        if None in (ours, theirs, two_ours, two_theirs, assoc, peer_assoc, half):
            continue
        print(
            f"| {table} | {eps:g} | {system} | {ours:.3f} vs {theirs:.3f} {'✓' if ours > theirs else '✗'} "
            f"| {two_ours:.3f} vs {two_theirs:.3f} ({two_ours / two_theirs:.2f}×) "
            f"| {assoc:.2f} vs {peer_assoc:.2f} ({half / 2:.2f}) {'✓' if assoc <= half / 2 else '✗'} "
            f"| {_every_column_cell(mean, table, eps, system)} |"
        )


def _every_column_cell(mean, table: str, eps: float, system: str) -> str:
    """'AUC a vs b / R² c vs d' from the rows' every-column means, where both systems have them."""
    parts = []
    for kind, label in (("auc", "AUC"), ("r2", "R²")):
        ours, theirs = (mean(table, eps, s, f"every_column_{kind}_tstr") for s in ("schema", system))
        if ours is not None and theirs is not None:
            parts.append(f"{label} {ours:.3f} vs {theirs:.3f}")
    return " / ".join(parts) or "—"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--systems", nargs="+", default=["dpgan", "mst"], choices=["dpgan", "mst", "aim", "dpctgan", "patectgan"]
    )
    parser.add_argument("--tables", nargs="+", default=TUNING_TABLES, choices=list(TABLES))
    parser.add_argument("--epsilons", nargs="+", type=float, default=[1.0])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--split", choices=("validation", "test"), default="test")
    parser.add_argument("--timeout", type=int, default=900)
    parser.add_argument("--max-train-rows", type=int, default=20000)
    parser.add_argument("--max-eval-rows", type=int, default=20000)
    parser.add_argument("--out", help="default: bench/results/peers_<split>.jsonl")
    parser.add_argument("--all-targets", action="store_true", help="also TSTR with every column as the target")
    parser.add_argument("--goal", nargs=2, metavar=("DPGAN_ROWS", "PEER_ROWS"), help="print the goal table and exit")
    args = parser.parse_args()
    if args.goal:
        goal_check(Path(args.goal[0]), Path(args.goal[1]))
        return
    torch.set_num_threads(1)
    out = Path(args.out) if args.out else RESULTS_DIR / f"peers_{args.split}.jsonl"
    for seed in args.seeds:
        for name in args.tables:
            parts = split(name, args.max_train_rows, args.max_eval_rows)
            for epsilon in args.epsilons:
                for system in args.systems:
                    if system == "dpgan":  # the frozen default through the CSV path, as csv_only.py runs it
                        row = run_one(
                            name, "schema", seed, epsilon, args.split, 1, parts, False, None, False, args.all_targets
                        )
                    else:
                        row = run_peer(system, name, epsilon, seed, args.split, parts, args.timeout, args.all_targets)
                    keys = ("table", "mode", "epsilon", "seed", "fit_seconds", "auc_diff", "r2_diff", "error")
                    print(json.dumps({k: row.get(k) for k in keys}), flush=True)
                    with out.open("a") as handle:
                        handle.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
