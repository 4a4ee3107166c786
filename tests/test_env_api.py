"""The PettingZoo API: api_test, seed_test, pickling, registration, errors, rendering and the
state dict round trip with its validation (issue #2, API section)."""

import copy
import re

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test

from sorry_env import env, raw_env
from sorry_env.board import game

PLAYERS = [2, 3, 4]
S = ["start"]


def seat(*pawns):
    return [list(p) for p in pawns] + [S] * (4 - len(pawns))


def random_legal(obs, rng):
    return int(rng.choice(np.flatnonzero(obs["action_mask"])))


def play(e, n_steps, rng):
    """Random legal play for up to n_steps agent steps; returns the actions taken."""
    actions = []
    for _ in range(n_steps):
        obs, _, term, trunc, _ = e.last()
        if term or trunc:
            break
        a = random_legal(obs, rng)
        e.step(a)
        actions.append(a)
    return actions


def snapshot(e):
    """Everything observable about an env (any wrapper level)."""
    u = e.unwrapped
    return {
        "state": u.state_dict(),
        "agents": list(u.agents),
        "selection": u.agent_selection,
        "rewards": dict(u.rewards),
        "cum": dict(u._cumulative_rewards),
        "terms": dict(u.terminations),
        "truncs": dict(u.truncations),
        "obs": {a: {k: v.copy() for k, v in u.observe(a).items()} for a in u.agents},
        "array": u.state_array,
    }


def assert_same(a, b):
    assert a["state"] == b["state"]
    for key in ("agents", "selection", "rewards", "cum", "terms", "truncs"):
        assert a[key] == b[key], key
    assert a["obs"].keys() == b["obs"].keys()
    for agent in a["obs"]:
        for k in ("observation", "action_mask"):
            assert np.array_equal(a["obs"][agent][k], b["obs"][agent][k]), (agent, k)
    assert np.array_equal(a["array"], b["array"])


# ---- PettingZoo's own tests ---------------------------------------------------------------


def test_api_test_other_seats_and_presets():
    api_test(raw_env(seats=(1, 3)), num_cycles=100)
    api_test(raw_env(seats=(0, 1, 3), rules="hasbro2003_fast"), num_cycles=100)
    api_test(env(num_players=4, rules="parker1958"), num_cycles=100)


@pytest.mark.skipif(not hasattr(pettingzoo, "make"), reason="pettingzoo.make needs PettingZoo 1.27")
def test_registered_with_pettingzoo_make():
    e = pettingzoo.make("aec", "sorry_env/sorry-v1", num_players=2)
    assert e.possible_agents == ["player_0", "player_2"]
    e.reset(seed=0)
    play(e, 20, np.random.default_rng(0))
    e4 = pettingzoo.make("aec", "sorry_env/sorry-v1")
    assert e4.possible_agents == ["player_0", "player_1", "player_2", "player_3"]


@pytest.mark.parametrize(
    "n,agents",
    [
        (2, ["player_0", "player_2"]),
        (3, ["player_0", "player_1", "player_2"]),
        (4, ["player_0", "player_1", "player_2", "player_3"]),
    ],
)
def test_agents_named_by_seat(n, agents):
    e = raw_env(num_players=n)
    assert e.possible_agents == agents
    e.reset(seed=1)
    assert e.agents == agents
    for a in agents:
        assert e.action_space(a).n == 142
        assert e.observation_space(a)["action_mask"].shape == (142,)


# ---- pickling -----------------------------------------------------------------------------


def test_deepcopy_is_independent():
    e = raw_env(num_players=2)
    e.reset(seed=4)
    play(e, 10, np.random.default_rng(1))
    c = copy.deepcopy(e)
    before = c.state_dict()
    play(e, 10, np.random.default_rng(2))
    assert c.state_dict() == before


# ---- bad actions --------------------------------------------------------------------------


def _legal_list(e):
    return np.flatnonzero(e.observe(e.agent_selection)["action_mask"]).tolist()


