"""Policy inputs from the player's own information only (issue 16): what another player holds
or the draw order never changes them, so rules with hands (play for points) can have
policies; and without hands they are the inputs the shipped files were trained on."""

import hashlib

import numpy as np
import pytest
from float_margins import near_tie  # tests/ is on sys.path (pytest rootdir import mode)
from test_policy import play_game, write_policy

from sorry_env.agents import Turn
from sorry_env.agents.gym_factory import make_gym_env
from sorry_env.agents.policy import PolicyAgent
from sorry_env.board import engine as E
from sorry_env.board import game
from sorry_env.board.observation import OBS_SIZE
from sorry_env.board.policy_input import afterstates, policy_input
from sorry_env.board.rules import CARD_NAMES, PRESETS, get_rules
from sorry_env.gym_env import PolicyInputWrapper
from sorry_env.vector_opponents import VectorOpponentEnv


def positions(rules, num_players, seed, moves=60):
    """States of a random game (a card to play or a hand to play from), one per move."""
    rng = np.random.default_rng(seed)
    state = game.new_state(rules, num_players, seed=seed)
    out = []
    while game.winner(state) is None and len(out) < moves:
        out.append(state.copy())
        legal = game.legal_actions(state, rules)
        state = game.step(state, rules, int(rng.choice(legal)))
    return out


def hidden_changed(state, rules, viewer, seed):
    """`state` with everything `viewer` cannot see re-drawn: the other hands and the draw order."""
    other = state.copy()
    E.seed_generator(other, seed)
    E.redeal_hidden(other, game.rules_array(rules), viewer)
    return other


def next_cards(state, rules, n=5):
    """The next `n` cards the draw pile gives (the draw order)."""
    state, rules_array, cards = state.copy(), game.rules_array(rules), []
    for _ in range(n):
        E.draw(state, rules_array)
        cards.append(E.card_index(state))
    return cards


def other_hands(state, viewer):
    return [[E.hand_count(state, s, c) for c in range(len(CARD_NAMES))] for s in range(4) if s != viewer]


@pytest.mark.parametrize("rules,num_players", [("hasbro2003_points", 2), ("hasbro2003_points", 4), ("hasbro2003", 3)])
def test_opponent_hands_and_draw_order_do_not_change_the_input(rules, num_players):
    rules_array = game.rules_array(rules)
    hands_differed = order_differed = 0
    for state in positions(rules, num_players, seed=num_players):
        viewer = game.to_move(state)
        other = hidden_changed(state, rules, viewer, seed=7 + int(E.turns_played(state)))
        assert not np.array_equal(state, other)  # the generator at least
        hands_differed += other_hands(state, viewer) != other_hands(other, viewer)
        order_differed += next_cards(state, rules) != next_cards(other, rules)
        same = policy_input(state, rules_array, viewer), policy_input(other, rules_array, viewer)
        np.testing.assert_array_equal(*same)
        # ... and the afterstates a policy scores, computed from either state or from the input
        seen = policy_input(state, rules_array, viewer)[OBS_SIZE:].astype(np.int64)
        a, b, c = (afterstates(s[None], rules_array) for s in (state, other, seen))
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)
        for x, y in zip(a, c):
            np.testing.assert_array_equal(x, y)
    assert order_differed > 0
    if get_rules(rules).hand_size:
        assert hands_differed > 0


def test_the_input_still_shows_what_the_player_knows():
    """Not everything is hidden: the player's own hand and the cards it has not seen are in
    its input, and differ between positions where they differ."""
    rules = "hasbro2003_points"
    rules_array = game.rules_array(rules)
    state = positions(rules, 2, seed=1, moves=1)[0]
    me = game.to_move(state)
    view = policy_input(state, rules_array, me)[OBS_SIZE:].astype(np.int64)
    mine = [E.hand_count(state, me, c) for c in range(len(CARD_NAMES))]
    assert sum(mine) == get_rules(rules).hand_size
    assert [E.hand_count(view, me, c) for c in range(len(CARD_NAMES))] == mine
    assert all(n == 0 for hand in other_hands(view, me) for n in hand)
    unseen = [E.pile_count(view, c) for c in range(len(CARD_NAMES))]
    assert sum(unseen) + sum(mine) == sum(get_rules(rules).pack)  # nothing discarded yet


@pytest.mark.parametrize("rules", sorted(r for r in PRESETS if not PRESETS[r].hand_size))
def test_without_hands_the_view_is_the_public_state(rules):
    """The inputs of policy files trained before hands were supported are unchanged."""
    rules_array = game.rules_array(rules)
    for state in positions(rules, 4, seed=2, moves=20):
        own, public = np.empty_like(state), np.empty_like(state)
        E.own_view(state, rules_array, game.to_move(state), own)
        E.public_state(state, public)
        np.testing.assert_array_equal(own, public)


@pytest.mark.float_kernels
def test_the_shipped_policies_still_choose_the_same_moves(batch_gaps):
    """sha256 of the shipped 2- and 4-player policies' batched choices on positions of their
    own games, measured with the code before own-information inputs (commit fe37363). None of
    those choices is a near tie (tests/float_margins.py), so the hash holds on any CPU."""
    digest = hashlib.sha256()
    for path, players in (("checkpoints/sorry-2p.safetensors", 2), ("checkpoints/sorry-4p.safetensors", 4)):
        agent = PolicyAgent(path)
        rng = np.random.default_rng(0)
        turns = []
        for seed in range(3):
            state = game.new_state("hasbro2003", players, seed=seed)
            while game.winner(state) is None and len(turns) < 400 * (seed + 1):
                turn = Turn.from_state(state, "hasbro2003", rng, game.legal_actions(state, "hasbro2003"))
                turns.append(turn)
                state = game.step(state, "hasbro2003", agent.act(turn))
        digest.update(np.asarray(agent.act_turns(turns), dtype=np.int64).tobytes())
    assert len(batch_gaps) > 500 and not any(map(near_tie, batch_gaps))
    assert digest.hexdigest() == "4db8a6f5fd4abf71e87a99fada42ea245fd5eeaf55c7be83f9ec76592a86e396"


@pytest.mark.parametrize("kind,num_players", [("afterstate", 2), ("mlp", 4)])
def test_a_hand_rules_policy_plays_legal_games(tmp_path, kind, num_players):
    path = write_policy(tmp_path / "p.safetensors", num_players, rules="hasbro2003_points", kind=kind)
    agents = {s: PolicyAgent(path, seed=s) for s in game.seats_for(num_players)}
    assert play_game(agents, "hasbro2003_points", num_players, seed=0) > 0


def test_the_training_envs_emit_the_learners_own_view():
    """The batched env and the Gymnasium wrapper give the input policy_input gives."""
    rules = "hasbro2003_points"
    rules_array = game.rules_array(rules)
    env = VectorOpponentEnv(3, 2, rules=rules, policy_input=True)
    obs, info = env.reset(seed=5)
    for b in range(3):
        want = policy_input(env.states[b], rules_array, int(info["learner_seat"][b]))
        np.testing.assert_array_equal(obs["observation"][b], want)
    wrapped = PolicyInputWrapper(make_gym_env(num_players=2, rules=rules, opponents="random"))
    obs, _ = wrapped.reset(seed=3)
    inner = wrapped.unwrapped
    np.testing.assert_array_equal(obs, policy_input(inner.state, rules_array, inner.learner_seat))
