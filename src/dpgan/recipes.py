"""Named training recipes: where the noise goes and what the networks see, one paper each.

A recipe is a set of `TrainingConfig` overrides plus two facts the synthesizer needs: whether DP
sits on the critic or on the generator, and whether the recipe conditions on a column. Values
marked (paper) come from the recipe's paper; the others are dpgan's choices, measured in
bench/RESULTS.md, because the paper does not state them or they do not fit Adult on 2 cores.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dpgan.errors import InputError


@dataclass(frozen=True)
class Recipe:
    name: str
    paper: str
    summary: str
    dp_on: str  # "critic" or "generator"
    conditional: bool  # conditions on a column (the schema's target unless told otherwise)
    overrides: dict[str, Any] = field(default_factory=dict)


RECIPES: dict[str, Recipe] = {
    r.name: r
    for r in (
        Recipe(
            "dp-gan",
            "Frigerio et al. 2019, Differentially Private GANs for Time Series, Continuous, and Discrete Open Data",
            "WGAN-GP, DP-SGD on the critic (real term and gradient penalty clipped together), clipping decay",
            dp_on="critic",
            conditional=False,
        ),
        Recipe(
            "dp-wgan",
            "Xie et al. 2018, Differentially Private Generative Adversarial Network",
            "WGAN with weight clipping (|w| ≤ 0.05; paper 0.01), RMSprop, n_critic 5, DP-SGD on the critic",
            dp_on="critic",
            conditional=False,
            overrides={
                "loss": "wgan",
                "optimizer": "rmsprop",  # (paper)
                # the paper clips to 0.01; with dpgan's binned encoding that critic is too weak
                # (Adult ε=1, 3 seeds: AUC gap 0.325 at 0.01, 0.073 at 0.05; RESULTS §6)
                "weight_clip": 0.05,
                "n_critic": 5,  # (paper)
                # the paper's lr 5e-5 over its ~30k steps; dpgan's 60 epochs at B=1024 are ~2k steps
                "critic_lr": 5e-4,
                "generator_lr": 5e-4,
                "clip_fake_term": True,
            },
        ),
        Recipe(
            "dp-cgan",
            "Torkzadehmahani et al. 2019, DP-CGAN; Carvalho et al. (thyroid data)",
            "conditional vanilla GAN (BCE), DP-SGD on the discriminator with microbatches, "
            "iterations fixed up front from ε",
            dp_on="critic",
            conditional=True,
            overrides={
                "loss": "bce",  # (paper)
                "microbatches": 0,  # m = B: per-example clipping (the paper's TF-Privacy option m < B is supported)
                "n_critic": 1,  # (paper: alternating updates)
                "betas": (0.5, 0.999),
                "generator_lr": 2e-4,
                "critic_lr": 2e-4,
                "one_sided_penalty": False,
            },
        ),
        Recipe(
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
        ),
        Recipe(
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
        ),
    )
}


def get_recipe(name: str) -> Recipe:
    if not isinstance(name, str) or name not in RECIPES:
        raise InputError(f"unknown recipe {name!r}; choose one of {', '.join(RECIPES)}")
    return RECIPES[name]
