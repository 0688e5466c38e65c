"""Named training recipes, one file per paper; `RECIPES` and `get_recipe` are the registry.

A recipe is a set of `TrainingConfig` overrides plus two facts the synthesizer needs: whether DP
sits on the critic or on the generator (which loop runs), and whether it conditions on a column.
"""

from __future__ import annotations

from collections.abc import Sequence
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
# the marginals model's own settings (its entry below): max_examples is the rows it reads
# (dpgan.tables.fit.row_sample), geo_pairs its codec's
MARGINALS_READS = ("geo_pairs", "max_examples")
# the table kind's models (dpgan.model_catalog): every recipe a GAN that reads the loop's settings
# and every field of TableSettings (its codec, its plug-ins, checkpoint selection)
TABLE_MODELS = tuple(
    ModelEntry(r.name, "GAN", r.summary, tuple(f.name for f in fields(TableSettings)), default=r.name == DEFAULT_RECIPE)
    for r in RECIPES.values()
) + (
    ModelEntry(
        MARGINALS.name,
        "statistics",
        MARGINALS.summary,
        MARGINALS_READS,
        default_when="the target is a class",
    ),
)


def default_table_recipe(target_is_class: bool, private_schema: bool, gan_asked: Sequence[str]) -> Recipe:
    """The model a table fit that names none gets: the marginals model (its class tree of 3-way
    tables given the target) when the target is a class (categorical or boolean) and the schema is
    the user's or bought with DP (`private_schema`: not the non-private `schema_from_data_without_dp`),
    else the GAN.

    Chosen on the validation splits of the tuning tables at ε = 1 and 3 (bench/notes/38-table-marginals.md,
    "The default" and "Quantile cells"). CSV-only (the DP schema's quantile bins), on the six
    classification tables, the class tree's TSTR AUC gap was lower on the mean at both ε, its 2-way
    and 3-way errors level (ε = 1) or lower (ε = 3), its fit 10-40× faster. With the hand schemas it
    first fell behind the GAN (hmda, loans: values drawn uniformly inside coarse equal bins); with its
    bins cut at DP quantiles (dpgan.tables.fit.quantile_cells) it leads the GAN on the five hand-schema
    tables' mean AUC gap at both ε (0.028 vs 0.037 at ε = 1, every table ahead; 0.014 vs 0.025 at
    ε = 3), its 2-way error level. On the three regression tables neither led (both weak, the seeds
    further apart than the models), so the GAN, the default before, stays there; without a target
    the marginals model is MST's tree, behind the GAN. A fit that asks for what only the GAN does
    (`gan_asked`: a condition column, a fixed σ, a public warm start, any setting the marginals
    model does not read) gets the GAN, so no given setting is silently left unread. The inputs are
    public (the user's arguments and schema, or the DP schema's kind of the target:
    post-processing): no row decides the model."""
    chosen = target_is_class and private_schema and not gan_asked
    return get_recipe(MARGINALS.name if chosen else DEFAULT_RECIPE)


def get_recipe(name: str) -> Recipe:
    known = {**RECIPES, **STATISTICS_RECIPES}
    if not isinstance(name, str) or name not in known:
        raise InputError(f"unknown recipe {name!r}; choose one of {', '.join(known)}")
    return known[name]


__all__ = [
    "DEFAULT_RECIPE",
    "MARGINALS",
    "MARGINALS_READS",
    "default_table_recipe",
    "RECIPES",
    "STATISTICS_RECIPES",
    "TABLE_MODELS",
    "Recipe",
    "get_recipe",
]
