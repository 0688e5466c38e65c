"""The released "marginals" table model: the fitted tree's tables, sampling encoded rows, no network.

It is a torch module holding buffers only (no parameters, nothing trained), so that the facade's
sampler, device moves and safetensors files treat it as they treat a generator; its files hold the
tree's fitted 1-way and 2-way tables (post-processing of the DP releases) and, in the training
record, the edges (public: chosen by the DP selection). Rows are drawn from the tree
(dpgan.statistics.tables.tree_fit) as discrete codes and turned into encoded rows by the public
codec (dpgan.tables.codec.discrete), which the table encoder decodes as it does a GAN's.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from dpgan.statistics.tables.tree_fit import TreeModel, oriented
from dpgan.tables.codec.discrete import DiscreteCodec
from dpgan.tables.codec.encoder import TableEncoder

MARGINALS_MODEL = "marginals"


class TableMarginals(torch.nn.Module):
    """The fitted tree as buffers: `one_way.{v}` per variable, `joint.{k}` per oriented edge."""

    def __init__(self, encoder: TableEncoder, tree: TreeModel) -> None:
        super().__init__()
        self.codec = DiscreteCodec(encoder)
        self.edges = [tuple(map(int, edge)) for edge in tree.edges]
        if len(tree.one_way) != len(self.codec.levels):
            raise ValueError("the tree's variables do not fit the schema's codec")
        stored = {f"one_way_{v}": table for v, table in enumerate(tree.one_way)}
        stored |= {f"joint_{k}": table for k, table in enumerate(tree.joints)}
        for key, table in stored.items():
            self.register_buffer(key, torch.tensor(table, dtype=torch.float32))
        # the tree samples from the tables as saved (float32), so a loaded model draws the same rows
        held = {key: getattr(self, key).double().numpy() for key in stored}
        self.tree = TreeModel(
            [held[f"one_way_{v}"] for v in range(len(tree.one_way))],
            list(self.edges),
            [held[f"joint_{k}"] for k in range(len(tree.joints))],
        )

    @torch.no_grad()
    def draw_encoded(self, size: int, generator: torch.Generator) -> torch.Tensor:
        """`size` encoded rows; the draws seeded from `generator` (the sampler's stream)."""
        seed = int(torch.randint(0, 2**62, (1,), generator=generator, device=generator.device))
        rng = np.random.default_rng(seed)
        return torch.from_numpy(self.codec.decode(self.tree.sample(size, rng), rng))

    def form(self) -> dict[str, Any]:
        """The public structure the training record keeps: the oriented edges and the levels."""
        return {"edges": [list(edge) for edge in self.edges], "levels": list(self.codec.levels)}

    @classmethod
    def from_files(
        cls, encoder: TableEncoder, form: dict[str, Any], tensors: dict[str, torch.Tensor]
    ) -> TableMarginals:
        """The model from its record and arrays, strictly: every table of the shape the codec and
        the edges give, non-negative and finite, each summing to 1 (else ValueError)."""
        levels = DiscreteCodec(encoder).levels
        if [int(x) for x in form["levels"]] != list(levels):
            raise ValueError("the marginals' levels do not fit the schema's codec")
        edges = [(int(a), int(b)) for a, b in form["edges"]]
        expected = {f"one_way_{v}": (w,) for v, w in enumerate(levels)}
        expected |= {f"joint_{k}": (levels[a], levels[b]) for k, (a, b) in enumerate(edges)}
        if set(tensors) != set(expected):
            raise ValueError(f"arrays {sorted(tensors)} where {sorted(expected)} were expected")
        arrays = {}
        for key, shape in expected.items():
            array = tensors[key].double().numpy()
            if array.shape != shape or not np.isfinite(array).all() or (array < 0).any():
                raise ValueError(f"array {key!r} is not a table of shape {shape} with finite, non-negative cells")
            if abs(array.sum() - 1.0) > 1e-3:
                raise ValueError(f"array {key!r} does not sum to 1")
            arrays[key] = array
        one_way = [arrays[f"one_way_{v}"] for v in range(len(levels))]
        joints = [arrays[f"joint_{k}"] for k in range(len(edges))]
        order = oriented(len(levels), edges)
        if [(parent, child) for _, parent, child in order] != edges:
            raise ValueError("the marginals' edges are not a tree in sampling order")
        return cls(encoder, TreeModel(one_way, edges, joints))


__all__ = ["MARGINALS_MODEL", "TableMarginals"]
