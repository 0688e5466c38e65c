#!/usr/bin/env bash
# Issue 14: the frozen defaults (commit 36db466: the 2-way anchor on, 0.3 of ε) scored on the TEST
# splits, against the same code with the anchor off (the defaults before). RESULTS §14.
# Usage: issue14_test_split.sh EPSILON OUT.jsonl
set -euo pipefail
cd "$(dirname "$0")/../.."
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
eps=$1; out=$2
for setting in "" "--set pair_anchor=false"; do
  .venv/bin/python bench/csv_only.py --split test --modes schema --epsilon "$eps" --seeds 0 1 \
    --tables hmda chile churn flchain diamonds adult $setting --out "$out"
done
