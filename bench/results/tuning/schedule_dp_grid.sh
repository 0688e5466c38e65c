#!/usr/bin/env bash
# Issue 14: the GAN's schedule under DP, chosen on validation splits only (RESULTS §14).
# 1,200 steps (epochs 60 at q ≤ 0.05, the default) vs 4,000 (epochs 200), Gumbel-softmax vs softmax heads.
set -euo pipefail
cd "$(dirname "$0")/../../.."
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
out=bench/results/tuning/schedule_dp_validation.jsonl
for eps in 1; do
  for setting in "" "--set epochs=200" "--set epochs=200 --set categorical_activation=softmax"; do
    .venv/bin/python bench/csv_only.py --split validation --modes schema --epsilon $eps --seeds 0 1 \
      --tables chile hmda churn flchain $setting --out $out
  done
done
