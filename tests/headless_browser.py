"""A report's images, decoded by a real headless Chromium (skips the test when none is installed)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
PROBE = (
    "<script>window.addEventListener('load',()=>{document.body.setAttribute('data-ok',"
    "Array.from(document.images).filter(i=>i.complete&&i.naturalWidth>0).length)})</script></body>"
)


def chromium() -> str | None:
    return next((shutil.which(name) for name in BROWSERS if shutil.which(name)), None)


def decoded_images(html: str, tmp_path: Path) -> int:
    """How many of the page's images the browser decoded (the page plus a probe script; the
    reports themselves carry no scripts). Skips the calling test without a browser."""
    browser = chromium()
    if browser is None:
        pytest.skip("chromium is not installed (make install-test installs it with apt-get as root)")
    probe = tmp_path / "probe.html"
    probe.write_text(html.replace("</body>", PROBE))
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", f"--user-data-dir={tmp_path / 'p'}"]
    dom = subprocess.run([browser, *flags, "--virtual-time-budget=5000", "--dump-dom", probe.as_uri()],
                         capture_output=True, text=True, timeout=60)  # fmt: skip
    found = re.search(r'data-ok="(\d+)"', dom.stdout)
    assert found, "the probe script did not run: " + dom.stdout[:500]
    return int(found.group(1))