@pytest.mark.parametrize("bad", [141, 142, -1, 10**6, 2.5, "3", None, [1]])
def test_raw_env_rejects_bad_actions_naming_the_legal_ones(bad):
    e = raw_env(num_players=2)
    e.reset(seed=0, options={"state": {"to_move": 0, "card": "5", "pawns": [seat(["track", 20]), None, seat(), None]}})
    legal = _legal_list(e)
    assert legal == [2]
    before = snapshot(e)
    with pytest.raises(ValueError) as info:
        e.step(bad)
    assert str(legal) in str(info.value)
    assert_same(before, snapshot(e))


def test_raw_env_illegal_in_range_action_names_it():
    e = raw_env(num_players=4)
    e.reset(seed=3)
    legal = set(_legal_list(e))
    bad = next(a for a in range(142) if a not in legal)
    before = snapshot(e)
    with pytest.raises(ValueError, match=rf"\b{bad}\b") as info:
        e.step(bad)
    assert str(sorted(legal)) in str(info.value)
    assert_same(before, snapshot(e))
    # numpy integers are accepted like ints
    good = np.int64(min(legal))
    e.step(good)


def test_env_wrapper_terminates_on_illegal_move():
    e = env(num_players=3)
    e.reset(seed=2)
    offender = e.agent_selection
    legal = set(_legal_list(e))
    bad = next(a for a in range(142) if a not in legal)
    e.step(bad)  # no exception: PettingZoo's convention
    u = e.unwrapped
    assert all(u.terminations.values()) or all(u.truncations.values())
    assert u.rewards[offender] == -1
    assert all(r == 0 for a, r in u.rewards.items() if a != offender)
    got = {}
    for agent in e.agent_iter():
        _, r, term, trunc, _ = e.last()
        assert term or trunc
        got[agent] = r
        e.step(None)
    assert got[offender] == -1
    assert e.unwrapped.agents == []


def test_env_wrapper_out_of_range_action():
    e = env(num_players=2)
    e.reset(seed=2)
    with pytest.raises(AssertionError, match="not in action space"):  # PettingZoo's bounds wrapper
        e.step(142)


# ---- observation (docs/observation.md layout) ----------------------------------------------


def test_observation_layout_from_the_docs():
    state = {
        "to_move": 1,
        "card": "10",
        "draw_again": True,
        "pawns": [seat(["safe", 2]), seat(["track", 19]), seat(["track", 34]), seat(["home"])],
    }
    e = raw_env(num_players=4)
    e.reset(seed=0, options={"state": state})
    obs = e.observe("player_1")["observation"]
    assert obs.dtype == np.float32 and obs.min() >= 0 and obs.max() <= 1

    def pawn(p, i, code):
        return (p * 4 + i) * 67 + code

    # viewer seat 1 first, then seats 2, 3, 0; track squares rotated by 15 (seat 1's side -> 0)
    expected_ones = {pawn(0, 0, 4), pawn(1, 0, 19), pawn(2, 0, 65), pawn(3, 0, 62)}
    for p in range(4):
        expected_ones |= {pawn(p, i, 66) for i in (1, 2, 3)}
    assert set(np.flatnonzero(obs[:1072]).tolist()) == expected_ones
    assert set(np.flatnonzero(obs[1072:1088]).tolist()) == {0, 4 + 1, 8 + 2, 12 + 3}
    assert np.flatnonzero(obs[1088:1099]).tolist() == [7]  # "10"
    assert obs[1099] == 1
    remain = [5, 4, 4, 4, 4, 4, 4, 3, 4, 4, 4]
    assert np.allclose(obs[1100:1111], np.array(remain) / 5)
    progress = [
        64,
        66,
        66,
        66,  # seat 1 on its circle (64 steps from Home), 3 in Start
        64,
        66,
        66,
        66,  # seat 2 on its circle 34
        0,
        66,
        66,
        66,  # seat 3: one pawn Home
        3,
        66,
        66,
        66,
    ]  # seat 0: safe 2 is 3 steps from Home
    assert np.allclose(obs[1111:1127], np.array(progress) / 66)
    # seat 0's view of the same position: its own pawn first, seat 1's circle is square 19
    obs0 = e.observe("player_0")["observation"]
    assert obs0[pawn(0, 0, 62)] == 1 and obs0[pawn(1, 0, 19)] == 1 and obs0[pawn(2, 0, 34)] == 1
    # two players: the empty player slots are all zero
    e2 = raw_env(num_players=2)
    e2.reset(seed=0, options={"state": {"to_move": 2, "card": "3", "pawns": [seat(["track", 10]), None, seat(), None]}})
    o = e2.observe("player_2")["observation"]
    assert o[pawn(0, 0, 66)] == 1 and o[pawn(1, 0, (10 - 30) % 60)] == 1
    assert not o[pawn(2, 0, 0) : pawn(4, 0, 0)].any()
    assert set(np.flatnonzero(o[1072:1088]).tolist()) == {0, 4 + 2}


