"""The tables' "marginals" statistics model in the fit pipeline (dpgan.model): a DP tree of 2-way
marginals (or, with a target, of 3-way marginals given it) on all of ε left after the data releases;
no network, no GAN steps, no plug-ins.

The table kind's data releases come first, as for the GAN (dpgan.tables.fit.plan: the schema's
purchase or the DP schema, N̂, the repairs), and the encoder is the public codec. Then this model
reads the encoded rows once, as discrete codes (dpgan.tables.codec.discrete: public, from the
schema), through their exact count tables (dpgan.statistics.tables.exact_tables: counted from the
table in memory, or summed over a stream's batches in its conform pass and over torchrun's ranks
before any noise, `stream_tables`), and makes the three releases of
dpgan.statistics.tables.tree_marginals (1-way tables, the tree's picks, the tree's tables), each
charged to the ledger before its noise is drawn. The fit (dpgan.statistics.tables.tree_fit) and
the released model (dpgan.tables.sampling.marginals_model) are post-processing. Which pairs are
picked is the selection's (DP); how many variables, their levels and the number of picks come from
the schema (public): no row decides them.
"""

from __future__ import annotations

from dataclasses import dataclass

from dpgan.model import KindData, ReleasedModel
from dpgan.statistics.tables.class_tree import release_class_tree
from dpgan.statistics.tables.class_tree_fit import fit_class_tree
from dpgan.statistics.tables.exact_tables import ExactTables, Key, structure_keys
from dpgan.statistics.tables.tree_fit import fit_tree
from dpgan.statistics.tables.tree_marginals import release_tree
from dpgan.tables.codec.discrete import DiscreteCodec
from dpgan.tables.codec.encoder import TableEncoder
from dpgan.tables.fit.plugins import TableExtras
from dpgan.tables.sampling.marginals_model import TableMarginals
from dpgan.training.context import FitContext
from dpgan.training.progress import FitProgressFn

# "class": with a target, the tree of (target, a, b) tables (dpgan.statistics.tables.class_tree);
# "tree": MST's tree of 2-way tables whatever the target. Chosen on the validation splits
# (bench/notes/38-table-marginals.md); a module constant the bench varies, not a setting
STRUCTURE = "class"


def class_variable(codec: DiscreteCodec, target: str | None) -> int | None:
    """The discrete variable that codes the target (public: the schema and the codec), or None: no
    target, or a target the codec spreads over several variables (a binary-coded integer)."""
    found = [index for index, variable in enumerate(codec.variables) if target and variable.column == target]
    return found[0] if len(found) == 1 else None


def structure_target(codec: DiscreteCodec, target: str | None) -> int | None:
    """The class variable the structure conditions on (None: MST's tree)."""
    return class_variable(codec, target) if STRUCTURE == "class" else None


def stream_keys(encoder: TableEncoder) -> tuple[DiscreteCodec, list[Key]]:
    """The codec and every table the structure's releases may read (public: the codec's levels and
    the schema's target): what a streamed fit sums."""
    codec = DiscreteCodec(encoder)
    return codec, structure_keys(codec.levels, structure_target(codec, encoder.schema.target))


def stream_tables(encoder: TableEncoder) -> tuple[DiscreteCodec, ExactTables]:
    """The codec and the zero count tables a streamed fit adds its batches' codes to, refused in
    one line over the cap on cells before a row is added."""
    codec, keys = stream_keys(encoder)
    return codec, ExactTables.summing(codec.levels, keys)


@dataclass(frozen=True)
class TableMarginalsModel:
    """The "marginals" model (dpgan.model.Model): its releases on what is left of ε."""

    def release(self, ctx: FitContext, data: KindData, progress: FitProgressFn | None) -> ReleasedModel:
        extras: TableExtras = data.details
        codec = DiscreteCodec(extras.encoder)
        tables = extras.tables  # a stream's sums (over the ranks too), or counted from the rows in memory
        if tables is None:
            codes = codec.encode(extras.rows_in_memory("the marginals model").cpu().numpy())
            tables = ExactTables.of_codes(codes, codec.levels)
        rows = data.rows * extras.read_rate  # q·N̂ for a sample of the rows (dpgan.tables.fit.row_sample)
        common = {"rows": float(rows), "budget": ctx.budget, "spent_share": ctx.spent_share,
                  "ledger": ctx.ledger, "rng": ctx.rng}  # fmt: skip
        target = structure_target(codec, extras.encoder.schema.target)
        if target is None:
            released = release_tree(tables, **common)
            model = TableMarginals(extras.encoder, fit_tree(released))
            sigmas = {"one_way_noise_multiplier": released.one_way_sigma, "pair_noise_multiplier": released.pair_sigma}
        else:
            by_class = release_class_tree(tables, target, **common)
            model = TableMarginals(extras.encoder, fit_class_tree(by_class))
            sigmas = {"one_way_noise_multiplier": by_class.one_sigma, "pair_noise_multiplier": by_class.triple_sigma}
        read = {"rows_read_rate": round(extras.read_rate, 6)} if extras.read_rate < 1 else {}  # from N̂: public
        return ReleasedModel(model, None, {"steps": 0, "marginals": {**model.form(), **sigmas, **read}})


__all__ = ["STRUCTURE", "TableMarginalsModel", "class_variable", "stream_keys", "stream_tables", "structure_target"]
