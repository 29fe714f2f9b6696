"""Full-jitter backoff stays inside its bounds."""

from __future__ import annotations

import random

import pytest
from pydantic import ValidationError

from fleetdesk.client import RetryPolicy


def test_backoff_is_full_jitter_under_a_growing_capped_ceiling() -> None:
    policy = RetryPolicy(attempts=6, base_delay=0.1, max_delay=0.5)
    rng = random.Random(7)
    for failures, ceiling in [(1, 0.1), (2, 0.2), (3, 0.4), (4, 0.5), (9, 0.5)]:
        samples = [policy.backoff(failures, rng) for _ in range(500)]
        assert all(0.0 <= s <= ceiling for s in samples)
        # Full jitter spreads over the whole range, not just near the ceiling.
        assert min(samples) < ceiling * 0.1 and max(samples) > ceiling * 0.9


def test_base_above_cap_is_rejected() -> None:
    with pytest.raises(ValidationError):
        RetryPolicy(base_delay=3.0, max_delay=1.0)