# ---- rendering ----------------------------------------------------------------------------


def test_render_ansi_shows_pawn_letters():
    state = {
        "to_move": 0,
        "card": "3",
        "pawns": [seat(["track", 10]), seat(["track", 25]), seat(["track", 40]), seat(["track", 55])],
    }
    e = raw_env(num_players=4, render_mode="ansi")
    e.reset(seed=0, options={"state": state})
    text = e.render()
    assert isinstance(text, str)
    grid = "\n".join(text.split("\n")[:18])  # the board with its square numbers, without the legend
    for letter in "RBYG":
        assert re.search(letter + r"\d", grid), letter
    e.step(2)  # Red's pawn 10 -> 13: the drawing changes
    assert e.render() != text
    # two players: only their colours are drawn as pawns
    e2 = raw_env(num_players=2, render_mode="ansi")
    e2.reset(
        seed=0,
        options={"state": {"to_move": 0, "card": "3", "pawns": [seat(["track", 10]), None, seat(["track", 40]), None]}},
    )
    grid = "\n".join(e2.render().split("\n")[:18])  # the board with its square numbers, without the legend
    assert re.search(r"R\d", grid) and re.search(r"Y\d", grid)
    assert not re.search(r"B\d", grid) and not re.search(r"G\d", grid)


def test_render_without_mode_returns_none():
    e = raw_env(num_players=2)
    e.reset(seed=0)
    assert e.render() is None


def test_constructor_validation():
    for kwargs in (
        {"num_players": 1},
        {"num_players": 5},
        {"seats": (0, 0)},
        {"seats": (0, 4)},
        {"seats": (1,)},
        {"seats": (0, 1, 2, 3, 0)},
        {"rules": "nope"},
        {"render_mode": "video"},
        {"max_turns": 0},
    ):
        with pytest.raises(ValueError):
            raw_env(**kwargs)


# ---- state dicts --------------------------------------------------------------------------


@pytest.mark.parametrize("n", PLAYERS)
def test_state_dict_round_trip_at_random_positions(n):
    rng = np.random.default_rng(n)
    src = raw_env(num_players=n)
    dst = raw_env(num_players=n)
    checked = 0
    for game_seed in range(12):
        src.reset(seed=game_seed)
        while src.agents:
            obs, _, term, trunc, _ = src.last()
            if term or trunc:
                break
            if rng.random() < 0.15:
                d = src.state_dict()
                dst.reset(seed=int(rng.integers(1000)), options={"state": d})
                assert dst.state_dict() == d
                assert dst.agent_selection == src.agent_selection
                for agent in src.agents:
                    o1, o2 = src.observe(agent), dst.observe(agent)
                    assert np.array_equal(o1["observation"], o2["observation"])
                    assert np.array_equal(o1["action_mask"], o2["action_mask"])
                checked += 1
            src.step(random_legal(obs, rng))
    assert checked > 200


def test_hidden_draw_order_comes_from_the_reset_seed():
    state = {"to_move": 0, "card": "3", "pawns": [seat(), None, seat(), None]}

    def next_cards(seed):
        e = raw_env(num_players=2)
        e.reset(seed=seed, options={"state": state})
        cards = []
        for _ in range(60):  # past the end of the pile: the reshuffle comes from the seed too
            e.step(int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[0]))
            cards.append(e.state_dict()["card"])
        return cards

    assert next_cards(1) == next_cards(1)
    assert len({tuple(next_cards(s)) for s in range(6)}) == 6


