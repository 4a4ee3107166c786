"""The AEC env's state() and state_space: the full game state for centralized critics."""

import warnings

import numpy as np
import pytest
from pettingzoo.test.state_test import test_state as pettingzoo_state_test
from pettingzoo.test.state_test import test_state_space as pettingzoo_state_space_test

from sorry_env import env, raw_env
from sorry_env.board import engine as E
from sorry_env.board import game
from sorry_env.board.observation import (
    GLOBAL_STATE_SIZE,
    OBS_SIZE,
    STATE_HANDS_BASE,
    STATE_TO_MOVE_BASE,
    STATE_TURN_INDEX,
    global_state,
    observe,
)


def play_legal(e, rng, steps):
    """Random legal moves; checks state() against state_space after each."""
    for _ in range(steps):
        agent = e.agent_selection
        if e.terminations[agent] or e.truncations[agent]:
            break
        e.step(int(rng.choice(np.flatnonzero(e.observe(agent)["action_mask"]))))
        s = e.state()
        assert s.dtype == np.float32 and s.shape == (GLOBAL_STATE_SIZE,) and e.state_space.contains(s)


@pytest.mark.parametrize("rules,players", [("hasbro2003", 4), ("hasbro2003_points", 3), ("hasbro2013_fire_ice", 2)])
def test_pettingzoo_state_tests(rules, players):
    e = env(num_players=players, rules=rules)
    pettingzoo_state_space_test(e)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # its checks only warn: any warning fails here
        pettingzoo_state_test(e, num_cycles=20)  # random actions: an illegal one ends the game (env())
    raw = raw_env(num_players=players, rules=rules)
    raw.reset(seed=1)
    play_legal(raw, np.random.default_rng(1), 300)


def test_state_holds_every_hand_and_the_mover():
    e = raw_env(num_players=3, rules="hasbro2003_points", max_turns=100)
    e.reset(seed=4)
    state = e.state_array
    s = e.state()
    assert np.array_equal(s[:OBS_SIZE], e.observe("player_0")["observation"])  # seat 0's observation
    assert s[STATE_TO_MOVE_BASE + game.to_move(state)] == 1 and s[STATE_TO_MOVE_BASE:STATE_HANDS_BASE].sum() == 1
    for seat in (0, 1, 2):
        hand = [E.hand_count(state, seat, c) / 5 for c in range(11)]
        assert np.allclose(s[STATE_HANDS_BASE + 11 * seat : STATE_HANDS_BASE + 11 * seat + 11], hand)
        assert sum(hand) == 1.0  # five cards
    assert s[STATE_HANDS_BASE + 33 : STATE_TURN_INDEX].sum() == 0  # seat 3 is empty
    play_legal(e, np.random.default_rng(0), 10)
    assert e.state()[STATE_TURN_INDEX] == pytest.approx(E.turns_played(e.state_array) / 100)


def test_state_sees_the_hand_that_observations_hide():
    rules = game.rules_array("hasbro2003_points")
    state = game.new_state("hasbro2003_points", 2, seed=3)
    waiting = 2 if game.to_move(state) == 0 else 0
    # Swap one card of the waiting seat's hand with a different card of the draw pile.
    held = next(c for c in range(11) if E.hand_count(state, waiting, c))
    pile = next(c for c in range(11) if E.pile_count(state, c) and c != held)
    other = state.copy()
    other[E.HANDS + waiting * 11 + held] -= 1
    other[E.HANDS + waiting * 11 + pile] += 1
    other[E.REMAIN + held] += 1
    other[E.REMAIN + pile] -= 1
    out = [np.empty(GLOBAL_STATE_SIZE, np.float32) for _ in range(2)]
    obs = [np.empty(OBS_SIZE, np.float32) for _ in range(2)]
    for s, o, g in zip((state, other), obs, out):
        observe(s, rules, game.to_move(state), o)
        global_state(s, rules, 2000, g)
    assert np.array_equal(obs[0], obs[1])  # the mover cannot tell them apart
    assert not np.array_equal(out[0], out[1])  # the state can
