"""Frigerio et al. 2019 (dp-GAN): WGAN-GP with DP-SGD on the critic and clipping decay.

Values marked (paper) come from the paper; the others are dpgan's choices, measured in
bench/RESULTS.md.
"""

from __future__ import annotations

from dpgan.recipes.recipe import Recipe

DP_GAN = Recipe(
    name="dp-gan",
    paper="Frigerio et al. 2019, Differentially Private GANs for Time Series, Continuous, and Discrete Open Data",
    summary="WGAN-GP, DP-SGD on the critic (real term and gradient penalty clipped together), clipping decay",
    strategy="dp-critic",
    conditional=False,
)