def test_state_dict_is_json_able():
    import json

    e = raw_env(num_players=3)
    e.reset(seed=8)
    play(e, 50, np.random.default_rng(0))
    d = e.state_dict()
    assert json.loads(json.dumps(d)) == d


def test_state_dict_defaults_and_draw_pile():
    e = raw_env(num_players=2)
    e.reset(seed=0, options={"state": {"to_move": 2, "card": "SORRY", "pawns": [seat(), None, seat(), None]}})
    d = e.state_dict()
    assert d["turn"] == 0 and d["draw_again"] is False and d["card"] == "SORRY"
    assert d["draw_pile"] == {
        "1": 5,
        "2": 4,
        "3": 4,
        "4": 4,
        "5": 4,
        "7": 4,
        "8": 4,
        "10": 4,
        "11": 4,
        "12": 4,
        "SORRY": 3,
    }
    # card null: one is drawn from the given pile
    e.reset(
        seed=0,
        options={"state": {"to_move": 0, "card": None, "draw_pile": {"7": 1}, "pawns": [seat(), None, seat(), None]}},
    )
    d = e.state_dict()
    assert d["card"] == "7" and sum(d["draw_pile"].values()) == 0


def _valid(pawns=None, **kw):
    d = {
        "to_move": 0,
        "card": "5",
        "pawns": pawns
        if pawns is not None
        else [seat(["track", 10], ["safe", 1]), seat(["track", 20]), seat(["track", 30]), seat()],
    }
    d.update(kw)
    return d


BAD_STATES = {
    "not a dict": ["to_move", 0],
    "unknown key": _valid(colour="red"),
    "missing pawns": {"to_move": 0, "card": "5"},
    "missing to_move": {"card": "5", "pawns": _valid()["pawns"]},
    "three pawns": _valid([seat(["track", 10])[:3], seat(), seat(), seat()]),
    "five pawns": _valid([seat(["track", 10]) + [S], seat(), seat(), seat()]),
    "three seats listed": _valid([seat(), seat(), seat()]),
    "two own pawns on a track square": _valid([seat(["track", 10], ["track", 10]), seat(), seat(), seat()]),
    "two own pawns on a safe square": _valid([seat(["safe", 2], ["safe", 2]), seat(), seat(), seat()]),
    "two colours on a track square": _valid([seat(["track", 10]), seat(["track", 10]), seat(), seat()]),
    "track out of range": _valid([seat(["track", 60]), seat(), seat(), seat()]),
    "negative track": _valid([seat(["track", -1]), seat(), seat(), seat()]),
    "safe out of range": _valid([seat(["safe", 5]), seat(), seat(), seat()]),
    "unknown position kind": _valid([seat(["diamond", 3]), seat(), seat(), seat()]),
    "home with a number": _valid([seat(["home", 1]), seat(), seat(), seat()]),
    "track without a number": _valid([seat(["track"]), seat(), seat(), seat()]),
    "float square": _valid([seat(["track", 3.0]), seat(), seat(), seat()]),
    "bool square": _valid([seat(["track", True]), seat(), seat(), seat()]),
    "unknown card": _valid(card="6"),
    "card as int": _valid(card=5),
    "to_move empty seat": _valid([seat(), seat(), None, seat()], to_move=2),
    "to_move out of range": _valid(to_move=4),
    "to_move negative": _valid(to_move=-1),
    "to_move bool": _valid(to_move=True),
    "one seat only": _valid([seat(), None, None, None]),
    "finished game": _valid([[["home"]] * 4, seat(), seat(), seat()]),
    "draw pile over the pack": _valid(draw_pile={"3": 5}),
    "draw pile with the card in play over the pack": _valid(draw_pile={"5": 4}),
    "draw pile negative": _valid(draw_pile={"3": -1}),
    "draw pile unknown card": _valid(draw_pile={"6": 1}),
    "draw_again not bool": _valid(draw_again=1),
    "negative turn": _valid(turn=-3),
    # Seat 1's short-slide triangle (16): a seat 0 pawn landing there slides on to 19.
    "pawn on a foreign slide triangle": _valid([seat(["track", 16]), seat(), seat(), seat()]),
}


