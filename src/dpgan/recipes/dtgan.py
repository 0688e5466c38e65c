"""Kunar et al. 2021 (DTGAN): DP on the critic (dtgan-d) or on the generator through shard critics (dtgan-g).

Values marked (paper) come from the paper; the others are dpgan's choices, measured in
bench/RESULTS.md.
"""

from __future__ import annotations

from dpgan.recipes.recipe import Recipe

DTGAN_D = Recipe(
    "dtgan-d",
    "Kunar et al. 2021, DTGAN: Differential Private Training for Tabular GANs (DTGAN_D)",
    "conditional WGAN-GP (CTGAN-style training-by-sampling on DP frequencies), DP-SGD on the critic, "
    "information loss and a DP auxiliary classifier for the generator",
    dp_on="critic",
    conditional=True,
    overrides={
        "training_by_sampling": True,  # (paper, with DP frequencies)
        "info_loss_weight": 1.0,  # (paper: information loss)
        "classifier_loss_weight": 1.0,  # (paper: classification loss)
        "interpolation": "linear",  # "spherical" is the paper's option
        "betas": (0.5, 0.9),  # (paper, CTGAN's Adam)
        "gp_weight": 10.0,  # (paper)
    },
)


DTGAN_G = Recipe(
    "dtgan-g",
    "Kunar et al. 2021 (DTGAN_G), after Chen et al. 2020 GS-WGAN",
    "DP on the generator: non-private critics on disjoint shards, clipped and noised gradient at G's output",
    dp_on="generator",
    conditional=True,
    overrides={
        "num_discriminators": 20,
        "batch_size": 64,
        "n_critic": 5,
        "epochs": 10.0,
        "info_loss_weight": 1.0,  # (paper)
        "classifier_loss_weight": 1.0,  # (paper)
        "training_by_sampling": False,
        "ema_decay": 0.99,
        # dpgan's addition: DP one-way statistics warm-start and anchor G (README "Recipes")
        "marginal_anchor": True,
    },
)
