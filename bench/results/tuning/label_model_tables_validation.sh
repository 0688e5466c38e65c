#!/usr/bin/env bash
# Issue 14: the label model read off the 2-way anchor's tables (naive Bayes, no ε of its own) against the
# frozen default's DP-SGD label model (rows already in pair_anchor_validation.jsonl and
# clipping_options_validation.jsonl); validation splits, ε = 1, seeds 0 and 1
set -euo pipefail
cd "$(dirname "$0")/../../.."
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
out=bench/results/tuning/label_model_tables_validation.jsonl
.venv/bin/python bench/csv_only.py --split validation --modes schema --epsilon ${EPS:-1} --seeds 0 1 \
  --tables hmda chile churn flchain adult --set label_model_kind=pair-tables --out $out
