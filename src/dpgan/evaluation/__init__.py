"""Evaluation of synthetic data: utility (and, later, fidelity and privacy attacks)."""
