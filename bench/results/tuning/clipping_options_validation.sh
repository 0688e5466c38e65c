#!/usr/bin/env bash
# Issue 14 options 1-2 (grouped, adaptive clipping) against the frozen default, validation splits, ε = 1
set -euo pipefail
cd "$(dirname "$0")/../../.."
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
out=bench/results/tuning/clipping_options_validation.jsonl
for setting in "" "--set clipping_groups=per-layer" "--set adaptive_clip_quantile=0.5"; do
  .venv/bin/python bench/csv_only.py --split validation --modes schema --epsilon 1 --seeds 0 1 \
    --tables chile churn flchain $setting --out $out
done
