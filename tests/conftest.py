"""Fixtures shared by test files."""

import pytest
from float_margins import top_two_gap  # tests/ is on sys.path (pytest rootdir import mode)


@pytest.fixture
def batch_gaps(monkeypatch):
    """The top-two gap of every row a policy agent scores through masked_logits (act_turns,
    act_batch and act, for every game's policy): comparing those moves
    with another path's, or with recorded ones, holds on every CPU when none is a near tie
    (tests/float_margins.py), whichever kernel rounds the scores."""
    from sorry_env.agents import policy

    gaps = []
    masked = policy.masked_logits

    def recording(logits, masks):
        out = masked(logits, masks)
        gaps.extend(top_two_gap(row) for row in out.numpy())
        return out

    monkeypatch.setattr(policy, "masked_logits", recording)
    return gaps
