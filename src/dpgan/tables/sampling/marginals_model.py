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

from dpgan.statistics.tables.class_tree_fit import ClassTreeModel
from dpgan.statistics.tables.tree_fit import TreeModel, oriented_over
from dpgan.tables.codec.discrete import DiscreteCodec
from dpgan.tables.codec.encoder import TableEncoder

MARGINALS_MODEL = "marginals"


class TableMarginals(torch.nn.Module):
    """The fitted tree as buffers: `one_way.{v}` per variable, `joint.{k}` per oriented edge (a class
    tree's: P(y) at the target, P(y, x) at a feature, P(y, parent, child) per edge)."""

    def __init__(self, encoder: TableEncoder, tree: TreeModel | ClassTreeModel) -> None:
        super().__init__()
        self.codec = DiscreteCodec(encoder)
        self.edges = [tuple(map(int, edge)) for edge in tree.edges]
        self.target = tree.target if isinstance(tree, ClassTreeModel) else None
        if len(tree.one_way) != len(self.codec.levels):
            raise ValueError("the tree's variables do not fit the schema's codec")
        stored = {f"one_way_{v}": table for v, table in enumerate(tree.one_way)}
        stored |= {f"joint_{k}": table for k, table in enumerate(tree.joints)}
        for key, table in stored.items():
            self.register_buffer(key, torch.tensor(table, dtype=torch.float32))
        # the tree samples from the tables as saved (float32), so a loaded model draws the same rows
        held = {key: getattr(self, key).double().cpu().numpy() for key in stored}
        one_way = [held[f"one_way_{v}"] for v in range(len(tree.one_way))]
        joints = [held[f"joint_{k}"] for k in range(len(tree.joints))]
        self.tree: TreeModel | ClassTreeModel = (
            TreeModel(one_way, list(self.edges), joints)
            if self.target is None
            else ClassTreeModel(self.target, one_way, list(self.edges), joints)
        )

    @torch.no_grad()
    def draw_encoded(self, size: int, generator: torch.Generator) -> torch.Tensor:
        """`size` encoded rows; the draws seeded from `generator` (the sampler's stream)."""
        seed = int(torch.randint(0, 2**62, (1,), generator=generator, device=generator.device))
        rng = np.random.default_rng(seed)
        return torch.from_numpy(self.codec.decode(self.tree.sample(size, rng), rng))

    def form(self) -> dict[str, Any]:
        """The public structure the training record keeps: the oriented edges, the levels and the
        class variable (None: MST's tree)."""
        return {"edges": [list(edge) for edge in self.edges], "levels": list(self.codec.levels), "target": self.target}

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
        target = form.get("target")  # absent in models saved before the class tree: MST's tree
        if target is not None and not (isinstance(target, int) and 0 <= target < len(levels)):
            raise ValueError("the marginals' target is not one of the codec's variables")
        expected = _shapes(levels, edges, target)
        if set(tensors) != set(expected):
            raise ValueError(f"arrays {sorted(tensors)} where {sorted(expected)} were expected")
        arrays = {}
        for key, shape in expected.items():
            array = tensors[key].double().cpu().numpy()
            if array.shape != shape or not np.isfinite(array).all() or (array < 0).any():
                raise ValueError(f"array {key!r} is not a table of shape {shape} with finite, non-negative cells")
            if abs(array.sum() - 1.0) > 1e-3:
                raise ValueError(f"array {key!r} does not sum to 1")
            arrays[key] = array
        one_way = [arrays[f"one_way_{v}"] for v in range(len(levels))]
        joints = [arrays[f"joint_{k}"] for k in range(len(edges))]
        nodes = range(len(levels)) if target is None else [v for v in range(len(levels)) if v != target]
        order = oriented_over(nodes, edges)
        if [(parent, child) for _, parent, child in order] != edges:
            raise ValueError("the marginals' edges are not a tree in sampling order")
        if target is None:
            return cls(encoder, TreeModel(one_way, edges, joints))
        return cls(encoder, ClassTreeModel(target, one_way, edges, joints))


def _shapes(levels: tuple[int, ...], edges: list[tuple[int, int]], target: int | None) -> dict[str, tuple[int, ...]]:
    """Each stored table's shape: MST's 1-way and 2-way tables, or a class tree's P(y), P(y, x) and
    P(y, parent, child)."""
    if target is None:
        expected = {f"one_way_{v}": (w,) for v, w in enumerate(levels)}
        return expected | {f"joint_{k}": (levels[a], levels[b]) for k, (a, b) in enumerate(edges)}
    y = levels[target]
    expected = {f"one_way_{v}": (w,) if v == target else (y, w) for v, w in enumerate(levels)}
    return expected | {f"joint_{k}": (y, levels[a], levels[b]) for k, (a, b) in enumerate(edges)}


__all__ = ["MARGINALS_MODEL", "TableMarginals"]
