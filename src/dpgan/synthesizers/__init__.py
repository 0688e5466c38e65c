"""The public synthesizers, one facade per data kind (dpgan.api.Synthesizer is their base).

Tables: `TabularSynthesizer` (dpgan.synthesizers.tabular), over the table kind's folder
(dpgan.tables: its argument checks, settings, fit and sampling), where a fit runs (`table_runs`)
and its model file (`model_file`).
Series: `SequenceSynthesizer` (dpgan.synthesizers.sequence). Images: `ImageSynthesizer`
(dpgan.synthesizers.image).
"""

from pathlib import Path

from dpgan.api import Synthesizer
from dpgan.synthesizers.image import ImageSynthesizer
from dpgan.synthesizers.sequence import SequenceSynthesizer
from dpgan.synthesizers.tabular import TabularSynthesizer


def load_model(path: str | Path) -> Synthesizer:
    """A saved model of any kind: model.json's "kind" picks the facade (tables have none)."""
    from dpgan.serialization import model_kind

    kind = model_kind(path)  # the facade's load checks the whole directory (read once, not twice)
    if kind == "sequence":
        return SequenceSynthesizer.load(path)
    if kind == "image":
        return ImageSynthesizer.load(path)
    return TabularSynthesizer.load(path)


__all__ = ["ImageSynthesizer", "SequenceSynthesizer", "TabularSynthesizer", "load_model"]
