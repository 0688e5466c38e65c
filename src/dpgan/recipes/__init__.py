"""Named training recipes, one file per paper; `RECIPES` and `get_recipe` are the registry.

A recipe is a set of `TrainingConfig` overrides plus two facts the synthesizer needs: whether DP
sits on the critic or on the generator (which loop runs), and whether it conditions on a column.
"""

from __future__ import annotations

from dpgan.errors import InputError
from dpgan.recipes.dp_cgan import DP_CGAN
from dpgan.recipes.dtgan import DTGAN_D, DTGAN_G
from dpgan.recipes.frigerio import DP_GAN
from dpgan.recipes.recipe import Recipe
from dpgan.recipes.xie import DP_WGAN

RECIPES: dict[str, Recipe] = {r.name: r for r in (DP_GAN, DP_WGAN, DP_CGAN, DTGAN_D, DTGAN_G)}


def get_recipe(name: str) -> Recipe:
    if not isinstance(name, str) or name not in RECIPES:
        raise InputError(f"unknown recipe {name!r}; choose one of {', '.join(RECIPES)}")
    return RECIPES[name]


__all__ = ["RECIPES", "Recipe", "get_recipe"]
