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
# the tables' statistics model (dpgan.tables.fit.marginals): no network and no loop, so not one of
# RECIPES (which the GAN's tests and the audit iterate); a Recipe record only so that the facade
# and the model file carry its name as they carry a recipe's
MARGINALS = Recipe(
    name="marginals",
    paper="McKenna, Miklau, Sheldon 2021 (MST)",
    summary="a DP tree of 2-way marginals (MST-style selection), sampled along the tree: no GAN",
    strategy="dp-critic",  # never run: the model releases its tables itself
    conditional=False,
)
STATISTICS_RECIPES: dict[str, Recipe] = {MARGINALS.name: MARGINALS}
# the table kind's models (dpgan.model_catalog): every recipe a GAN that reads the loop's settings
# and every field of TableSettings (its codec, its plug-ins, checkpoint selection)
TABLE_MODELS = tuple(
    ModelEntry(r.name, "GAN", r.summary, tuple(f.name for f in fields(TableSettings)), default=r.name == DEFAULT_RECIPE)
    for r in RECIPES.values()
) + (ModelEntry(MARGINALS.name, "statistics", MARGINALS.summary, ("geo_pairs",)),)


def get_recipe(name: str) -> Recipe:
    known = {**RECIPES, **STATISTICS_RECIPES}
    if not isinstance(name, str) or name not in known:
        raise InputError(f"unknown recipe {name!r}; choose one of {', '.join(known)}")
    return known[name]


__all__ = ["DEFAULT_RECIPE", "MARGINALS", "RECIPES", "STATISTICS_RECIPES", "TABLE_MODELS", "Recipe", "get_recipe"]
