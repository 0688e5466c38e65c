"""The attack core every data kind's privacy attacks share, and the attacks' public names.

The core: the cost knobs (config.py), ROC and membership scores (scoring.py), progress bars
(progress.py), the "skipped" result form (results.py), target choice (targets.py: the most
isolated records), the shadow-model half that is free of any data kind (shadow.py) and the
synthesizer-factory protocol (synthesizers.py). The attacks themselves live with their data kind:
tables in dpgan.evaluation.tables.attacks (`run_attacks`: DCR, attribute inference, shadow-model
membership, LOGAN), series in dpgan.evaluation.sequences.membership; their public names are
re-exported here. Attacks are regression alarms: a result near chance is no proof of DP.
"""

from __future__ import annotations

from dpgan.evaluation.attacks.config import ATTACKS, AttackConfig
from dpgan.evaluation.attacks.progress import Progress, TqdmProgress, reporter
from dpgan.evaluation.attacks.results import jsonable, skipped
from dpgan.evaluation.attacks.synthesizers import Synthesizer, SynthesizerFactory
from dpgan.evaluation.tables.attacks.attribute import attribute_attack, choose_sensitive
from dpgan.evaluation.tables.attacks.dcr import dcr_attack
from dpgan.evaluation.tables.attacks.encoding import AttackEncoder
from dpgan.evaluation.tables.attacks.logan import critic_scorer, logan_attack, logan_from_scores
from dpgan.evaluation.tables.attacks.membership import shadow_membership_attack
from dpgan.evaluation.tables.attacks.recipe import ModelRecipe, model_recipe
from dpgan.evaluation.tables.attacks.run import run_attacks
from dpgan.evaluation.tables.attacks.targets import craft_outlier, isolated_records
from dpgan.lazy import lazy_names

# the series' attack imports this package's core (config): loaded on first use, so that importing
# dpgan.evaluation.sequences.membership first is not a circular import
__getattr__ = lazy_names(__name__, {"shadow_membership_series": "dpgan.evaluation.sequences.membership"})

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
