"""Locating the external data folder (ASSAY_EXTERNAL_DATA, default ../shared/data)."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def data_root() -> Path:
    """The external data folder; a relative value is resolved against the project root."""
    return ROOT / os.environ.get("ASSAY_EXTERNAL_DATA", "../shared/data")
