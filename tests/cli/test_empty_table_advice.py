"""A header-only or all-empty CSV fits and warns (issue 49): the advice fits what is public (a
schema, `dpgan schema --template`, --categorical as well as --bounds: a column whose values do not
show may be categorical, like Adult's income), and the row count is said to be noisy, with its
noise, since a file with no row reads as "about 80 rows" too."""

from __future__ import annotations

import re

import pytest

from dpgan import datasets
from dpgan.cli import main

ADULT_HEADER = ",".join(datasets.load_adult()[0].columns)


@pytest.mark.parametrize("body", ["", ",".join([""] * 15) + "\n"], ids=["header-only", "all-empty"])
def test_an_empty_table_warns_with_advice_a_user_can_follow(body, tmp_path, capsys):
    data = tmp_path / "empty.csv"
    data.write_text(ADULT_HEADER + "\n" + body)
    args = ["fit", str(data), "--epsilon", "3", "--target", "income", "--max-steps", "2", "--quiet"]
    code = main([*args, "--seed", "0", "--accountant", "rdp", "--out", str(tmp_path / "m")])
    warnings = [line for line in capsys.readouterr().err.splitlines() if line.startswith("dpgan: warning:")]
    assert code == 0
    count = [w for w in warnings if "rows (" in w]
    assert len(count) == 1 and re.search(r"about [\d,]+ rows \(a noisy count, give or take [\d,]+", count[0])
    ranges = [w for w in warnings if "--bounds" in w]
    assert ranges  # at this budget no column's values show: some are read as numbers by the noise
    for line in ranges:
        name = re.search(r"column '([^']+)'", line).group(1)
        assert "dpgan schema DATA --template" in line and f"--categorical {name}" in line
