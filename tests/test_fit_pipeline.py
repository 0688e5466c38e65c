"""The fit pipeline (dpgan.fit) with a tiny data kind defined here: a new kind plugs in with one
registration and no edit of the pipeline, and the pipeline's order and budget hold for it."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pytest
import torch
from torch import nn

from dpgan.errors import InputError
from dpgan.fit import KINDS, FitBudget, KindData, data_kind, register_kind, run_fit
from dpgan.model import GANModel, ReleasedModel
from dpgan.privacy.calibration import ShareTarget
from dpgan.privacy.unit_rule import UnitTally, release_tally
from dpgan.statistics.independent import EVENT as INDEPENDENT_EVENT
from dpgan.statistics.independent import DPIndependentMarginals
from dpgan.training.context import FitContext
from dpgan.training.strategies import DPCriticStrategy, critic_config

WIDTH = 3
COUNT_SHARE = 0.02


class VectorGenerator(nn.Module):
    noise_dim = 4

    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Linear(self.noise_dim, WIDTH)

    def forward(self, z: torch.Tensor, generator: torch.Generator | None = None, condition=None) -> torch.Tensor:  # noqa: ANN001
        return torch.tanh(self.body(z))


@dataclass
class SpyPlugin:
    """A plug-in that records what it saw: the share of ε spent before it, the ledger's entries."""

    share: float
    seen: list

    def release(self, ctx, data, generator):  # noqa: ANN001
        self.seen.append(("plugin", ctx.spent_share, [e.name for e in ctx.ledger.entries]))
        return ()


class VectorKind:
    """Rows of WIDTH numbers in [-1, 1]; a row with a non-finite number is dropped and counted."""

    name = "vectors"
    certified = True

    def __init__(self, steps: int = 4, plugins: tuple = (), calls: list | None = None) -> None:
        self.config = critic_config({"batch_size": 16, "max_steps": steps, "epochs": 50.0}, {})
        self._plugins, self.calls = plugins, calls if calls is not None else []

    def release_data(self, ctx, rows: np.ndarray) -> KindData:  # noqa: ANN001
        self.calls.append("data")
        keep = np.isfinite(rows).all(axis=1)
        tally = UnitTally(reasons=("not finite",))
        tally.keep(int(keep.sum()))
        tally.drop("not finite", int((~keep).sum()))
        released, _ = release_tally(
            tally, unit="vector", units="vectors", event="vector count", target=ctx.target(COUNT_SHARE),
            ledger=ctx.ledger, rng=ctx.rng,
        )  # fmt: skip
        ctx.spend(COUNT_SHARE)
        units = torch.from_numpy(np.clip(rows[keep], -1.0, 1.0)).float()
        return KindData(units, max(released.kept, 1.0), released)

    def model(self, data: KindData) -> GANModel:
        self.calls.append("model")
        return GANModel(self)

    def generator(self, data: KindData) -> nn.Module:
        self.calls.append("generator")
        return VectorGenerator()

    def plugins(self, data: KindData) -> tuple:
        self.calls.append("plugins")
        return self._plugins

    def critic(self, data: KindData) -> nn.Module:
        self.calls.append("critic")
        return nn.Sequential(nn.Linear(WIDTH, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))

    def strategy(self, generator: nn.Module) -> DPCriticStrategy:
        self.calls.append("strategy")
        return DPCriticStrategy(replace(self.config, noise_dim=generator.noise_dim))

    def finish(self, ctx, data: KindData, trained):  # noqa: ANN001, ANN201
        self.calls.append("finish")
        return trained

    def record(self, data: KindData, trained) -> dict:  # noqa: ANN001
        return {"estimated_vectors": data.rows, **trained.record}


@pytest.fixture
def vectors_registered():
    register_kind(VectorKind.name, VectorKind)
    yield
    KINDS.pop(VectorKind.name, None)


def rows(n: int = 300, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1, 1, size=(n, WIDTH))


