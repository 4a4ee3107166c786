"""Defects found by fuzzing the public API: unplayable positions, exception types and sizes,
constructor and Rules oddities, and corrupted state arrays reaching compiled code."""

import dataclasses
import json
import subprocess
import sys

import numpy as np
import pytest

from sorry_env import Rules, raw_env
from sorry_env.board import game
from sorry_env.board.state_io import state_from_dict

START4 = [[["start"]] * 4] * 4


# ---- 2. a loaded position must be playable ---------------------------------------------------
@pytest.mark.parametrize(
    "seven",
    [
        {"left": 1, "moved": [0]},  # the case: every pawn in Start, one step left
        {"left": 1, "moved": list(range(8))},  # every slot already moved
        {"left": 6, "moved": [0, 1, 2, 3, 4]},  # five pawns moved, but only one step used
    ],
)
def test_an_unfinishable_split_seven_is_refused(seven):
    state = {"to_move": 0, "card": "7", "pawns": START4, "split_seven": seven}
    with pytest.raises(ValueError, match="split_seven|no legal"):
        state_from_dict(state, game.get_rules("hasbro2003_teams"), 0)


def test_a_loaded_state_always_has_a_legal_action():
    pawns = [
        [["track", 3], ["track", 20], ["start"], ["start"]],
        [["track", 40], ["start"], ["start"], ["start"]],
        [["start"]] * 4,
        [["start"]] * 4,
    ]
    state = state_from_dict(
        {"to_move": 0, "card": "7", "pawns": pawns, "split_seven": {"left": 3, "moved": [0]}},
        game.get_rules("hasbro2003_teams"),
        0,
    )
    assert len(game.legal_actions(state, "hasbro2003_teams")) > 0


def test_a_bool_is_not_a_seven_slot():
    pawns = [[["track", 3], ["track", 20], ["start"], ["start"]]] + [[["start"]] * 4] * 3
    with pytest.raises(ValueError, match="split_seven"):
        state_from_dict(
            {"to_move": 0, "card": "7", "pawns": pawns, "split_seven": {"left": 3, "moved": [True]}},
            game.get_rules("hasbro2003_teams"),
            0,
        )


# ---- 5. every malformed state is a short ValueError -------------------------------------------
TWO = [[["start"]] * 4, None, [["start"]] * 4, None]
DEEP = [[[[]]]]
for _ in range(3000):
    DEEP = [DEEP]
MALFORMED = {
    "huge turn": {"to_move": 0, "pawns": TWO, "turn": 10**30},
    "huge pile count": {"to_move": 0, "pawns": TWO, "draw_pile": {"1": 10**30}},
    "card a list": {"to_move": 0, "pawns": TWO, "card": ["7"]},
    "card a dict": {"to_move": 0, "pawns": TWO, "card": {}},
    "deep pawn": {"to_move": 0, "pawns": [[DEEP] * 4, None, [["start"]] * 4, None]},
    "deep seat": {"to_move": 0, "pawns": [DEEP, None, [["start"]] * 4, None]},
    "long pawn": {"to_move": 0, "pawns": [[["x" * 2_400_000]] * 4, None, [["start"]] * 4, None]},
    "long card": {"to_move": 0, "pawns": TWO, "card": "7" * 2_400_000},
    "huge square": {"to_move": 0, "pawns": [[["track", 10**30]] * 4, None, [["start"]] * 4, None]},
    "to_move list": {"to_move": [0], "pawns": TWO},
    "pile a list": {"to_move": 0, "pawns": TWO, "draw_pile": [1, 2]},
    "key a tuple": {"to_move": 0, "pawns": TWO, (1, 2): 3},
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_states_are_short_value_errors(name):
    with pytest.raises(ValueError) as error:
        state_from_dict(MALFORMED[name], game.get_rules("hasbro2003"), 0)
    assert len(str(error.value)) < 400


def test_malformed_hands_and_sevens_are_value_errors():
    rules = game.get_rules("hasbro2003_points")
    for hands in ([{"5": 10**30}, None, {"5": 5}, None], [{("a",): 1}, None, {}, None], [[1], None, [2], None]):
        with pytest.raises(ValueError):
            state_from_dict({"to_move": 0, "pawns": TWO, "hands": hands}, rules, 0)
    teams = game.get_rules("hasbro2003_teams")
    for seven in ({"left": 10**30, "moved": [0]}, {"left": 1, "moved": [[0]]}, {"left": 1, "moved": [10**30]}):
        with pytest.raises(ValueError):
            state_from_dict({"to_move": 0, "card": "7", "pawns": START4, "split_seven": seven}, teams, 0)


@pytest.mark.parametrize("action", [1.5, 2.0, "3", None, True, np.float64(1.0)])
def test_describe_action_refuses_non_integers(action):
    state = game.new_state("hasbro2003", 2, seed=0)
    with pytest.raises(ValueError, match="action must be an integer"):
        game.describe_action(state, "hasbro2003", action)
    with pytest.raises(ValueError, match="action must be an integer"):
        game.decode_action("hasbro2003", action)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"seats": "01"},
        {"seats": (0.5, 1)},
        {"seats": (True, 2)},
        {"max_turns": True},
        {"num_players": 2.0},
        {"num_players": 3, "seats": (0, 1)},
        {"num_players": True},
        {"seats": b"\x00\x01"},
    ],
)
def test_constructor_oddities_are_refused(kwargs):
    with pytest.raises(ValueError):
        raw_env(**kwargs)


