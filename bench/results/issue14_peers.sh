#!/usr/bin/env bash
# Issue 14: MST (and AIM where it finishes) on the test splits with dpgan's public schemas, and dpgan's
# frozen default (commit 36db466) scored by the same code with the 2-way marginal error. RESULTS §14.
set -euo pipefail
cd "$(dirname "$0")/.."
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
[ -x .venv-peers/bin/python ] || bash peers/setup.sh
../.venv/bin/python peers_compare.py --systems mst --tables hmda chile churn flchain diamonds adult \
  --epsilons 1 3 --seeds 0 --split test --out results/issue14_peers_test.jsonl
../.venv/bin/python peers_compare.py --systems aim --tables chile --epsilons 1 --seeds 0 --split test \
  --timeout 600 --out results/issue14_peers_test.jsonl