@pytest.mark.parametrize("name", list(BAD_STATES))
def test_malformed_state_raises_and_leaves_env_unchanged(name):
    e = raw_env(num_players=4)
    e.reset(seed=7)
    play(e, 30, np.random.default_rng(3))
    before = snapshot(e)
    with pytest.raises(ValueError):
        e.reset(seed=1, options={"state": BAD_STATES[name]})
    assert_same(before, snapshot(e))
    # the env still plays on
    play(e, 5, np.random.default_rng(4))


def test_state_with_other_seats_than_the_env_raises_and_leaves_env_unchanged():
    e = raw_env(num_players=2)  # seats 0 and 2
    e.reset(seed=7)
    play(e, 10, np.random.default_rng(3))
    before = snapshot(e)
    for pawns in ([seat(), seat(), None, None], [seat(), seat(), seat(), seat()], [None, seat(), None, seat()]):
        with pytest.raises(ValueError):
            e.reset(seed=1, options={"state": {"to_move": 1, "card": "3", "pawns": pawns}})
        assert_same(before, snapshot(e))


def test_malformed_state_through_the_wrapped_env():
    e = env(num_players=4)
    e.reset(seed=7)
    before = e.unwrapped.state_dict()
    with pytest.raises(ValueError):
        e.reset(seed=1, options={"state": BAD_STATES["two colours on a track square"]})
    assert e.unwrapped.state_dict() == before


def test_error_messages_name_the_problem():
    from sorry_env import PRESETS, state_from_dict

    r = PRESETS["hasbro2003"]
    cases = {
        "unknown card": "card",
        "two colours on a track square": "10",
        "to_move empty seat": "to_move",
        "unknown key": "colour",
        "finished game": "Home",
        "pawn on a foreign slide triangle": "triangle of seat 1's slide",
    }
    for name, word in cases.items():
        with pytest.raises(ValueError, match=word):
            state_from_dict(BAD_STATES[name], r, 0)


def test_raw_env_misuse_gets_a_clear_error():
    e = raw_env(num_players=2)
    for use in (
        lambda: e.step(0),
        lambda: e.observe("player_0"),
        e.state_dict,
        lambda: e.state_array,
        lambda: e.describe_action(0),
    ):
        with pytest.raises(RuntimeError, match="call reset"):
            use()
    for seed in (-1, 1.5, True, "7"):
        with pytest.raises(ValueError, match="seed must be a non-negative integer"):
            e.reset(seed=seed)
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        game.new_state("hasbro2003", 2, seed=-1)
    e.reset(seed=3)
    with pytest.raises(ValueError, match="unknown agent 'player_1'"):
        e.observe("player_1")  # two players sit at seats 0 and 2
    for _agent in e.agent_iter():
        obs, _, term, trunc, _ = e.last()
        e.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
    assert not e.agents
    with pytest.raises(RuntimeError, match="the game is over"):
        e.step(0)
    assert e.observe("player_0")["action_mask"].sum() == 0  # the final position can still be seen


def test_a_loaded_position_at_the_turn_limit_is_truncated_at_once():
    e = raw_env(num_players=2, max_turns=5)
    e.reset(
        seed=0,
        options={
            "state": {
                "to_move": 0,
                "card": "3",
                "turn": 9,
                "pawns": [[["track", 12]] + [["start"]] * 3, None, [["start"]] * 4, None],
            }
        },
    )
    assert all(e.truncations.values()) and not any(e.terminations.values())
    assert e.observe("player_0")["action_mask"].sum() == 0
    e.reset(
        seed=0,
        options={
            "state": {
                "to_move": 0,
                "card": "3",
                "turn": 4,
                "pawns": [[["track", 12]] + [["start"]] * 3, None, [["start"]] * 4, None],
            }
        },
    )
    assert not any(e.truncations.values()) and e.observe("player_0")["action_mask"].sum() > 0