def test_a_new_kind_plugs_in_by_registration_and_spends_its_budget(vectors_registered):
    budget = FitBudget(epsilon=2.0, delta=1e-5, accountant="rdp", seed=0)
    fitted = run_fit(data_kind("vectors", steps=4), rows(), budget)
    names = [entry.name for entry in fitted.ledger.entries]
    assert names == ["vector count", "DP-SGD on the critic"]
    spent = fitted.ledger.epsilon(1e-5, "rdp")
    assert 0.9 * 2.0 < spent <= 2.0 * (1 + 1e-9)  # σ calibrated on what the count left: lands on ε
    assert fitted.record["steps"] == 4 and fitted.record["seeded"] is True
    assert abs(fitted.record["estimated_vectors"] - 300) < 6 * 50  # a noisy count, near the truth
    out = fitted.model(torch.zeros(5, VectorGenerator.noise_dim))
    assert out.shape == (5, WIDTH)


def test_the_pipeline_runs_its_steps_in_order_and_moves_the_spent_share():
    seen: list = []
    calls: list = []
    kind = VectorKind(steps=2, plugins=(SpyPlugin(0.1, seen), SpyPlugin(0.0, seen)), calls=calls)
    run_fit(kind, rows(), FitBudget(epsilon=1.0, delta=1e-5, accountant="rdp", seed=0))
    assert calls == ["data", "model", "generator", "plugins", "critic", "strategy", "finish"]
    assert seen[0] == ("plugin", COUNT_SHARE, ["vector count"])
    assert seen[1][1] == pytest.approx(COUNT_SHARE + 0.1)  # the first plug-in's share counted as spent


def test_seeded_fits_repeat_and_a_dropped_row_changes_only_the_count():
    budget = FitBudget(epsilon=1.0, delta=1e-5, accountant="rdp", seed=3)
    a, b = (run_fit(VectorKind(steps=3), rows(), budget) for _ in range(2))
    for key, value in a.model.state_dict().items():
        assert torch.equal(value, b.model.state_dict()[key])
    bad = rows()
    bad[7, 1] = np.nan  # a neighbouring input: one unreadable row, dropped and counted
    c = run_fit(VectorKind(steps=3), bad, budget)
    assert [e.name for e in c.ledger.entries] == [e.name for e in a.ledger.entries]
    assert c.record["steps"] == a.record["steps"]


def test_kind_registry_refuses_a_clash_and_names_the_known_kinds(vectors_registered):
    with pytest.raises(InputError, match="registered already"):
        register_kind("vectors", lambda: None)
    with pytest.raises(InputError, match="vectors"):
        data_kind("no-such-kind")


@dataclass(frozen=True)
class MarginalsModel:
    """A statistics model (dpgan.model.Model): independent DP marginals on all of ε that is left."""

    def release(self, ctx: FitContext, data: KindData, progress) -> ReleasedModel:  # noqa: ANN001
        budget = ctx.budget
        whole = ShareTarget(budget.epsilon, budget.delta, budget.accountant)
        units = data.units.numpy().astype(np.float64)
        model = DPIndependentMarginals(-1.0, 1.0, bins=8).fit(units, None, 0, ctx.rng, ledger=ctx.ledger, target=whole)
        return ReleasedModel(model, None, {"steps": 0})


class StatisticsVectorKind(VectorKind):
    """The vectors with a statistics model: no generator, critic or strategy anywhere."""

    def model(self, data: KindData) -> MarginalsModel:
        return MarginalsModel()

    generator = plugins = critic = strategy = None  # type: ignore[assignment]  # a statistics kind has none


def test_a_kind_whose_model_is_statistics_needs_no_network_and_lands_on_epsilon():
    budget = FitBudget(epsilon=2.0, delta=1e-5, accountant="rdp", seed=0)
    fitted = run_fit(StatisticsVectorKind(), rows(), budget)
    assert [entry.name for entry in fitted.ledger.entries] == ["vector count", INDEPENDENT_EVENT]
    assert fitted.ledger.epsilon(1e-5, "rdp") == pytest.approx(2.0, rel=1e-3)
    assert fitted.critic is None and fitted.record["steps"] == 0
    values, labels = fitted.model.sample(50, np.random.default_rng(0))
    assert values.shape == (50, WIDTH) and np.all(np.abs(values) <= 1.0) and set(labels) == {0}
