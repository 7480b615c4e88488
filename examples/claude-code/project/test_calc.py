import pytest
from calc import add, divide


def test_add_handles_negative_numbers() -> None:
    assert add(-2, 5) == 3


def test_divide_by_zero_raises() -> None:
    with pytest.raises(ZeroDivisionError):
        divide(1, 0)
