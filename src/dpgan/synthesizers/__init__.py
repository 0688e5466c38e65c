"""The public synthesizers, one facade per data kind (dpgan.api.Synthesizer is their base).

Tables: `TabularSynthesizer` (dpgan.synthesizers.tabular), over the table kind's folder
(dpgan.tables: its argument checks, settings, fit and sampling), where a fit runs (`table_runs`)
and its model file (`model_file`).
Series: `SequenceSynthesizer` (dpgan.synthesizers.sequence). Images: `ImageSynthesizer`
(dpgan.synthesizers.image).

Each facade loads on first use (dpgan.lazy), so `dpgan sample` on a table model imports neither
the series' nor the images' code.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from dpgan.lazy import lazy_names

if TYPE_CHECKING:
    from dpgan.api import Synthesizer
    from dpgan.synthesizers.image import ImageSynthesizer
    from dpgan.synthesizers.sequence import SequenceSynthesizer
    from dpgan.synthesizers.tabular import TabularSynthesizer

__getattr__ = lazy_names(
    __name__,
    {
        "ImageSynthesizer": "dpgan.synthesizers.image",
        "SequenceSynthesizer": "dpgan.synthesizers.sequence",
        "TabularSynthesizer": "dpgan.synthesizers.tabular",
    },
)


def load_model(path: str | Path) -> Synthesizer:
    """A saved model of any kind: model.json's "kind" picks the registered kind (dpgan.kinds; tables'
    files have none), whose facade's `load` reads the directory (checked whole, read once)."""
    from dpgan.kinds import kind_of_model

    facade = kind_of_model(path).load("facade")
    return facade.load(path)


__all__ = ["ImageSynthesizer", "SequenceSynthesizer", "TabularSynthesizer", "load_model"]
