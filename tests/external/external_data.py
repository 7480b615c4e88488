"""External-data tests: the public datasets in ASSAY_EXTERNAL_DATA (default ../shared/data)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]  # project root
DATA = ROOT / os.environ.get("ASSAY_EXTERNAL_DATA", "../shared/data")


def need(relative: str) -> Path:
    """The path of a data file or folder, skipping the test when it is absent."""
    path = DATA / relative
    if not path.exists():
        pytest.skip(f"external data not available: {path}")
    return path