def test_seats_alone_still_set_the_player_count():
    assert raw_env(seats=(0, 1)).possible_agents == ["player_0", "player_1"]
    assert raw_env(num_players=2, seats=[0, 1]).possible_agents == ["player_0", "player_1"]
    assert len(raw_env().possible_agents) == 4


# ---- 6. custom Rules are validated when built -------------------------------------------------
@pytest.mark.parametrize(
    "changes, field",
    [
        ({"pack": (4.5,) * 11}, "pack"),
        ({"pack": (-1,) + (4,) * 10}, "pack"),
        ({"pack": (True,) * 11}, "pack"),
        ({"pack": (1,) * 11, "hand_size": 5}, "hand_size"),
        ({"start_cards": ("1", "1")}, "start_cards"),
        ({"start_cards": ("1", "13")}, "start_cards"),
        ({"start_cards": "12"}, "start_cards"),
        ({"start_cards": ()}, "start_cards"),
        ({"pawns_per_player": 4.0}, "pawns_per_player"),
        ({"pawns_per_player": True}, "pawns_per_player"),
        ({"sorry_forward": 4.0}, "sorry_forward"),
        ({"hand_size": 5.0}, "hand_size"),
        ({"two_draws_again": 1}, "two_draws_again"),
        ({"fast_play": "yes"}, "fast_play"),
        ({"teams": ["none"]}, "teams"),
        ({"scoring": None}, "scoring"),
        ({"name": 3}, "name"),
    ],
)
def test_custom_rules_are_validated_when_built(changes, field):
    with pytest.raises(ValueError, match=field):
        dataclasses.replace(game.get_rules("hasbro2003"), **changes)


def test_valid_custom_rules_still_build():
    rules = Rules(name="custom", pack=[4] * 11, start_cards=["1", "2", "3"])
    assert rules.pack == (4,) * 11 and rules.start_cards == ("1", "2", "3")
    assert len(game.legal_actions(game.new_state(rules, 2, seed=0), rules)) > 0


# ---- 7. the public engine functions check the state array before compiled code ---------------
CORRUPTIONS = {
    "to_move": "s[E.TO_MOVE] = 7",
    "to_move negative": "s[E.TO_MOVE] = -300",
    "to_move inactive": "s[E.TO_MOVE] = 1",
    "card": "s[E.CARD] = 99",
    "draw_pos": "s[E.DRAW_POS] = 10**6",
    "pawn code": "s[E.PAWNS] = 10**6",
    "pawn negative": "s[E.PAWNS] = -5",
    "active": "s[E.ACTIVE] = 5",
    "remain": "s[E.REMAIN] = -10**6",
    "deck": "s[E.DECK] = 10**6",
    "winner": "s[E.WINNER] = 9",
    "seven": "s[E.SEVEN_LEFT] = 10**6",
    "seven moved": "s[E.SEVEN_MOVED] = -1",
    "float dtype": "s = s.astype(float)",
    "short": "s = s[:20]",
    "2d": "s = s.reshape(1, -1)",
    "list": "s = s.tolist()",
}
CALLS = [
    "game.legal_actions(s, R)",
    "game.legal_mask(s, R)",
    "game.step(s, R, 0)",
    "game.after_move(s, R, 0)",
    "game.describe_action(s, R, 1)",
    "game.check_action(s, R, 0)",
]


def test_corrupted_state_arrays_are_refused_before_compiled_code():
    script = f"""
import numpy as np
from sorry_env.board import engine as E, game
R = "hasbro2003"
corruptions = {json.dumps(CORRUPTIONS)}
calls = {json.dumps(CALLS)}
for name, change in corruptions.items():
    for call in calls:
        s = game.new_state(R, 2, seed=3)
        exec(change)
        try:
            eval(call)
        except ValueError:
            continue
        print("ACCEPTED", name, call, flush=True)
print("DONE", flush=True)
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode == 0 and "DONE" in result.stdout, (
        result.returncode,
        result.stdout[-2000:],
        result.stderr[-2000:],
    )
    assert "ACCEPTED" not in result.stdout, result.stdout
