"""Evaluation of synthetic series: the metrics, the HTML report and the shadow-model membership attack."""
