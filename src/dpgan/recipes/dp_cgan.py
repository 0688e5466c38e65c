"""Torkzadehmahani et al. 2019 (DP-CGAN), Carvalho et al.: a conditional BCE GAN with DP-SGD on the discriminator.

Values marked (paper) come from the paper; the others are dpgan's choices, measured in
bench/RESULTS.md.
"""

from __future__ import annotations

from dpgan.recipes.recipe import Recipe

DP_CGAN = Recipe(
    name="dp-cgan",
    paper="Torkzadehmahani et al. 2019, DP-CGAN; Carvalho et al. (thyroid data)",
    summary="conditional vanilla GAN (BCE), DP-SGD on the discriminator with microbatches, "
    "iterations fixed up front from ε",
    strategy="dp-critic",
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
)
