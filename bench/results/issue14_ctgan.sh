#!/usr/bin/env bash
# Issue 14: SmartNoise's DP-CTGAN and PATE-CTGAN (bench/.venv-ctgan, bench/peers/setup_ctgan.sh) on the
# test splits of the six tables, ε = 1 and 3, seed 0, 900 s per fit at most
set -euo pipefail
cd "$(dirname "$0")/.."
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
[ -x .venv-ctgan/bin/python ] || bash peers/setup_ctgan.sh
../.venv/bin/python peers_compare.py --systems dpctgan patectgan --tables hmda chile churn flchain diamonds adult --epsilons 1 3 --seeds 0 \
  --split test --timeout 900 --out results/issue14_ctgan_test.jsonl
