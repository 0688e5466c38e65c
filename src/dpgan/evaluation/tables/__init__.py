"""Evaluation of synthetic tables: utility, fidelity, TSTR per column, the HTML report and the table attacks."""
