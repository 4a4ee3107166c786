"""Golden test of the game's behaviour and layouts (the versioning rule: docs/versioning.md).

For every preset: a hash of the action layout (action_offsets, num_actions, the decoding of
every index) and a hash of what players are shown along fixed games (observe() from every
seat, the public state array a policy reads, the legal actions), compared with the values
recorded in tests/golden_layout.json for the current ENV_VERSION. A change to either means
the env is a new version: bump ``ENV_VERSION`` in sorry_env/version.py, add a CHANGELOG entry,
then record the new values with ``python tests/test_golden_layout.py --record``.
"""

from __future__ import annotations

import hashlib
import json
import pathlib
import sys

import numpy as np
import pytest

from sorry_env import PRESETS
from sorry_env.board import engine as E
from sorry_env.board import game
from sorry_env.board.observation import OBS_SIZE, observe
from sorry_env.version import ENV_VERSION, LAYOUT_VERSION

GOLDEN = pathlib.Path(__file__).with_name("golden_layout.json")
STEPS = 40  # moves played in each fixed game
HOW_TO_BUMP = (
    "bump ENV_VERSION in sorry_env/version.py (the env id and LAYOUT_VERSION follow), add a "
    "CHANGELOG entry saying what changed, then record the new values with "
    "`python tests/test_golden_layout.py --record` (docs/versioning.md)"
)


def action_layout_digest(preset: str) -> str:
    r = game.rules_array(preset)
    n = game.num_actions(preset)
    layout = {
        "offsets": [int(x) for x in E.action_offsets(r)],
        "num_actions": n,
        "decode": [[int(x) for x in E.decode_action(r, a)] for a in range(n)],
    }
    return hashlib.sha256(json.dumps(layout).encode()).hexdigest()


def play_digest(preset: str) -> str:
    """What every seat is shown along fixed games: observations, public states, legal moves."""
    digest = hashlib.sha256(f"{OBS_SIZE} {E.STATE_SIZE}".encode())
    r = game.rules_array(preset)
    obs = np.empty(OBS_SIZE, dtype=np.float32)
    public = np.empty(E.STATE_SIZE, dtype=np.int64)
    for players in (4,) if PRESETS[preset].teams != "none" else (2, 3, 4):
        for seed in (0, 1):
            state = game.new_state(preset, players, seed=seed)
            for k in range(STEPS):
                for seat in game.seats(state):
                    observe(state, r, seat, obs)
                    digest.update(obs.tobytes())
                E.public_state(state, public)
                digest.update(public.tobytes())
                if game.winner(state) is not None:
                    break
                legal = game.legal_actions(state, preset)
                digest.update(legal.astype(np.int64).tobytes())
                state = game.step(state, preset, int(legal[(7 * k + seed) % len(legal)]))
    return digest.hexdigest()


def current() -> dict:
    return {
        "env_version": ENV_VERSION,
        "layout_version": LAYOUT_VERSION,
        "presets": {p: {"actions": action_layout_digest(p), "play": play_digest(p)} for p in sorted(PRESETS)},
    }


@pytest.fixture(scope="module")
def recorded() -> dict:
    return json.loads(GOLDEN.read_text())


def test_the_recorded_values_belong_to_this_env_version(recorded):
    assert (recorded["env_version"], recorded["layout_version"]) == (ENV_VERSION, LAYOUT_VERSION), (
        f"tests/golden_layout.json was recorded for env version {recorded['env_version']}, the package is "
        f"at {ENV_VERSION}: record the values of the new version with `python tests/test_golden_layout.py --record`"
    )
    assert sorted(recorded["presets"]) == sorted(PRESETS), (
        f"presets changed ({sorted(PRESETS)} vs recorded {sorted(recorded['presets'])}): {HOW_TO_BUMP}"
    )


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_action_layout_is_the_recorded_one(preset, recorded):
    want = recorded["presets"].get(preset, {}).get("actions")
    assert action_layout_digest(preset) == want, f"the action layout of {preset!r} changed: {HOW_TO_BUMP}"


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_observations_and_play_are_the_recorded_ones(preset, recorded):
    want = recorded["presets"].get(preset, {}).get("play")
    assert play_digest(preset) == want, (
        f"what players of {preset!r} see or may do along fixed games changed (observation layout, state "
        f"layout or rules behaviour): {HOW_TO_BUMP}"
    )


if __name__ == "__main__":
    if sys.argv[1:] != ["--record"]:
        sys.exit("usage: python tests/test_golden_layout.py --record   (after bumping ENV_VERSION)")
    GOLDEN.write_text(json.dumps(current(), indent=1, sort_keys=True) + "\n")
    print(f"recorded {GOLDEN} for env version {ENV_VERSION}")
