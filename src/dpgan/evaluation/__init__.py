"""Evaluation of synthetic data: utility, fidelity, the privacy ledger, privacy attacks, a report."""

from dpgan.evaluation.evaluate import evaluate

__all__ = ["evaluate"]
