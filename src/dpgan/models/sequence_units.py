"""Networks over privacy units of series: k series of T steps with C channels, shaped (B, k, T, C).

A unit is what one record contributes: one series (k = 1) or, with entity-level privacy, the k
series kept for one entity. The critic scores a unit by the mean of its series' scores, so a unit's
per-example gradient is one clipped quantity whatever k is; the generator makes k series per unit
from independent noise. The channels are the value columns (tanh, scaled to [-1, 1] by public
bounds) followed, for labelled series, by the label's one-hot repeated along time: the label is
part of the data the critic judges, and the generator conditions its LSTM on the label it drew,
so that sampling can also impose a label (conditional generation).

Nothing here normalises across units or series: a unit's score depends on that unit only.
"""

from __future__ import annotations

import torch
from torch import nn

from dpgan.models.recurrent import LSTMCritic, LSTMGenerator

CRITICS = ("mlp", "lstm")
ATANH_EDGE = 1.0 - 1e-4  # a base draw on the bound (clipped) stays finite in tanh's input space


class SeriesUnitGenerator(nn.Module):
    """Noise (B, k·T·d) → units (B, k, T, F + K): F values in (-1, 1) and a label one-hot (K ≥ 2).

    Labels come from a learned head (Gumbel-softmax draws in training), or, with `profile`, from
    released label shares: each series' values are then tanh(offset[label] + the LSTM's read-out),
    the offset being a released per-label, per-step mean profile (in tanh's input space), so the
    label's level and daily shape are given and the critic teaches the variation around them. The
    shares and the profile are buffers set from DP releases (`set_profile`), saved with the weights.

    With `base` (a Gaussian-base generator), each series starts from a draw of a released per-label
    Gaussian of the flattened series (`set_base`: label shares, means and Cholesky-like factors,
    the DP release of dpgan.sequences.baseline), made from the last T·F numbers of the series'
    noise and clipped into [-1, 1] as that baseline samples. The LSTM reads the draw at each step
    beside its noise and adds a residual in tanh's input space, times a learned scalar gate that
    starts at `gate` (0 by default): values = tanh(atanh(draw) + gate · read-out). At gate 0 G *is*
    the released Gaussian (labels from its shares), so the critic only has to teach corrections,
    and a fit whose critic teaches nothing useful can stay there. A gate that starts open (≠ 0)
    comes with a zeroed read-out instead, so G starts at the base either way.
    """

    def __init__(
        self,
        *,
        length: int,
        n_values: int,
        n_labels: int = 0,
        per_unit: int = 1,
        step_noise: int = 4,
        hidden_size: int = 64,
        num_layers: int = 1,
        tau: float = 0.2,
        profile: bool = False,
        offset: bool = True,
        series_noise: int = 0,
        base: bool = False,
        gate: float = 0.0,
    ) -> None:
        super().__init__()
        if base and profile:
            raise ValueError("a generator has a profile offset or a Gaussian base, not both")
        self.length, self.n_values, self.n_labels, self.per_unit = length, n_values, n_labels, per_unit
        self.step_noise, self.tau, self.profile, self.use_offset = step_noise, tau, profile, offset and profile
        self.series_noise, self.base = series_noise, base
        self.base_dim = length * n_values if base else 0  # the base draw's standard normals
        self.lstm = LSTMGenerator(
            step_noise + (n_values if base else 0),
            n_values,
            hidden_size,
            num_layers=num_layers,
            condition_dim=n_labels + series_noise,
        )
        self.label_head = nn.Linear(length * step_noise, n_labels) if n_labels and not self.drawn_labels else None
        groups = max(1, n_labels)
        if self.drawn_labels:
            self.register_buffer("label_shares", torch.full((groups,), 1.0 / groups))
        if profile:
            self.register_buffer("offset", torch.zeros(groups, length, n_values))
        if base:
            d = length * n_values
            self.register_buffer("base_mean", torch.zeros(groups, d))
            self.register_buffer("base_factor", torch.eye(d).expand(groups, d, d).clone())
            self.gate = nn.Parameter(torch.tensor(float(gate)))
            if gate != 0.0:  # an open gate over a zero read-out: G still starts at the base, and the
                with torch.no_grad():  # read-out learns first (a closed gate learns first otherwise)
                    self.lstm.out.weight.zero_()
                    self.lstm.out.bias.zero_()

    @property
    def drawn_labels(self) -> bool:
        """Labels come from released shares (a profile or a Gaussian base), not a learned head."""
        return self.profile or self.base

    @property
    def noise_dim(self) -> int:
        """The flat noise one unit needs (what the training loop draws per unit)."""
        return self.per_unit * self.series_noise_dim

    @property
    def series_noise_dim(self) -> int:
        """One series' noise: d per step, and the series-wide latent (s) after them."""
        return self.length * self.step_noise + self.series_noise + self.base_dim

    @torch.no_grad()
    def set_base(self, shares: torch.Tensor, means: torch.Tensor, factors: torch.Tensor) -> None:
        """The released Gaussian: label shares (K,), means (K, T·F) and factors (K, T·F, T·F) with
        covariance = factor · factorᵀ, all in the scaled space [-1, 1]."""
        if not self.base:
            raise ValueError("this generator was built without a Gaussian base")
        self.label_shares.copy_(shares / shares.sum())
        self.base_mean.copy_(means)
        self.base_factor.copy_(factors)

    def base_draw(self, z: torch.Tensor, codes: torch.Tensor | None) -> torch.Tensor:
        """(n, ·) noise, label codes (n,) → the base Gaussian's draw (n, T, F), clipped to [-1, 1]."""
        normals = z[:, z.shape[1] - self.base_dim :]
        index = codes if codes is not None else torch.zeros(z.shape[0], dtype=torch.long, device=z.device)
        draw = (self.base_mean[index] + torch.einsum("nij,nj->ni", self.base_factor[index], normals)).clamp(-1.0, 1.0)
        return draw.reshape(z.shape[0], self.length, self.n_values)

    @torch.no_grad()
    def set_profile(self, shares: torch.Tensor, mean: torch.Tensor) -> None:
        """Released label shares (K,) and per-label, per-step means (K, T, F) in [-1, 1]."""
        if not self.profile:
            raise ValueError("this generator was built without a profile")
        self.label_shares.copy_(shares / shares.sum())
        self.offset.copy_(torch.atanh(mean.clamp(-0.99, 0.99)))

    def label_logits(self, z: torch.Tensor) -> torch.Tensor:
        """Per series (B·k, T·d) noise → label logits (B·k, K)."""
        assert self.label_head is not None
        return self.label_head(z[:, : self.length * self.step_noise])

    def series(self, z: torch.Tensor, labels: torch.Tensor | None, codes: torch.Tensor | None = None) -> torch.Tensor:
        """(n, T·d + s) noise, label one-hots (n, K) and, with a profile, codes (n,) → values (n, T, F).
        The series-wide latent (s) joins the label as the LSTM's static input at every step: per-step
        noise alone lets an LSTM settle on one day per label (measured: RESULTS §15)."""
        per_step = self.length * self.step_noise
        steps = z[:, :per_step].reshape(z.shape[0], self.length, self.step_noise)
        latent = z[:, per_step : per_step + self.series_noise] if self.series_noise else None
        static = [t for t in (labels, latent) if t is not None]
        condition = torch.cat(static, dim=1) if static else None
        if self.base:
            draw = self.base_draw(z, codes)
            residual = self.lstm.pre_activation(torch.cat([steps, draw], dim=2), condition)
            return torch.tanh(torch.atanh(draw.clamp(-ATANH_EDGE, ATANH_EDGE)) + self.gate * residual)
        if not self.use_offset:
            return self.lstm(steps, condition)
        offset = self.offset[codes] if codes is not None else self.offset[0]
        return torch.tanh(offset + self.lstm.pre_activation(steps, condition))

    def _profile_codes(self, n: int, generator: torch.Generator | None) -> torch.Tensor:
        if n == 0:  # an empty Poisson batch (few units): torch.multinomial refuses to draw none
            return torch.zeros(0, dtype=torch.long, device=self.label_shares.device)
        return torch.multinomial(self.label_shares, n, replacement=True, generator=generator)

    def forward(
        self, z: torch.Tensor, generator: torch.Generator | None = None, condition: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Training output: units the critic sees; labels as Gumbel-softmax draws (noise from `generator`)
        or, with a profile, one-hots drawn from the released shares."""
        batch = z.shape[0]
        steps = z.reshape(batch * self.per_unit, self.series_noise_dim)
        if self.drawn_labels:
            codes = self._profile_codes(steps.shape[0], generator)
            if not self.n_labels:
                return self.series(steps, None, codes).reshape(batch, self.per_unit, self.length, self.n_values)
            labels = nn.functional.one_hot(codes, self.n_labels).to(steps.dtype)
        elif not self.n_labels:
            return self.series(steps, None).reshape(batch, self.per_unit, self.length, self.n_values)
        else:
            codes = None
            logits = self.label_logits(steps)
            uniform = torch.rand(logits.shape, generator=generator, device=logits.device).clamp(1e-10, 1.0 - 1e-7)
            labels = torch.softmax((logits - torch.log(-torch.log(uniform))) / self.tau, dim=1)
        values = self.series(steps, labels, codes)
        channels = torch.cat([values, labels[:, None, :].expand(-1, self.length, -1)], dim=2)
        return channels.reshape(batch, self.per_unit, self.length, self.n_values + self.n_labels)

    @torch.no_grad()
    def sample(
        self, n: int, generator: torch.Generator, labels: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """n series: values (n, T, F) and label codes (n,), drawn from the label head (or the
        released shares) or imposed."""
        steps = torch.randn(n, self.series_noise_dim, generator=generator, device=generator.device)
        if not self.n_labels:
            codes = self._profile_codes(n, generator) if self.drawn_labels else None
            return self.series(steps, None, codes), None
        if labels is None:
            if self.drawn_labels:
                labels = self._profile_codes(n, generator)
            else:
                probabilities = torch.softmax(self.label_logits(steps), dim=1)
                labels = torch.multinomial(probabilities, 1, generator=generator)[:, 0]
        one_hot = torch.nn.functional.one_hot(labels, self.n_labels).to(steps.dtype)
        return self.series(steps, one_hot, labels), labels


class SeriesUnitCritic(nn.Module):
    """Units (B, k, T, C) → one score each: the mean of a series critic over the unit's k series.

    The series critic is an MLP on the flattened series (Frigerio et al.'s choice) or an LSTM. With
    `n_labels` > 0 and `projection`, the label channels (the last n_labels, constant along time)
    leave the MLP's input and enter as a projection (Miyato & Koyama): score = w·φ(v) + ⟨E y, φ(v)⟩
    with φ the MLP's features of the values v. The label then acts on the score through one bilinear
    term the critic cannot ignore, instead of as 24 repeated one-hots among the inputs. Per series,
    so the unit's score still depends on that unit only. With `differences`, the critic also reads
    each value's first differences (how the series moves hour to hour) beside the values."""

    def __init__(
        self,
        *,
        length: int,
        channels: int,
        kind: str = "mlp",
        hidden: tuple[int, ...] = (128, 128),
        n_labels: int = 0,
        projection: bool = False,
        differences: bool = False,
    ) -> None:
        super().__init__()
        self.differences = differences
        if differences:  # each value channel's first difference joins the values (see `_with_differences`)
            channels += channels - n_labels
        if kind not in CRITICS:
            raise ValueError(f"critic must be one of {CRITICS}")
        if projection and (kind != "mlp" or n_labels < 2 or not hidden):
            raise ValueError("a label projection needs an MLP critic with hidden layers and a label")
        self.kind, self.n_labels, self.projection = kind, n_labels, projection
        if kind == "mlp":
            inputs = channels - n_labels if projection else channels
            layers: list[nn.Module] = [nn.Flatten()]
            width = length * inputs
            for size in hidden:
                layers += [nn.Linear(width, size), nn.LeakyReLU(0.2)]
                width = size
            if projection:
                self.series_critic: nn.Module = _ProjectionHead(nn.Sequential(*layers), width, n_labels)
            else:
                layers.append(nn.Linear(width, 1))
                self.series_critic = nn.Sequential(*layers)
        else:
            self.series_critic = LSTMCritic(channels, hidden_size=hidden[0] if hidden else 32)

    def forward(self, units: torch.Tensor) -> torch.Tensor:
        batch, per_unit = units.shape[0], units.shape[1]
        flat = units.reshape(batch * per_unit, *units.shape[2:])
        if self.differences:
            flat = self._with_differences(flat)
        return self.series_critic(flat).reshape(batch, per_unit).mean(dim=1)

    def _with_differences(self, series: torch.Tensor) -> torch.Tensor:
        """(n, T, F + K) → (n, T, 2F + K): the values, their step-to-step changes (0 at the first
        step), then the label channels. A fixed linear map of one series: still per series."""
        values = series[..., : series.shape[-1] - self.n_labels]
        change = torch.cat([torch.zeros_like(values[:, :1]), values[:, 1:] - values[:, :-1]], dim=1)
        return torch.cat([values, change, series[..., values.shape[-1] :]], dim=2)


class _ProjectionHead(nn.Module):
    """Series (n, T, F + K) → w·φ(values) + ⟨E·label, φ(values)⟩; the label read at the first step."""

    def __init__(self, trunk: nn.Module, width: int, n_labels: int) -> None:
        super().__init__()
        self.trunk, self.n_labels = trunk, n_labels
        self.out = nn.Linear(width, 1)
        self.embed = nn.Linear(n_labels, width, bias=False)

    def forward(self, series: torch.Tensor) -> torch.Tensor:
        values, labels = series[..., : -self.n_labels], series[:, 0, -self.n_labels :]
        features = self.trunk(values)
        return self.out(features)[:, 0] + (self.embed(labels) * features).sum(dim=1)


__all__ = ["CRITICS", "SeriesUnitCritic", "SeriesUnitGenerator"]
