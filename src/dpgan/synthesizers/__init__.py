"""The public synthesizers, one facade per data kind (dpgan.api.Synthesizer is their base).

Tables: `TabularSynthesizer` (dpgan.synthesizers.tabular), over its argument checks
(`arguments`), its fit (`fit_plan`), its sampling (`sampling`) and its model file (`model_file`).
"""

from dpgan.synthesizers.tabular import TabularSynthesizer

__all__ = ["TabularSynthesizer"]
