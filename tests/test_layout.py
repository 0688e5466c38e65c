"""The tests' tree mirrors src/dpgan/ (issue 50): each sub-folder of tests/ holds the tests of the dpgan
package it is named after, and the tests of dpgan's top-level modules sit at tests/ itself.

The folders have no __init__.py (pytest's default import mode puts each test file's folder, and
tests/ for conftest.py and the helper modules, on sys.path), so a test module is imported by its
file name alone: two test files of one name in two folders would not both import."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import dpgan

TESTS = Path(__file__).resolve().parent
PACKAGE_ROOT = Path(dpgan.__file__).resolve().parent
NOT_TESTS = {"fixtures", "__pycache__"}  # the data the tests read; Python's cache


def test_every_tests_folder_is_named_after_a_dpgan_package():
    packages = {p.parent.name for p in PACKAGE_ROOT.glob("*/__init__.py")}
    folders = {p.name for p in TESTS.iterdir() if p.is_dir() and p.name not in NOT_TESTS}
    assert folders, "tests/ has no sub-folders: the mirror of src/dpgan/ is gone"
    assert folders <= packages, f"tests/ folders that are no dpgan package: {sorted(folders - packages)}"


def test_no_two_test_files_share_a_name_and_no_folder_is_a_package():
    files = [p for p in TESTS.rglob("test_*.py") if NOT_TESTS.isdisjoint(p.relative_to(TESTS).parts)]
    shared = sorted(name for name, n in Counter(p.name for p in files).items() if n > 1)
    assert not shared, f"test files of one name in two folders: {shared}"
    inits = sorted(str(p.relative_to(TESTS)) for p in TESTS.rglob("__init__.py"))
    assert not inits, f"tests/ folders made packages (their modules would import by another name): {inits}"
