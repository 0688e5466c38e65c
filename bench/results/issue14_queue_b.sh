#!/usr/bin/env bash
# Issue 14, second queue (one core): AIM on the small tables at ε = 1 and 3, with every column as a target
set -euo pipefail
cd "$(dirname "$0")/.."
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
../.venv/bin/python peers_compare.py --systems aim --tables hmda churn flchain --epsilons 1 3 --seeds 0 \
  --split test --timeout 900 --all-targets --out results/issue14_peers_test.jsonl
