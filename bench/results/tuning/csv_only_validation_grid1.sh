#!/bin/bash
# tuning grid on VALIDATION splits (seed 0), sequential, one thread
cd /work/main/bench
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONPATH=/work/main/src
PY=../.venv/bin/python
T="hmda chile churn flchain"
$PY csv_only.py --tables $T --seeds 0 --out /tmp/bench/g_default.jsonl
$PY csv_only.py --tables $T --seeds 0 --modes no-schema --hint-labels --out /tmp/bench/g_labels.jsonl
$PY csv_only.py --tables $T --seeds 0 --modes no-schema --hint-labels --set preprocessing_fraction=0.25 --out /tmp/bench/g_labels_pf25.jsonl
$PY csv_only.py --tables $T --seeds 0 --set max_sample_rate=0.05 --set label_model_max_sample_rate=0.1 --out /tmp/bench/g_rate.jsonl
$PY csv_only.py --tables $T --seeds 0 --modes no-schema --hint-labels --set preprocessing_fraction=0.25 --set max_sample_rate=0.05 --set label_model_max_sample_rate=0.1 --out /tmp/bench/g_labels_pf25_rate.jsonl
echo GRID DONE
