#!/usr/bin/env bash
# dpgan's frozen default on the test splits, seed 0, rows with the 2-way marginal error (RESULTS §14)
set -euo pipefail
cd "$(dirname "$0")/../.."
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
for eps in 1 3; do
  .venv/bin/python bench/csv_only.py --split test --modes schema --epsilon $eps --seeds 0 \
    --tables hmda chile churn flchain diamonds adult --out bench/results/issue14_dpgan_test_twoway.jsonl
done
