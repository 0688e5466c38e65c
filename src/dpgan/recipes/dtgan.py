"""Kunar et al. 2021 (DTGAN): DP on the critic (dtgan-d) or on the generator through shard critics (dtgan-g).

Values marked (paper) come from the paper; the others are dpgan's choices, measured in
bench/RESULTS.md.
"""

from __future__ import annotations

from dpgan.recipes.recipe import Recipe

DTGAN_D = Recipe(
    name="dtgan-d",
    paper="Kunar et al. 2021, DTGAN: Differential Private Training for Tabular GANs (DTGAN_D)",
    summary="conditional WGAN-GP (CTGAN-style training-by-sampling on DP frequencies), DP-SGD on the critic, "
    "information loss and a DP auxiliary classifier for the generator",
    strategy="dp-critic",
    conditional=True,
    overrides={
        "training_by_sampling": True,  # (paper, with DP frequencies)
        "info_loss_weight": 1.0,  # (paper: information loss)
        "interpolation": "linear",  # "spherical" is the paper's option
        "betas": (0.5, 0.9),  # (paper, CTGAN's Adam)
        "gp_weight": 10.0,  # (paper)
    },
    plugins={"classifier_loss_weight": 1.0},  # (paper: the auxiliary classifier's loss)
)


DTGAN_G = Recipe(
    name="dtgan-g",
    paper="Kunar et al. 2021 (DTGAN_G), after Chen et al. 2020 GS-WGAN",
    summary="DP on the generator: non-private critics on disjoint shards, clipped and noised gradient at G's output",
    strategy="dp-generator",
    conditional=True,
    overrides={
        "num_discriminators": 20,
        "batch_size": 64,
        "n_critic": 5,
        "epochs": 10.0,
        "info_loss_weight": 1.0,  # (paper)
        "training_by_sampling": False,
        "ema_decay": 0.99,
    },
    plugins={
        "classifier_loss_weight": 1.0,  # (paper)
        # dpgan's addition: DP one-way statistics warm-start and anchor G (README "Recipes")
        "marginal_anchor": True,
    },
)
