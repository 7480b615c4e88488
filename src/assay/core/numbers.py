"""Numbers given through the Python API: numpy's (`np.float64(4.0)`, `np.int64(3)`) and
other `numbers.Real` types are numbers like Python's own."""

from __future__ import annotations

import numbers


def plain_number(value: object) -> object:
    """A real number of another type (numpy's, `Fraction`) as a Python int or float; a
    boolean (Python's or numpy's) and anything else as it is."""
    kind = type(value)
    if kind is int or kind is float or kind is bool:
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    return value
