"""The attack core every data kind's privacy attacks share, and the attacks' public names.

The core: the cost knobs (config.py), ROC and membership scores (scoring.py), progress bars
(progress.py), the "skipped" result form (results.py), target choice (targets.py: the most
isolated records), the shadow-model half that is free of any data kind (shadow.py) and the
synthesizer-factory protocol (synthesizers.py). The attacks themselves live with their data kind:
tables in dpgan.evaluation.tables.attacks (`run_attacks`: DCR, attribute inference, shadow-model
membership, LOGAN), series in dpgan.evaluation.sequences.membership; their public names are
re-exported here, loaded on first use. Attacks are regression alarms: a result near chance is no
proof of DP.
"""

from __future__ import annotations

from dpgan.evaluation.attacks.config import ATTACKS, AttackConfig
from dpgan.evaluation.attacks.progress import Progress, TqdmProgress, reporter
from dpgan.evaluation.attacks.results import jsonable, skipped
from dpgan.evaluation.attacks.synthesizers import Synthesizer, SynthesizerFactory
from dpgan.lazy import lazy_names

# The attacks themselves load on first use (dpgan.lazy): each imports this package's core back
# (config, progress, scoring), so importing one of them eagerly here made every attack module
# that loads first in a fresh interpreter a circular import (issue 50).
__getattr__ = lazy_names(
    __name__,
    {
        "AttackEncoder": "dpgan.evaluation.tables.attacks.encoding",
        "ModelRecipe": "dpgan.evaluation.tables.attacks.recipe",
        "attribute_attack": "dpgan.evaluation.tables.attacks.attribute",
        "choose_sensitive": "dpgan.evaluation.tables.attacks.attribute",
        "craft_outlier": "dpgan.evaluation.tables.attacks.targets",
        "critic_scorer": "dpgan.evaluation.tables.attacks.logan",
        "dcr_attack": "dpgan.evaluation.tables.attacks.dcr",
        "isolated_records": "dpgan.evaluation.tables.attacks.targets",
        "logan_attack": "dpgan.evaluation.tables.attacks.logan",
        "logan_from_scores": "dpgan.evaluation.tables.attacks.logan",
        "model_recipe": "dpgan.evaluation.tables.attacks.recipe",
        "run_attacks": "dpgan.evaluation.tables.attacks.run",
        "shadow_membership_attack": "dpgan.evaluation.tables.attacks.membership",
        "shadow_membership_series": "dpgan.evaluation.sequences.membership",
    },
)

__all__ = [
    "ATTACKS",
    "AttackConfig",
    "AttackEncoder",
    "ModelRecipe",
    "Progress",
    "Synthesizer",
    "SynthesizerFactory",
    "TqdmProgress",
    "attribute_attack",
    "choose_sensitive",
    "craft_outlier",
    "critic_scorer",
    "dcr_attack",
    "isolated_records",
    "jsonable",
    "logan_attack",
    "logan_from_scores",
    "model_recipe",
    "reporter",
    "run_attacks",
    "shadow_membership_attack",
    "shadow_membership_series",
    "skipped",
]
