"""One home for each game fact: the side rule, the action decoder, dealing on an empty pile and
the named state accessors all live in the engine; the Python-level API wraps them."""

import pathlib

import numpy as np
import pytest
from numba import njit

from sorry_env import PRESETS
from sorry_env.board import engine as E
from sorry_env.board import game
from sorry_env.board.geometry import HOME, START
from sorry_env.board.rules import CARD_NAMES, get_rules
from sorry_env.board.state_io import state_from_dict, state_to_dict


@pytest.mark.parametrize("rules", sorted(PRESETS))
def test_same_side_is_the_seat_itself_or_its_partner_under_team_rules(rules):
    teams = PRESETS[rules].teams != "none"
    r = game.rules_array(rules)
    for seat in range(4):
        for other in range(4):
            expected = seat == other or (teams and abs(seat - other) == 2)
            assert E.same_side(r, seat, other) == expected
            assert game.same_side(rules, seat, other) is expected


@pytest.mark.parametrize("rules", sorted(PRESETS))
def test_one_decoder_names_every_action_index_within_its_block(rules):
    r = game.rules_array(rules)
    P, T, start0, fwd0, back0, split0, swap0, sorry0, n_card = (int(x) for x in E.action_offsets(r))
    hands = PRESETS[rules].hand_size > 0
    seen = set()
    for a in range(game.num_actions(rules)):
        card, kind, i, j, first, t = (int(x) for x in E.decode_action(r, a))
        assert game.decode_action(rules, a) == (E.ACTION_KINDS[kind], i, j, first, t)
        seen.add((card, kind, i, j, first, t, game.action_token(rules, a)))  # Fire and Ice: the token choice
        if kind in (E.ACT_FIRE_DECLINE, E.ACT_FIRE_MOVE):
            assert PRESETS[rules].fire_ice and a - (T + 1) * n_card == kind - E.ACT_FIRE_DECLINE
            continue
        if kind == E.ACT_DISCARD:
            assert hands and card == -1 and 0 <= i < len(CARD_NAMES)
            continue
        assert card == (a // n_card if hands else -1)
        low, count = {
            E.ACT_PASS: (0, 1),
            E.ACT_START: (start0, fwd0 - start0),
            E.ACT_MOVE: (fwd0, P),
            E.ACT_BACK1: (back0, P),
            E.ACT_SPLIT: (split0, swap0 - split0),
            E.ACT_SEVEN_PART: (split0, swap0 - split0),
            E.ACT_SWAP: (swap0, P * T),
            E.ACT_SORRY: (sorry0, n_card - sorry0),
        }[kind]
        assert low <= a % n_card < low + count, (a, E.ACTION_KINDS[kind])
        if kind == E.ACT_SPLIT:
            assert 0 <= i < P and 0 <= j < P and i != j and 1 <= first <= 6
    assert len(seen) == game.num_actions(rules)  # no two indices decode alike


def test_deal_on_an_empty_pile_reshuffles_like_a_draw():
    """engine.deal reshuffles an empty draw pile itself: the dealt card is the one asked, the
    rest of the pile is the real draw's reshuffled pile less that card."""
    rules = PRESETS["hasbro2003"]
    r = game.rules_array(rules)
    d = {"to_move": 0, "card": "3", "draw_pile": {}, "pawns": [[["start"]] * 4, None, [["start"]] * 4, None]}
    chance = game.after_move(state_from_dict(d, rules, 5), rules, 0)
    assert game.card(chance) is None and not any(state_to_dict(chance, rules)["draw_pile"].values())
    drawn = chance.copy()
    E.draw(drawn, r)  # what a real draw does: reshuffle, then take the top card
    for name in CARD_NAMES:
        dealt = game.deal(chance, rules, name)
        assert game.card(dealt) == name
        pile = state_to_dict(dealt, rules)["draw_pile"]
        expected = dict(zip(CARD_NAMES, rules.pack))
        expected[name] -= 1
        assert pile == expected
        compiled = chance.copy()
        E.deal(compiled, r, CARD_NAMES.index(name))
        np.testing.assert_array_equal(compiled, dealt)


def test_state_accessors_read_and_write_the_named_facts():
    rules = PRESETS["hasbro2003_points"]
    s = state_from_dict(
        {
            "to_move": 2,
            "turn": 7,
            "pawns": [[["track", 5], ["start"], ["start"], ["home"]], None, [["start"]] * 4, None],
            "hands": [{"1": 5}, None, {"2": 4, "3": 1}, None],
        },
        rules,
        0,
    )
    assert (E.to_move(s), E.turns_played(s), E.winner(s), E.card_index(s)) == (2, 7, -1, -1)
    assert E.is_running(s, 8) and not E.is_running(s, 7)
    assert [E.is_active(s, seat) for seat in range(4)] == [True, False, True, False]
    assert [E.pawn_code(s, 0, i) for i in range(4)] == [HOME, 5, START, START]  # most advanced first
    assert E.pawn_code(s, 1, 0) == -1  # an empty seat
    assert E.hand_count(s, 2, 0) == 0 and E.hand_count(s, 2, 1) == 4 and E.hand_count(s, 0, 0) == 5
    E.set_to_move(s, 0)
    assert game.to_move(s) == 0
    E.seed_generator(s, 2**32 + 9)
    assert (E.card_index(s), E.pile_count(s, 0)) == (-1, 0)  # the 1s are all in seat 0's hand


@njit
def _compiled_use(state):
    return E.to_move(state) * 100 + E.pawn_code(state, 0, 1) + int(E.is_running(state, 5))


def test_state_accessors_compile_inside_numba_code():
    s = game.new_state("hasbro2003", 2, seed=3)
    assert _compiled_use(s) == game.to_move(s) * 100 + int(s[E.PAWNS + 1]) + 1


def test_no_caller_builds_a_turn_from_public_view_by_hand():
    """agents.Turn.from_state is the one hiding constructor."""
    root = pathlib.Path(__file__).resolve().parent.parent
    needle = "Turn(" + "public_view("  # split so that this file does not match itself
    offenders = [
        str(p.relative_to(root))
        for d in ("agents", "training", "benchmarks", "tests", "sorry_env")
        for p in (root / d).glob("*.py")
        if needle in p.read_text().replace(" ", "")
    ]
    assert offenders == [], offenders


def test_equivalent_actions_group_the_moves_that_reach_the_same_position():
    # Two pawns on the track and a 7: splitting 3 + 4 and 4 + 3 between them lands differently,
    # but moving pawn A by k then B by 7 - k, and B by 7 - k then A by k, are the same move.
    rules = "hasbro2003"
    d = {
        "to_move": 0,
        "card": "7",
        "pawns": [[["track", 20], ["track", 40], ["start"], ["start"]], None, [["start"]] * 4, None],
    }
    state = state_from_dict(d, get_rules(rules), 0)
    legal = [int(a) for a in game.legal_actions(state, rules)]
    groups = game.equivalent_actions(state, rules)
    assert sorted(a for g in groups for a in g) == legal  # a partition of the legal moves
    assert [g[0] for g in groups] == sorted(g[0] for g in groups)  # in legal order
    for group in groups:
        positions = {game.after_move(state, rules, a).tobytes() for a in group}
        assert len(positions) == 1
    firsts = [game.after_move(state, rules, g[0]).tobytes() for g in groups]
    assert len(set(firsts)) == len(groups)  # distinct groups, distinct positions
    splits = [a for a in legal if game.decode_action(rules, a)[0] == "split"]
    assert len(splits) == 12  # 6 ways x 2 orders in the action space ...
    assert sum(1 for g in groups if game.decode_action(rules, g[0])[0] == "split") == 6  # ... 6 outcomes
    # A position with no such pairs: every move its own group.
    plain = state_from_dict({**d, "card": "5"}, get_rules(rules), 0)
    assert all(len(g) == 1 for g in game.equivalent_actions(plain, rules))
