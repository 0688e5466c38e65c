"""Evaluation of synthetic images: students, memorisation, the Fréchet feature distance, figures and the HTML report."""
