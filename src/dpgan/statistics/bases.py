"""Public orthonormal bases for the DP Gaussian's covariance: chosen from a shape alone, never
from data, so projecting onto one is a public map (no privacy cost, no data-dependent choice).

A low-frequency DCT-II basis keeps the smooth directions in which series and images hold most of
their variance. The covariance's noise scales with the number m of kept coefficients (its
spectrum reaches about 2√m times the entries' sd) while the signal's variance sits in the first few
frequencies, so fewer coefficients release a sharper covariance at the same ε (bench/notes/24).
"""

from __future__ import annotations

import numpy as np

from dpgan.errors import InputError


def _dct_rows(size: int) -> np.ndarray:
    """(size, size) orthonormal DCT-II matrix: row u is frequency u."""
    from scipy.fft import dct  # here, not at the top: scipy.fft costs a fifth of a second to import

    return dct(np.eye(size), norm="ortho", axis=0)


def low_frequency_keep(sides: tuple[int, ...], fraction: float) -> np.ndarray:
    """Frequency tuples (u, v, ...) kept, in row-major order: Σ u_i / side_i < fraction · (number of
    sides), the low-frequency corner of the DCT grid (the zero frequency always; fraction 1 keeps
    every frequency, since each u_i / side_i < 1)."""
    if not (0.0 < fraction <= 1.0):
        raise InputError("the basis fraction must be in (0, 1]")
    grids = np.meshgrid(*[np.arange(s) / s for s in sides], indexing="ij")
    level = np.sum(grids, axis=0)
    return np.argwhere(level < fraction * len(sides))


def low_frequency_size(sides: tuple[int, ...], fraction: float, channels: int = 1) -> int:
    """m, the columns `low_frequency_basis` would have: counted on the frequency grid, without
    building the (d, m) matrix (so a shape too large for it can be refused cheaply)."""
    return channels * len(low_frequency_keep(tuple(sides), fraction))


def low_frequency_basis(
    sides: tuple[int, ...], fraction: float, channels: int = 1, channels_last: bool = False
) -> np.ndarray:
    """(d, m) orthonormal columns, d = channels · Π sides: the kept low frequencies of a separable
    DCT-II over the sides (one side for a series' steps, two for an image's rows and columns), each
    channel with its own copy; flat vectors are channel-major (an image's C·H·W) or, with
    `channels_last`, channel-last (a series' T·F). `fraction` 1 keeps every frequency."""
    return _frequency_columns(sides, low_frequency_keep(tuple(sides), fraction), channels, channels_last)


def high_frequency_basis(
    sides: tuple[int, ...], fraction: float, channels: int = 1, channels_last: bool = False
) -> np.ndarray:
    """(d, d − m): the frequencies `low_frequency_basis` leaves out, in the same layout, so the two
    together are one orthonormal basis of the whole space (the complement a residual lives in)."""
    kept = {tuple(freq) for freq in low_frequency_keep(tuple(sides), fraction)}
    every = np.argwhere(np.ones(tuple(sides), dtype=bool))
    rest = np.array([freq for freq in every if tuple(freq) not in kept], dtype=np.int64).reshape(-1, len(sides))
    return _frequency_columns(sides, rest, channels, channels_last)


def _frequency_columns(
    sides: tuple[int, ...], frequencies: np.ndarray, channels: int, channels_last: bool
) -> np.ndarray:
    """The DCT-II columns of the given frequency tuples, each channel with its own copy."""
    if channels < 1 or not sides or any(s < 1 for s in sides):
        raise InputError("a basis needs at least one channel and positive sides")
    rows = [_dct_rows(s) for s in sides]
    single = []
    for freq in frequencies:
        vector = rows[0][freq[0]]
        for axis in range(1, len(sides)):
            vector = np.multiply.outer(vector, rows[axis][freq[axis]])
        single.append(np.ravel(vector))
    one = np.array(single).reshape(len(single), -1).T if single else np.zeros((int(np.prod(sides)), 0))
    identity = np.eye(channels)
    return np.kron(one, identity) if channels_last else np.kron(identity, one)


__all__ = ["high_frequency_basis", "low_frequency_basis", "low_frequency_keep", "low_frequency_size"]
