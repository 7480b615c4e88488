"""The store as `assay view` reads it: opened read-only, never written."""

from __future__ import annotations

from assay.store.views import ReadOnlyStore

__all__ = ["ReadOnlyStore"]
