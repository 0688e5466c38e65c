#!/bin/bash
# DP checkpoint selection (issue 14 option 4) on VALIDATION splits, sequential, one thread
cd "$(dirname "$0")/.."
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
PY=../.venv/bin/python
T="chile churn"
$PY csv_only.py --tables $T --seeds 0 1 --epsilon 1 --split validation --modes schema --out results/selection_validation_default.jsonl
$PY csv_only.py --tables $T --seeds 0 1 --epsilon 1 --split validation --modes schema --set select_checkpoints=5 --out results/selection_validation_k5.jsonl
echo DONE
