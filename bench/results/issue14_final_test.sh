#!/usr/bin/env bash
# Issue 14, after the label model from the 2-way tables was frozen as the default (label_model_kind="auto",
# chosen on validation splits; RESULTS §14): dpgan and MST on the test splits of seven tables at ε = 1 and 3,
# every column also scored as a target; then dpgan at ε = 0.3 and 10. One core.
set -euo pipefail
cd "$(dirname "$0")/.."
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
out=results/issue14_final_test.jsonl
../.venv/bin/python peers_compare.py --systems dpgan mst --tables hmda chile churn flchain diamonds sacramento adult \
  --epsilons 1 3 --seeds 0 --split test --all-targets --out $out
../.venv/bin/python peers_compare.py --systems dpgan --tables hmda chile churn flchain diamonds sacramento adult \
  --epsilons 0.3 10 --seeds 0 --split test --out $out
