#!/bin/bash
# end-to-end tuning grid on VALIDATION splits, seeds 0 1, sequential, one thread
cd /work/main/bench
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONPATH=/work/main/src
PY="../.venv/bin/python csv_only.py --seeds 0 1"
T="hmda chile churn flchain adult"
$PY --tables $T --modes schema --out /tmp/bench/e_schema_base.jsonl
$PY --tables $T --modes schema --set max_sample_rate=0.05 --out /tmp/bench/e_schema_rate.jsonl
$PY --tables $T --modes schema --set max_sample_rate=0.05 --set label_model_budget_fraction=0.25 --out /tmp/bench/e_schema_rate_l25.jsonl
$PY --tables $T --modes no-schema --hint-labels --set preprocessing_fraction=0.25 --set max_sample_rate=0.05 --set label_model_budget_fraction=0.25 --out /tmp/bench/e_ns_labels.jsonl
$PY --tables $T --modes no-schema --set preprocessing_fraction=0.25 --set max_sample_rate=0.05 --set label_model_budget_fraction=0.25 --out /tmp/bench/e_ns_target.jsonl
echo GRID2 DONE
