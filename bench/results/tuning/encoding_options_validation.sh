#!/usr/bin/env bash
# Issue 14 option 5 (binary codes for integer columns of ≤ 16 public levels) next to the frozen default
# (Gumbel-softmax heads) and plain softmax heads; validation splits, ε = 1. The tables are those whose
# public schemas have such columns: adult (education-num), flchain (sample.yr, flc.grp).
set -euo pipefail
cd "$(dirname "$0")/../../.."
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
out=bench/results/tuning/encoding_options_validation.jsonl
for setting in "" "--set binary_codes=true" "--set categorical_activation=softmax"; do
  .venv/bin/python bench/csv_only.py --split validation --modes schema --epsilon 1 --seeds 0 1 \
    --tables flchain adult $setting --out $out
done
