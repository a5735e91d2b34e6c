"""Timestamps as Kubernetes writes them; the formatter remembers the latest second it formatted."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from pykueue.api.meta.clock import format_time, parse_time


def _reference(seconds: float) -> str:
    return datetime.fromtimestamp(int(seconds), tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@given(st.lists(st.floats(min_value=0, max_value=4_000_000_000, allow_nan=False), min_size=1, max_size=20))
def test_format_time_matches_strftime_whatever_the_order_of_calls(instants: list[float]) -> None:
    # repeats and interleavings of the same second exercise the one-entry memo
    for at in [*instants, *instants[::-1]]:
        assert format_time(at) == _reference(at)


def test_format_time_truncates_to_the_second_and_round_trips() -> None:
    assert format_time(1_700_000_000.99) == "2023-11-14T22:13:20Z"
    assert format_time(1_700_000_001.0) == "2023-11-14T22:13:21Z"
    assert format_time(1_700_000_000.2) == "2023-11-14T22:13:20Z"
    assert parse_time(format_time(1_700_000_000.5)) == 1_700_000_000
