"""Defaults and constants the command line names in its options and output, from the layers
below, so that it imports only `assay.api` and `assay.core` (the import contract in
pyproject.toml): the store's default path and schema version, the spend roles, the
calibration gate's defaults, and the model settings a command builds from its flags."""

from __future__ import annotations

from assay.measure.thresholds import DEFAULT_KAPPA, DEFAULT_SAFETY_DIMS
from assay.models.pricing import parse_price
from assay.models.registry import ModelOptions
from assay.store import DEFAULT_STORE
from assay.store.schema import SCHEMA_VERSION
from assay.store.spend import ROLES, Spend

__all__ = [
    "DEFAULT_KAPPA",
    "DEFAULT_SAFETY_DIMS",
    "DEFAULT_STORE",
    "ROLES",
    "SCHEMA_VERSION",
    "ModelOptions",
    "Spend",
    "parse_price",
]
