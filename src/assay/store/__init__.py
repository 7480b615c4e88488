"""Persistence: the SQLite run store and call cache."""

from assay.store.db import DEFAULT_STORE, Store, now_iso

__all__ = ["DEFAULT_STORE", "Store", "now_iso"]
