"""Values derived from objects that are built once and never changed after (a judge's reply
schema), remembered per object so that each call does not derive them again."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

T = TypeVar("T")


class ByObject(Generic[T]):
    """A memo keyed by an object's identity (and a tag): for objects that are not hashable or
    costly to hash (dicts), and that nobody changes once made.

    Each entry holds its object, so the object's id is not reused while it is remembered; the
    memo is emptied when it grows past `size` entries.
    """

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self._kept: dict[tuple[int, Hashable], tuple[object, T]] = {}

    def get(self, obj: object, derive: Callable[[], T], tag: Hashable = None) -> T:
        """What `derive()` gives for `obj` (and `tag`): computed the first time only."""
        key = (id(obj), tag)
        kept = self._kept.get(key)
        if kept is not None and kept[0] is obj:
            return kept[1]
        value = derive()
        if len(self._kept) >= self.size:
            self._kept.clear()
        self._kept[key] = (obj, value)
        return value
