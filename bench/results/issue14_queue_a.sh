#!/usr/bin/env bash
# Issue 14, this session's first queue (one core): the public warm start on validation splits, then
# MST at ε = 0.3 and 10 on the test splits (RESULTS §14)
set -euo pipefail
cd "$(dirname "$0")/.."
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
../.venv/bin/python public_warm_start.py --tables chile churn flchain --seeds 0 1 --epsilon 1
../.venv/bin/python peers_compare.py --systems mst --tables hmda chile churn flchain diamonds adult \
  --epsilons 0.3 10 --seeds 0 --split test --out results/issue14_peers_test.jsonl
