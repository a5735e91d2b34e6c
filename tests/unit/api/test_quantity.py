from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pykueue.api.meta.quantity import UNLIMITED, QuantityError, format_amount, parse_quantity, to_amount


@pytest.mark.parametrize(
    ("text", "resource", "amount"),
    [
        ("500m", "cpu", 500),
        (4, "cpu", 4000),
        ("0.1", "cpu", 100),
        ("1.0001", "cpu", 1001),  # rounds up like MilliValue()
        ("8Gi", "memory", 8 * 2**30),
        ("1e3", "memory", 1000),
        ("1E3", "memory", 1000),
        ("2k", "memory", 2000),
        ("1M", "memory", 10**6),
        ("3", "nvidia.com/gpu", 3),
        ("100Ei", "memory", UNLIMITED),
    ],
)
def test_to_amount(text: str | int, resource: str, amount: int) -> None:
    assert to_amount(resource, text) == amount


@pytest.mark.parametrize("text", ["", "abc", "1Gb", "1.2.3", "--1", "1 Gi", "Gi"])
def test_rejects_malformed(text: str) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(text)


def test_exact_decimal_sum() -> None:
    assert parse_quantity("0.1") + parse_quantity("0.2") == Decimal("0.3")


@pytest.mark.parametrize(
    ("resource", "amount", "text"),
    [
        ("cpu", 3000, "3"),
        ("cpu", 3500, "3500m"),
        ("memory", 8 * 2**30, "8Gi"),
        ("memory", 4000, "4k"),
        ("memory", 0, "0"),
        ("memory", 1023, "1023"),
    ],
)
def test_format_amount(resource: str, amount: int, text: str) -> None:
    assert format_amount(resource, amount) == text


@given(st.integers(min_value=0, max_value=2**50), st.sampled_from(["cpu", "memory", "pods"]))
def test_format_round_trips(amount: int, resource: str) -> None:
    assert to_amount(resource, format_amount(resource, amount)) == amount


def test_memoised_parse_returns_the_value_and_still_rejects_bad_input_every_time() -> None:
    assert parse_quantity("750m") == Decimal("0.75")
    assert parse_quantity("750m") == Decimal("0.75")  # from the memo
    for _ in range(2):
        with pytest.raises(QuantityError):
            parse_quantity("12 apples")
