"""Named training recipes, one file per paper; `RECIPES` and `get_recipe` are the registry.

A recipe is a set of `TrainingConfig` overrides plus two facts the synthesizer needs: whether DP
sits on the critic or on the generator (which loop runs), and whether it conditions on a column.
"""

from __future__ import annotations

from dataclasses import fields

from dpgan.errors import InputError
from dpgan.model_catalog import ModelEntry
from dpgan.recipes.dp_cgan import DP_CGAN
from dpgan.recipes.dtgan import DTGAN_D, DTGAN_G
from dpgan.recipes.frigerio import DP_GAN
from dpgan.recipes.recipe import Recipe
from dpgan.recipes.xie import DP_WGAN
from dpgan.tables.settings import TableSettings

RECIPES: dict[str, Recipe] = {r.name: r for r in (DP_GAN, DP_WGAN, DP_CGAN, DTGAN_D, DTGAN_G)}
DEFAULT_RECIPE = "dp-gan"
# the table kind's models (dpgan.model_catalog): every recipe a GAN that reads the loop's settings
# and every field of TableSettings (its codec, its plug-ins, checkpoint selection)
TABLE_MODELS = tuple(
    ModelEntry(r.name, "GAN", r.summary, tuple(f.name for f in fields(TableSettings)), default=r.name == DEFAULT_RECIPE)
    for r in RECIPES.values()
)


def get_recipe(name: str) -> Recipe:
    if not isinstance(name, str) or name not in RECIPES:
        raise InputError(f"unknown recipe {name!r}; choose one of {', '.join(RECIPES)}")
    return RECIPES[name]


__all__ = ["DEFAULT_RECIPE", "RECIPES", "TABLE_MODELS", "Recipe", "get_recipe"]
