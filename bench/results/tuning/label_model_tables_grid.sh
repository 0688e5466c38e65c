#!/usr/bin/env bash
# Issue 14: the naive-Bayes label model from the 2-way tables at ε = 3 (against the frozen default at ε = 3),
# and with plain softmax heads at ε = 1 and 3; validation splits, seeds 0 and 1
set -euo pipefail
cd "$(dirname "$0")/../../.."
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
out=bench/results/tuning/label_model_tables_validation.jsonl
run() { .venv/bin/python bench/csv_only.py --split validation --modes schema --seeds 0 1 \
  --tables hmda chile churn flchain adult --out $out "$@"; }
run --epsilon 3 --set label_model_kind=pair-tables
run --epsilon 3
run --epsilon 1 --set label_model_kind=pair-tables --set categorical_activation=softmax
run --epsilon 3 --set label_model_kind=pair-tables --set categorical_activation=softmax
