"""Persistence: the SQLite run store and call cache."""

from assay.store.db import DEFAULT_STORE, Store, damaged_store, now_iso, store_fault

__all__ = ["DEFAULT_STORE", "Store", "damaged_store", "now_iso", "store_fault"]
