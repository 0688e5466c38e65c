#!/usr/bin/env bash
# Issue 14: the 2-way anchor (DP tables of every pair of columns) at ε = 1, validation splits only (RESULTS §14).
set -euo pipefail
cd "$(dirname "$0")/../../.."
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
out=bench/results/tuning/pair_anchor_validation.jsonl
for setting in "--set pair_anchor=true" "--set pair_anchor=true --set pair_budget_fraction=0.5"; do
  .venv/bin/python bench/csv_only.py --split validation --modes schema --epsilon 1 --seeds 0 1 \
    --tables chile hmda churn flchain $setting --out $out
  .venv/bin/python bench/csv_only.py --split validation --modes schema --epsilon 1 --seeds 0 \
    --tables adult $setting --out $out
done
# the default on adult in the same code (baseline for the rows above), and a heavier penalty
.venv/bin/python bench/csv_only.py --split validation --modes schema --epsilon 1 --seeds 0 --tables adult --out $out
.venv/bin/python bench/csv_only.py --split validation --modes schema --epsilon 1 --seeds 0 1 \
  --tables chile hmda flchain --set pair_anchor=true --set pair_weight=100 --out $out
