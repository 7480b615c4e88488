"""Where bundled resources live, in a source checkout or an installed package."""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[1]  # the assay package


def examples_dir() -> Path:
    """The examples folder: the repository's, or the copy packaged inside assay."""
    for candidate in (PACKAGE_DIR.parents[1] / "examples", PACKAGE_DIR / "_examples"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("the bundled examples are missing from this installation")


def cache_root() -> Path:
    """Where assay keeps what it fetches or assembles: `ASSAY_CACHE` when set, else
    `$XDG_CACHE_HOME/assay`, else `~/.cache/assay`."""
    if os.environ.get("ASSAY_CACHE"):
        return Path(os.environ["ASSAY_CACHE"]).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "assay"
