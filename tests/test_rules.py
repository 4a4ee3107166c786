"""Scenario tests of the rules (issue #2) on literal positions.

Every expectation here is worked out by hand from the rule texts in ../shared/rules/ and the
choices fixed by issue #2 (which win where they differ), never from the engine. Positions are
loaded through the public state dict; results are compared as whole state dicts.

Board (issue #2): seat k's safety entry is 15k+2, its start circle 15k+4, its slides run
15k+1 -> 15k+4 and 15k+9 -> 15k+13; safe 0 is one step past the entry and Home six steps.

  seat 0: entry 2,  circle 4,  slides 1->4,   9->13
  seat 1: entry 17, circle 19, slides 16->19, 24->28
  seat 2: entry 32, circle 34, slides 31->34, 39->43
  seat 3: entry 47, circle 49, slides 46->49, 54->58

Action indices come from the table in docs/action-space.md (P = 4 pawns, T = 12 targets):
PASS 0, START 1, MOVE(i) 2+i, BACK1(i) 6+i, SPLIT(i, j, a) 10 + (i*3 + j')*6 + a-1,
SWAP(i, t) 82 + 12i + t, SORRY(t) 130 + t, with t = (k-1)*4 + slot for the k-th other
seat in turn order. Pawn slot i is the i-th pawn in canonical order, fewest steps to Home
first; every position below lists each seat's pawns in that order (checked on loading), so
the slots can be read off the literal.
"""

import numpy as np
import pytest

from sorry_env import PRESETS, raw_env, state_from_dict, state_to_dict
from sorry_env.board import game

RULES = PRESETS["hasbro2003"]
P, T = 4, 12
N_ACTIONS = 142
PASS, START = 0, 1


def MOVE(i):
    return 2 + i


def BACK1(i):
    return 2 + P + i


def SPLIT(i, j, a):
    jj = j - (1 if j > i else 0)
    return 2 + 2 * P + (i * (P - 1) + jj) * 6 + (a - 1)


def SWAP(i, t):
    return 2 + 2 * P + 6 * P * (P - 1) + i * T + t


def SORRY(t):
    return 2 + 2 * P + 6 * P * (P - 1) + P * T + t


S = ["start"]
H = ["home"]


def tr(n):
    return ["track", n]


def sf(n):
    return ["safe", n]


def seat(*pawns):
    """A seat's four pawns: the given ones (canonical order), the rest in Start."""
    return [list(p) for p in pawns] + [S] * (4 - len(pawns))


ALL_START = seat()


def pos(to_move, card, pawns, **extra):
    d = {"to_move": to_move, "card": card, "pawns": pawns}
    d.update(extra)
    return d


def two(to_move, card, s0, s2, **extra):
    """Two players on seats 0 and 2 (the default seats)."""
    return pos(to_move, card, [s0, None, s2, None], **extra)


def four(to_move, card, s0, s1, s2, s3, **extra):
    return pos(to_move, card, [s0, s1, s2, s3], **extra)


def load(d, rules=RULES, seed=0):
    s = state_from_dict(d, rules, seed)
    # The literal must list pawns in canonical order: the action slots are read off it.
    assert state_to_dict(s, rules)["pawns"] == d["pawns"], "test position not in canonical order"
    return s


def legal(d, rules=RULES):
    return set(int(a) for a in game.legal_actions(load(d, rules), rules))


def assert_legal(d, expected, rules=RULES):
    s = load(d, rules)
    got = set(int(a) for a in game.legal_actions(s, rules))
    expected = set(expected)
    if got != expected:
        extra = {a: game.describe_action(s, rules, a) for a in sorted(got - expected)}
        missing = {a: game.describe_action(s, rules, a) for a in sorted(expected - got)}
        pytest.fail(f"legal actions differ\n  unexpected: {extra}\n  missing: {missing}")
    mask = game.legal_mask(s, rules)
    assert set(np.flatnonzero(mask).tolist()) == expected


def after(d, action, rules=RULES):
    """State dict after `action` and the end of the turn (before the next draw)."""
    s = load(d, rules)
    before = state_to_dict(s, rules)
    a = game.after_move(s, rules, action)
    out = state_to_dict(a, rules)
    # Nothing but the pawns, the player to move, the draw-again flag and the turn changes.
    assert out["card"] is None
    assert out["turn"] == before["turn"] + 1
    assert out["draw_pile"] == before["draw_pile"]
    return out, game.winner(a)


def check_move(d, action, pawns, to_move, draw_again=False, winner=None, rules=RULES):
    """`action` is legal in `d` and leads exactly to `pawns` with `to_move` next."""
    assert action in legal(d, rules), game.describe_action(load(d, rules), rules, action)
    out, won = after(d, action, rules)
    assert out["pawns"] == pawns
    assert out["to_move"] == to_move
    assert out["draw_again"] is draw_again
    assert won == winner


# ---- the action formula (docs/action-space.md) ----------------------------------------------


def test_action_layout_matches_the_docs():
    assert game.num_actions(RULES) == N_ACTIONS
    assert [MOVE(0), BACK1(0), SPLIT(0, 1, 1), SWAP(0, 0), SORRY(0)] == [2, 6, 10, 82, 130]
    assert game.decode_action(RULES, SPLIT(2, 1, 4)) == ("split", 2, 1, 4, -1)
    assert game.decode_action(RULES, SPLIT(1, 3, 6)) == ("split", 1, 3, 6, -1)
    assert game.decode_action(RULES, SWAP(3, 11))[0::4] == ("swap", 11)
    assert game.decode_action(RULES, SWAP(3, 11))[1] == 3
    assert game.decode_action(RULES, SORRY(11))[0] == "sorry"
    assert game.decode_action(RULES, SORRY(11))[4] == 11
    assert game.decode_action(RULES, BACK1(2))[:2] == ("back1", 2)
    # every split index decodes to distinct (i, j, a)
    seen = {game.decode_action(RULES, a) for a in range(SPLIT(0, 1, 1), SWAP(0, 0))}
    assert len(seen) == 6 * P * (P - 1)


def test_canonical_order_fewest_steps_to_home_first():
    # seat 0: Home (0 steps), track 0 (8: two behind the entry), track 3 (65), Start (last)
    d = two(0, "3", [tr(3), S, H, tr(0)], seat(tr(2), sf(4), tr(33)))
    s = state_from_dict(d, RULES, 0)
    assert state_to_dict(s, RULES)["pawns"][0] == [H, tr(0), tr(3), S]
    # seat 2 sorts by its own entry (32): 33 is just past it, 2 is far ahead
    assert state_to_dict(s, RULES)["pawns"][2] == [sf(4), tr(2), tr(33), S]


# ---- setup and the pack -------------------------------------------------------------------


def _pack_of(state, rules):
    d = state_to_dict(state, rules)
    counts = dict(d["draw_pile"])
    counts[d["card"]] += 1
    return counts


def test_pack_hasbro2003_has_45_cards_with_five_ones():
    s = game.new_state("hasbro2003", 4, seed=3)
    counts = _pack_of(s, RULES)
    assert counts == {"1": 5, "2": 4, "3": 4, "4": 4, "5": 4, "7": 4, "8": 4, "10": 4, "11": 4, "12": 4, "SORRY": 4}
    assert sum(counts.values()) == 45


def test_pack_parker1958_has_44_cards_four_of_each():
    s = game.new_state("parker1958", 4, seed=3)
    counts = _pack_of(s, PRESETS["parker1958"])
    assert counts == {c: 4 for c in ("1", "2", "3", "4", "5", "7", "8", "10", "11", "12", "SORRY")}
    assert sum(counts.values()) == 44


def test_new_game_every_pawn_in_start():
    s = game.new_state("hasbro2003", 4, seed=5)
    assert state_to_dict(s, RULES)["pawns"] == [ALL_START] * 4
    s = game.new_state("hasbro2003", 2, seed=5)
    assert state_to_dict(s, RULES)["pawns"] == [ALL_START, None, ALL_START, None]
    s = game.new_state("hasbro2003", 3, seed=5)
    assert state_to_dict(s, RULES)["pawns"] == [ALL_START, ALL_START, ALL_START, None]


def test_fast_play_one_pawn_of_each_player_on_its_circle():
    fast = PRESETS["hasbro2003_fast"]
    s = game.new_state("hasbro2003_fast", 4, seed=5)
    assert state_to_dict(s, fast)["pawns"] == [seat(tr(4)), seat(tr(19)), seat(tr(34)), seat(tr(49))]
    s = game.new_state("hasbro2003_fast", 2, seed=5)
    assert state_to_dict(s, fast)["pawns"] == [seat(tr(4)), None, seat(tr(34)), None]
    s = game.new_state("hasbro2003_fast", seats=(1, 3), seed=5)
    assert state_to_dict(s, fast)["pawns"] == [None, seat(tr(19)), None, seat(tr(49))]


def test_first_player_comes_from_the_seed():
    firsts = {game.to_move(game.new_state("hasbro2003", 4, seed=k)) for k in range(60)}
    assert firsts == {0, 1, 2, 3}
    firsts = {game.to_move(game.new_state("hasbro2003", 2, seed=k)) for k in range(40)}
    assert firsts == {0, 2}
    a = game.new_state("hasbro2003", 4, seed=11)
    b = game.new_state("hasbro2003", 4, seed=11)
    assert np.array_equal(a, b)


def test_empty_draw_pile_reshuffles_the_discards():
    # Draw pile empty: the next draw reshuffles the whole pack (nothing is held).
    d = two(0, "3", ALL_START, ALL_START, draw_pile={})
    assert state_to_dict(load(d), RULES)["draw_pile"] == {c: 0 for c in _pack_of(load(d), RULES)}
    for seed in range(5):
        out = state_to_dict(game.step(load(d, seed=seed), RULES, PASS), RULES)
        counts = dict(out["draw_pile"])
        counts[out["card"]] += 1
        assert counts == {"1": 5, "2": 4, "3": 4, "4": 4, "5": 4, "7": 4, "8": 4, "10": 4, "11": 4, "12": 4, "SORRY": 4}


# ---- starting a pawn ----------------------------------------------------------------------


def test_one_starts_a_pawn_or_moves_one_forward():
    d = two(0, "1", seat(tr(10)), ALL_START)
    assert_legal(d, {START, MOVE(0)})
    check_move(d, START, [seat(tr(10), tr(4)), None, ALL_START, None], to_move=2)
    check_move(d, MOVE(0), [seat(tr(11)), None, ALL_START, None], to_move=2)


def test_two_starts_a_pawn_or_moves_two_forward_then_draws_again():
    d = two(0, "2", seat(tr(10)), ALL_START)
    assert_legal(d, {START, MOVE(0)})
    check_move(d, START, [seat(tr(10), tr(4)), None, ALL_START, None], to_move=0, draw_again=True)
    check_move(d, MOVE(0), [seat(tr(12)), None, ALL_START, None], to_move=0, draw_again=True)


@pytest.mark.parametrize("card", ["1", "2"])
def test_own_pawn_on_the_start_circle_blocks_starting(card):
    d = two(0, card, seat(tr(4)), ALL_START)
    assert_legal(d, {MOVE(0)})


@pytest.mark.parametrize("card", ["1", "2"])
def test_starting_bumps_an_opponent_on_the_start_circle(card):
    d = four(0, card, ALL_START, seat(tr(4)), ALL_START, ALL_START)
    assert_legal(d, {START})
    check_move(
        d,
        START,
        [seat(tr(4)), ALL_START, ALL_START, ALL_START],
        to_move=0 if card == "2" else 1,
        draw_again=card == "2",
    )


@pytest.mark.parametrize("card", ["3", "4", "5", "7", "8", "10", "11", "12"])
def test_no_other_card_starts_a_pawn(card):
    d = two(0, card, ALL_START, seat(tr(30)))
    assert_legal(d, {PASS})
    check_move(d, PASS, [ALL_START, None, seat(tr(30)), None], to_move=2)


def test_each_seat_starts_on_its_own_circle():
    for k, circle in enumerate((4, 19, 34, 49)):
        pawns = [ALL_START] * 4
        d = four(k, "1", *pawns)
        expected = [ALL_START] * 4
        expected[k] = seat(tr(circle))
        check_move(d, START, expected, to_move=(k + 1) % 4)


# ---- forward cards, jumping, bumping, blocking --------------------------------------------


@pytest.mark.parametrize(
    "card,dest", [("1", 41), ("2", 42), ("3", 43), ("5", 45), ("7", 47), ("8", 48), ("10", 50), ("11", 51), ("12", 52)]
)
def test_forward_cards_move_one_pawn_their_count(card, dest):
    d = two(0, card, [H, H, H, tr(40)], ALL_START)
    expected = {MOVE(3)} | ({BACK1(3)} if card == "10" else set())
    assert_legal(d, expected)
    check_move(
        d,
        MOVE(3),
        [[H, H, H, tr(dest)], None, ALL_START, None],
        to_move=0 if card == "2" else 2,
        draw_again=card == "2",
    )


def test_four_moves_one_pawn_four_backward():
    d = two(0, "4", [H, H, H, tr(40)], ALL_START)
    assert_legal(d, {MOVE(3)})
    check_move(d, MOVE(3), [[H, H, H, tr(36)], None, ALL_START, None], to_move=2)


def test_moves_wrap_around_square_59_to_0():
    d = two(0, "5", seat(tr(57)), ALL_START)  # 58, 59, 0, 1, 2: the entry square
    check_move(d, MOVE(0), [seat(tr(2)), None, ALL_START, None], to_move=2)
    d = two(0, "4", seat(tr(1)), ALL_START)  # 0, 59, 58, 57
    check_move(d, MOVE(0), [seat(tr(57)), None, ALL_START, None], to_move=2)


def test_pawns_jump_over_own_and_opponent_pawns():
    # seat 0 on 20 (48 steps to Home) and 11 (57); seat 2 on 12
    d = two(0, "12", seat(tr(20), tr(11)), seat(tr(12)))
    assert_legal(d, {MOVE(0), MOVE(1)})
    check_move(d, MOVE(1), [seat(tr(23), tr(20)), None, seat(tr(12)), None], to_move=2)
    check_move(d, MOVE(0), [seat(tr(32), tr(11)), None, seat(tr(12)), None], to_move=2)


def test_ending_on_an_opponent_bumps_it_to_its_start():
    d = two(0, "5", seat(tr(20)), seat(tr(25), tr(40)))
    check_move(d, MOVE(0), [seat(tr(25)), None, seat(tr(40)), None], to_move=2)


def test_ending_on_an_own_pawn_is_illegal():
    # slots 2 (25) and 3 (20): 20 + 5 = 25 is own
    d = two(0, "5", [H, H, tr(25), tr(20)], ALL_START)
    assert_legal(d, {MOVE(2)})


def test_no_legal_move_means_pass_only():
    # safe 4 + 3 overshoots Home, safe 2 + 3 = Home is the only move; with a 5 nothing moves
    d = two(0, "5", [H, H, sf(4), sf(2)], ALL_START)
    assert_legal(d, {PASS})
    check_move(d, PASS, [[H, H, sf(4), sf(2)], None, ALL_START, None], to_move=2)


def test_a_legal_move_must_be_made():
    # PASS is never offered beside a legal move (except the 11's decline, tested below)
    for card in ("1", "2", "3", "4", "5", "7", "8", "10", "12", "SORRY"):
        d = two(0, card, seat(tr(30), tr(20)), seat(tr(40)))
        assert PASS not in legal(d), card


# ---- Home ---------------------------------------------------------------------------------


def test_home_by_exact_count_only():
    d = two(0, "3", [H, H, sf(4), sf(2)], ALL_START)
    assert_legal(d, {MOVE(3)})  # safe 2 + 3 = Home; safe 4 + 3 overshoots
    check_move(d, MOVE(3), [[H, H, H, sf(4)], None, ALL_START, None], to_move=2)
    # entry square + 6 = Home; from 58 that is a 10
    d = two(0, "10", [H, H, H, tr(58)], ALL_START)
    assert_legal(d, {MOVE(3), BACK1(3)})
    check_move(d, MOVE(3), [[H, H, H, H], None, ALL_START, None], to_move=0, winner=0)
    for card in ("11", "12"):
        assert_legal(two(0, card, [H, H, H, tr(58)], ALL_START), {PASS})
    # 59 + 10 overshoots by one: the 10 must then be played one back
    d = two(0, "10", [H, H, H, tr(59)], ALL_START)
    assert_legal(d, {BACK1(3)})
    check_move(d, BACK1(3), [[H, H, H, tr(58)], None, ALL_START, None], to_move=2)


def test_safe_zone_moves_forward_inside_the_zone():
    d = two(0, "1", [H, H, sf(4), sf(2)], ALL_START)
    assert_legal(d, {MOVE(2), MOVE(3)})
    check_move(d, MOVE(2), [[H, H, H, sf(2)], None, ALL_START, None], to_move=2)
    check_move(d, MOVE(3), [[H, H, sf(4), sf(3)], None, ALL_START, None], to_move=2)
    d = two(0, "2", [H, H, sf(4), sf(2)], ALL_START)  # safe 2 + 2 = safe 4: own pawn
    assert_legal(d, {PASS})


@pytest.mark.parametrize("card", ["1", "2", "3", "4", "5", "7", "8", "10", "11", "12"])
def test_home_pawns_never_move(card):
    d = two(0, card, [H, H, H, tr(40)], seat(tr(30)))
    moves = legal(d)
    expected = {MOVE(3)}
    if card == "10":
        expected.add(BACK1(3))
    if card == "11":
        expected.add(SWAP(3, 0))
    assert moves == expected


# ---- the safety zone ----------------------------------------------------------------------


@pytest.mark.parametrize("card,dest", [("1", tr(1)), ("2", tr(2)), ("3", sf(0)), ("5", sf(2)), ("7", sf(4)), ("8", H)])
def test_backward_shortcut_four_from_circle_then_forward_enters_safety(card, dest):
    # 4 from the start circle: 4 -> 0, two squares behind the entry (2).
    d = two(0, "4", seat(tr(4)), ALL_START)
    assert_legal(d, {MOVE(0)})
    check_move(d, MOVE(0), [seat(tr(0)), None, ALL_START, None], to_move=2)
    # On a later turn a forward move passing the entry turns into the safety zone.
    d = two(0, card, seat(tr(0)), ALL_START)
    check_move(d, MOVE(0), [seat(dest), None, ALL_START, None], to_move=0 if card == "2" else 2, draw_again=card == "2")


def test_forward_overshooting_home_from_behind_the_entry_is_impossible():
    d = two(0, "12", seat(tr(0)), ALL_START)  # 0 + 12: 2 to the entry, 6 to Home, 4 over
    assert_legal(d, {PASS})


def test_backward_moves_never_enter_the_safety_zone():
    # 6 - 4 = 2: the entry square itself, not the zone
    d = two(0, "4", seat(tr(6)), ALL_START)
    check_move(d, MOVE(0), [seat(tr(2)), None, ALL_START, None], to_move=2)
    # 3 - 4 passes the entry backwards onto 59
    d = two(0, "4", seat(tr(3)), ALL_START)
    check_move(d, MOVE(0), [seat(tr(59)), None, ALL_START, None], to_move=2)
    # 5 - 4 = 1: the own short-slide triangle, no slide
    d = two(0, "4", seat(tr(5)), ALL_START)
    check_move(d, MOVE(0), [seat(tr(1)), None, ALL_START, None], to_move=2)
    # 10 back one from 3 onto the entry square
    d = two(0, "10", seat(tr(3)), ALL_START)
    check_move(d, BACK1(0), [seat(tr(2)), None, ALL_START, None], to_move=2)


@pytest.mark.parametrize(
    "start,dest", [(sf(0), tr(59)), (sf(1), tr(0)), (sf(2), tr(1)), (sf(3), tr(2)), (sf(4), sf(0))]
)
def test_four_backward_out_of_the_safety_zone_through_the_entry(start, dest):
    d = two(0, "4", seat(start), ALL_START)
    assert_legal(d, {MOVE(0)})
    check_move(d, MOVE(0), [seat(dest), None, ALL_START, None], to_move=2)


def test_ten_back_one_from_safe_0_onto_the_entry_square():
    d = two(0, "10", seat(sf(0)), ALL_START)
    assert_legal(d, {BACK1(0)})  # +10 from safe 0 overshoots Home
    check_move(d, BACK1(0), [seat(tr(2)), None, ALL_START, None], to_move=2)
    # ... and a later forward move re-enters the zone
    d = two(0, "3", seat(tr(2)), ALL_START)
    check_move(d, MOVE(0), [seat(sf(2)), None, ALL_START, None], to_move=2)


def test_only_the_own_colour_enters_a_safety_zone():
    # seat 1 passes seat 0's entry (2) and stays on the track
    d = pos(1, "5", [ALL_START, seat(tr(0)), None, None])
    check_move(d, MOVE(0), [ALL_START, seat(tr(5)), None, None], to_move=0)
    # seat 1 turns into its own zone at 17
    d = pos(1, "3", [ALL_START, seat(tr(15)), None, None])
    check_move(d, MOVE(0), [ALL_START, seat(sf(0)), None, None], to_move=0)
    d = pos(1, "2", [ALL_START, seat(tr(15)), None, None])
    check_move(d, MOVE(0), [ALL_START, seat(tr(17)), None, None], to_move=1, draw_again=True)


def test_pawn_behind_entry_after_sorry_or_swap_enters_safety():
    # Sorry! onto seat 2's pawn on 0 puts seat 0 two squares behind its entry ...
    d = two(0, "SORRY", ALL_START, seat(tr(0)))
    check_move(d, SORRY(0), [seat(tr(0)), None, ALL_START, None], to_move=2)
    # ... a swap likewise (seat 0's 30 with seat 2's 59) ...
    d = two(0, "11", seat(tr(30)), seat(tr(59)))
    check_move(d, SWAP(0, 0), [seat(tr(59)), None, seat(tr(30)), None], to_move=2)
    # ... and the next forward move turns in
    d = two(0, "5", seat(tr(59)), seat(tr(30)))
    check_move(d, MOVE(0), [seat(sf(1)), None, seat(tr(30)), None], to_move=2)


def test_safety_pawns_cannot_be_bumped_swapped_or_sorried():
    # seat 2 in its safety zone; seat 0 can reach no square that holds it
    d = two(0, "11", seat(tr(10)), seat(sf(2)))
    assert_legal(d, {MOVE(0)})
    d = two(0, "SORRY", ALL_START, seat(H, sf(2)))
    assert_legal(d, {PASS})


# ---- slides -------------------------------------------------------------------------------


def test_landing_on_a_foreign_triangle_slides_to_its_end():
    d = two(0, "3", seat(tr(13)), ALL_START)  # 16: seat 1's short slide to 19
    check_move(d, MOVE(0), [seat(tr(19)), None, ALL_START, None], to_move=2)
    d = two(0, "3", seat(tr(21)), ALL_START)  # 24: seat 1's long slide to 28
    check_move(d, MOVE(0), [seat(tr(28)), None, ALL_START, None], to_move=2)
    d = two(0, "5", seat(tr(26)), ALL_START)  # 31: seat 2's short slide to 34
    check_move(d, MOVE(0), [seat(tr(34)), None, ALL_START, None], to_move=2)


def test_own_colour_triangle_does_not_slide():
    d = two(0, "3", seat(tr(6)), ALL_START)  # 9: own long slide
    check_move(d, MOVE(0), [seat(tr(9)), None, ALL_START, None], to_move=2)
    d = two(0, "3", seat(tr(58)), ALL_START)  # 1: own short slide
    check_move(d, MOVE(0), [seat(tr(1)), None, ALL_START, None], to_move=2)
    d = pos(1, "3", [ALL_START, seat(tr(13)), None, None])  # seat 1 onto its own 16
    check_move(d, MOVE(0), [ALL_START, seat(tr(16)), None, None], to_move=0)


def test_ending_beside_a_triangle_on_the_slide_does_not_slide():
    d = four(0, "5", seat(tr(12)), seat(tr(19)), ALL_START, ALL_START)  # 17: on the slide
    check_move(d, MOVE(0), [seat(tr(17)), seat(tr(19)), ALL_START, ALL_START], to_move=1)


def test_slide_sweeps_own_and_opponent_pawns_to_start():
    # seat 0: 18 (slot 0), 13 (slot 1). 13 + 3 = 16 slides to 19 over 17 (seat 2), 18 (own),
    # 19 (seat 1 on its circle).
    d = four(0, "3", seat(tr(18), tr(13)), seat(tr(19)), seat(tr(17)), ALL_START)
    assert_legal(d, {MOVE(0), MOVE(1)})
    check_move(d, MOVE(1), [seat(tr(19)), ALL_START, ALL_START, ALL_START], to_move=1)


def test_slide_ending_on_an_own_pawn_sweeps_it():
    d = two(0, "3", seat(tr(19), tr(13)), ALL_START)
    assert_legal(d, {MOVE(0), MOVE(1)})
    check_move(d, MOVE(1), [seat(tr(19)), None, ALL_START, None], to_move=2)


def test_landing_on_an_opponent_on_a_triangle_bumps_then_slides():
    d = four(0, "3", seat(tr(13)), seat(tr(16), tr(18)), ALL_START, ALL_START)
    check_move(d, MOVE(0), [seat(tr(19)), ALL_START, ALL_START, ALL_START], to_move=1)


def test_backward_four_onto_a_foreign_triangle_slides():
    # 28 - 4 = 24, seat 1's long triangle: slide back to 28 sweeping 25..28 (own 27, seat 1's 26)
    d = four(0, "4", seat(tr(28), tr(27)), seat(tr(26)), ALL_START, ALL_START)
    assert_legal(d, {MOVE(0), MOVE(1)})
    check_move(d, MOVE(0), [seat(tr(28)), ALL_START, ALL_START, ALL_START], to_move=1)


def test_ten_back_one_onto_a_foreign_triangle_slides():
    d = two(0, "10", seat(tr(17)), ALL_START)
    assert_legal(d, {MOVE(0), BACK1(0)})
    check_move(d, BACK1(0), [seat(tr(19)), None, ALL_START, None], to_move=2)
    check_move(d, MOVE(0), [seat(tr(27)), None, ALL_START, None], to_move=2)


def test_backward_onto_own_triangle_does_not_slide():
    d = two(0, "4", seat(tr(13)), ALL_START)
    check_move(d, MOVE(0), [seat(tr(9)), None, ALL_START, None], to_move=2)


# ---- 7 ------------------------------------------------------------------------------------


def test_seven_all_moves_and_splits():
    # 30 (slot 0) and 20 (slot 1): every split is legal, both orders.
    d = two(0, "7", seat(tr(30), tr(20)), ALL_START)
    expected = {MOVE(0), MOVE(1)}
    expected |= {SPLIT(0, 1, a) for a in range(1, 7)} | {SPLIT(1, 0, a) for a in range(1, 7)}
    assert_legal(d, expected)
    check_move(d, MOVE(0), [seat(tr(37), tr(20)), None, ALL_START, None], to_move=2)
    check_move(d, MOVE(1), [seat(tr(30), tr(27)), None, ALL_START, None], to_move=2)
    # 30 + 1 = 31 slides to 34; 20 + 6 = 26
    check_move(d, SPLIT(0, 1, 1), [seat(tr(34), tr(26)), None, ALL_START, None], to_move=2)


def test_seven_both_orders_of_an_independent_split_are_legal_and_equal():
    d = two(0, "7", seat(tr(30), tr(20)), ALL_START)
    # 30 + 3 = 33, 20 + 4 = 24 slides to 28: the same in either order
    for a in (SPLIT(0, 1, 3), SPLIT(1, 0, 4)):
        check_move(d, a, [seat(tr(33), tr(28)), None, ALL_START, None], to_move=2)


def test_seven_never_from_start():
    d = two(0, "7", seat(tr(20)), ALL_START)
    assert_legal(d, {MOVE(0)})
    d = two(0, "7", ALL_START, seat(tr(20)))
    assert_legal(d, {PASS})


def test_seven_first_half_slide_sweeping_the_second_pawn_makes_that_order_illegal():
    # slot 0 on 18, slot 1 on 14. 14 + 2 = 16 slides to 19 sweeping 18: then slot 0 is in
    # Start and cannot move 5. 14 + 4 = 18 lands on the own pawn.
    d = two(0, "7", seat(tr(18), tr(14)), ALL_START)
    expected = {MOVE(0), MOVE(1)} | {SPLIT(0, 1, a) for a in range(1, 7)}
    expected |= {SPLIT(1, 0, 1), SPLIT(1, 0, 3), SPLIT(1, 0, 5), SPLIT(1, 0, 6)}
    assert_legal(d, expected)
    assert SPLIT(1, 0, 2) not in legal(d)
    # The other order: 18 + 5 = 23 first, then 14 + 2 = 16 slides to 19.
    check_move(d, SPLIT(0, 1, 5), [seat(tr(23), tr(19)), None, ALL_START, None], to_move=2)
    # 14 + 1 = 15, then 18 + 6 = 24 slides to 28
    check_move(d, SPLIT(1, 0, 1), [seat(tr(28), tr(15)), None, ALL_START, None], to_move=2)
    # 18 + 3 = 21, then 14 + 4 = 18: the square the first half vacated
    check_move(d, SPLIT(0, 1, 3), [seat(tr(21), tr(18)), None, ALL_START, None], to_move=2)


def test_seven_first_half_vacating_a_square_makes_the_second_legal():
    # slot 0 on 10, slot 1 on 7: 10 + 4 = 14 first, then 7 + 3 = 10. The reverse order
    # (7 + 3 = 10 first) lands on the own pawn.
    d = two(0, "7", seat(tr(10), tr(7)), ALL_START)
    assert SPLIT(1, 0, 3) not in legal(d)
    check_move(d, SPLIT(0, 1, 4), [seat(tr(14), tr(10)), None, ALL_START, None], to_move=2)


def test_seven_second_half_onto_the_first_pawn_is_illegal():
    d = two(0, "7", seat(tr(10), tr(5)), ALL_START)  # 10 + 1 = 11, 5 + 6 = 11
    assert SPLIT(0, 1, 1) not in legal(d)
    assert SPLIT(1, 0, 6) not in legal(d)
    assert SPLIT(0, 1, 2) in legal(d)


def test_seven_first_half_slide_onto_the_second_pawn():
    # slot 0 on 15, slot 1 on 13.
    d = two(0, "7", seat(tr(15), tr(13)), ALL_START)
    # 15 + 1 = 16 slides to 19; then 13 + 6 = 19 would end on the own pawn: illegal.
    assert SPLIT(0, 1, 1) not in legal(d)
    # 13 + 6 = 19 first; then 15 + 1 = 16 slides to 19 and sweeps the own pawn there.
    check_move(d, SPLIT(1, 0, 6), [seat(tr(19)), None, ALL_START, None], to_move=2)


def test_seven_second_half_impossible_is_illegal():
    # safe 4 (slot 0) can only move 1; track 30 (slot 1)
    d = two(0, "7", seat(sf(4), tr(30)), ALL_START)
    assert_legal(d, {MOVE(1), SPLIT(0, 1, 1), SPLIT(1, 0, 6)})
    for a in (SPLIT(0, 1, 1), SPLIT(1, 0, 6)):
        check_move(d, a, [[H, tr(36), S, S], None, ALL_START, None], to_move=2)


def test_seven_split_both_halves_reach_home_and_win():
    d = two(0, "7", [H, H, sf(4), tr(2)], seat(tr(30)))
    assert_legal(d, {SPLIT(2, 3, 1), SPLIT(3, 2, 6)})
    for a in (SPLIT(2, 3, 1), SPLIT(3, 2, 6)):
        check_move(d, a, [[H, H, H, H], None, seat(tr(30)), None], to_move=0, winner=0)


def test_seven_split_halves_bump_and_slide():
    # seat 2: 22 (slot 0), 33 (slot 1: just past its entry, farthest from Home)
    d = two(0, "7", seat(tr(30), tr(20)), seat(tr(22), tr(33)))
    # 30 + 3 = 33 bumps; 20 + 4 = 24 slides to 28
    check_move(d, SPLIT(0, 1, 3), [seat(tr(33), tr(28)), None, seat(tr(22)), None], to_move=2)
    # 20 + 2 = 22 bumps; 30 + 5 = 35
    check_move(d, SPLIT(1, 0, 2), [seat(tr(35), tr(22)), None, seat(tr(33)), None], to_move=2)


# ---- 10 -----------------------------------------------------------------------------------


def test_ten_forward_ten_or_back_one():
    d = two(0, "10", seat(tr(21), tr(20)), ALL_START)
    # 21 - 1 = 20 is own; 21 + 10 = 31 slides to 34
    assert_legal(d, {MOVE(0), MOVE(1), BACK1(1)})
    check_move(d, MOVE(0), [seat(tr(34), tr(20)), None, ALL_START, None], to_move=2)
    check_move(d, MOVE(1), [seat(tr(30), tr(21)), None, ALL_START, None], to_move=2)
    check_move(d, BACK1(1), [seat(tr(21), tr(19)), None, ALL_START, None], to_move=2)


def test_ten_back_one_bumps():
    d = two(0, "10", seat(tr(21)), seat(tr(20)))
    check_move(d, BACK1(0), [seat(tr(20)), None, ALL_START, None], to_move=2)


# ---- 11 -----------------------------------------------------------------------------------


def test_eleven_forward_or_swap_with_opponent_track_pawns_only():
    # targets from seat 0: seat 1 = t 0..3, seat 2 = t 4..7, seat 3 = t 8..11
    d = four(0, "11", seat(tr(21)), seat(tr(40)), seat(sf(2)), seat(H, tr(10)))
    assert_legal(d, {MOVE(0), SWAP(0, 0), SWAP(0, 9)})
    check_move(d, MOVE(0), [seat(tr(32)), seat(tr(40)), seat(sf(2)), seat(H, tr(10))], to_move=1)
    check_move(d, SWAP(0, 0), [seat(tr(40)), seat(tr(21)), seat(sf(2)), seat(H, tr(10))], to_move=1)
    check_move(d, SWAP(0, 9), [seat(tr(10)), seat(tr(40)), seat(sf(2)), seat(H, tr(21))], to_move=1)


def test_eleven_own_safety_start_and_home_pawns_do_not_swap():
    d = two(0, "11", [H, sf(4), sf(0), S], seat(tr(30)))
    assert_legal(d, {PASS})


def test_eleven_targets_follow_turn_order_from_the_mover():
    # seat 2 to move: k=1 seat 3 (t 0..3), k=2 seat 0 (t 4..7), k=3 seat 1 (t 8..11)
    d = four(2, "11", seat(tr(3)), seat(tr(40)), seat(tr(50)), ALL_START)
    # 50 + 11 = 61 = 1: seat 0's triangle, slides to 4 sweeping seat 0's pawn on 3
    assert_legal(d, {MOVE(0), SWAP(0, 4), SWAP(0, 8)})
    check_move(d, MOVE(0), [ALL_START, seat(tr(40)), seat(tr(4)), ALL_START], to_move=3)
    check_move(d, SWAP(0, 4), [seat(tr(50)), seat(tr(40)), seat(tr(3)), ALL_START], to_move=3)
    check_move(d, SWAP(0, 8), [seat(tr(3)), seat(tr(50)), seat(tr(40)), ALL_START], to_move=3)


def test_eleven_targets_skip_empty_seats():
    # seats 0, 1, 3; seat 1 to move: k=1 seat 3 (t 0..3), k=2 seat 0 (t 4..7)
    d = pos(1, "11", [seat(tr(10)), seat(tr(30)), None, seat(tr(45))])
    assert_legal(d, {MOVE(0), SWAP(0, 0), SWAP(0, 4)})
    check_move(d, SWAP(0, 4), [seat(tr(30)), seat(tr(10)), None, seat(tr(45))], to_move=3)
    check_move(d, SWAP(0, 0), [seat(tr(10)), seat(tr(45)), None, seat(tr(30))], to_move=3)


def test_eleven_pass_only_when_no_forward_eleven_exists():
    # 58 + 11 overshoots Home: swap or decline
    d = two(0, "11", seat(tr(58)), seat(tr(30)))
    assert_legal(d, {PASS, SWAP(0, 0)})
    check_move(d, PASS, [seat(tr(58)), None, seat(tr(30)), None], to_move=2)
    check_move(d, SWAP(0, 0), [seat(tr(30)), None, seat(tr(58)), None], to_move=2)
    # with a +11 available there is no declining
    d = two(0, "11", seat(tr(58), tr(20)), seat(tr(30)))
    assert_legal(d, {MOVE(1), SWAP(0, 0), SWAP(1, 0)})
    # no +11 and nobody to swap with: PASS alone
    d = two(0, "11", seat(tr(58)), seat(sf(0)))
    assert_legal(d, {PASS})


def test_eleven_swap_onto_a_foreign_triangle_slides_and_sweeps():
    # seat 0's 50 swaps with seat 1's pawn on its own triangle 16: seat 0 slides to 19
    # sweeping 17 (seat 2), 18 (own); seat 1's pawn goes to 50 (no triangle).
    d = four(0, "11", seat(tr(50), tr(18)), seat(tr(16)), seat(tr(17)), ALL_START)
    check_move(d, SWAP(0, 0), [seat(tr(19)), seat(tr(50)), ALL_START, ALL_START], to_move=1)


def test_eleven_swap_both_pawns_slide():
    # seat 0's 9 (own triangle) <-> seat 2's 39 (its own triangle): seat 0 slides 39 -> 43
    # sweeping its own 41; seat 2 slides 9 -> 13 sweeping its own 11.
    d = two(0, "11", seat(tr(41), tr(9)), seat(tr(11), tr(39)))
    assert SWAP(1, 1) in legal(d)
    check_move(d, SWAP(1, 1), [seat(tr(43)), None, seat(tr(13)), None], to_move=2)


def test_eleven_swap_movers_slide_first_sweeps_the_swapped_opponent():
    # seat 0 on 26 <-> seat 1 on 24 (its own triangle): seat 0 lands on 24 and slides to 28,
    # sweeping 26 where the swapped seat 1 pawn now stands.
    d = four(0, "11", seat(tr(26)), seat(tr(24)), ALL_START, ALL_START)
    check_move(d, SWAP(0, 0), [seat(tr(28)), ALL_START, ALL_START, ALL_START], to_move=1)


def test_eleven_swap_opponents_slide_can_sweep_the_mover():
    # seat 0 on 9 (own triangle) <-> seat 2 on 11: seat 0 to 11 (no slide); seat 2 to 9,
    # seat 0's triangle, slides to 13 sweeping seat 0's pawn on 11.
    d = two(0, "11", seat(tr(9)), seat(tr(11)))
    check_move(d, SWAP(0, 0), [ALL_START, None, seat(tr(13)), None], to_move=2)


def test_eleven_forward_onto_foreign_triangle_slides():
    d = two(0, "11", seat(tr(20)), ALL_START)
    check_move(d, MOVE(0), [seat(tr(34)), None, ALL_START, None], to_move=2)


# ---- Sorry! -------------------------------------------------------------------------------


def test_sorry_takes_a_pawn_from_start_onto_an_opponent():
    d = two(0, "SORRY", ALL_START, seat(sf(1), tr(30)))
    assert_legal(d, {SORRY(1)})
    check_move(d, SORRY(1), [seat(tr(30)), None, seat(sf(1)), None], to_move=2)


def test_sorry_targets_in_turn_order():
    # seat 3 to move: k=1 seat 0 (t 0..3), k=2 seat 1 (t 4..7), k=3 seat 2 (t 8..11)
    d = four(3, "SORRY", seat(tr(10)), seat(H, tr(40)), ALL_START, seat(tr(50)))
    assert_legal(d, {SORRY(0), SORRY(5)})
    check_move(d, SORRY(5), [seat(tr(10)), seat(H), ALL_START, seat(tr(40), tr(50))], to_move=0)
    check_move(d, SORRY(0), [ALL_START, seat(H, tr(40)), ALL_START, seat(tr(10), tr(50))], to_move=0)


def test_sorry_without_a_pawn_in_start_is_pass_only():
    d = two(0, "SORRY", [tr(40), tr(30), tr(20), tr(10)], seat(tr(50)))
    assert_legal(d, {PASS})
    check_move(d, PASS, [[tr(40), tr(30), tr(20), tr(10)], None, seat(tr(50)), None], to_move=2)


def test_sorry_without_a_target_is_pass_only():
    d = two(0, "SORRY", seat(tr(20)), [H, sf(0), S, S])
    assert_legal(d, {PASS})


def test_sorry_onto_a_triangle_slides():
    # seat 1's pawn on its own triangle 16: seat 0 bumps it and slides to 19 sweeping 17
    # (seat 3) and 18 (own).
    d = four(0, "SORRY", seat(tr(18)), seat(tr(16)), ALL_START, seat(tr(17)))
    assert_legal(d, {SORRY(0), SORRY(8)})
    check_move(d, SORRY(0), [seat(tr(19)), ALL_START, ALL_START, ALL_START], to_move=1)
    check_move(d, SORRY(8), [seat(tr(18), tr(17)), seat(tr(16)), ALL_START, ALL_START], to_move=1)


# ---- the 2's draw-again -------------------------------------------------------------------


def test_two_draws_again_after_a_forfeit():
    d = two(0, "2", [H, H, sf(4), sf(2)], ALL_START, turn=7)
    assert_legal(d, {PASS})
    check_move(d, PASS, [[H, H, sf(4), sf(2)], None, ALL_START, None], to_move=0, draw_again=True)
    s = game.step(load(d), RULES, PASS)
    out = state_to_dict(s, RULES)
    assert out["to_move"] == 0 and out["draw_again"] is True and out["card"] is not None
    assert out["turn"] == 8


def test_two_draws_again_after_a_move():
    d = two(0, "2", seat(tr(20)), ALL_START)
    s = game.step(load(d), RULES, MOVE(0))
    out = state_to_dict(s, RULES)
    assert out["to_move"] == 0 and out["draw_again"] is True and out["card"] is not None
    assert out["pawns"] == [seat(tr(22)), None, ALL_START, None]


def test_draw_again_card_then_turn_passes():
    d = two(0, "5", seat(tr(20)), ALL_START, draw_again=True)
    check_move(d, MOVE(0), [seat(tr(25)), None, ALL_START, None], to_move=2)
    d = two(0, "2", seat(tr(20)), ALL_START, draw_again=True)  # another 2: again
    check_move(d, MOVE(0), [seat(tr(22)), None, ALL_START, None], to_move=0, draw_again=True)


def test_two_that_wins_ends_the_game():
    d = two(0, "2", [H, H, H, sf(3)], ALL_START)
    check_move(d, MOVE(3), [[H, H, H, H], None, ALL_START, None], to_move=0, winner=0)


def test_draw_again_observed():
    from sorry_env.board.observation import DRAW_AGAIN_INDEX

    e = raw_env(num_players=2)
    e.reset(seed=1, options={"state": two(0, "2", seat(tr(20)), ALL_START)})
    assert e.observe("player_0")["observation"][DRAW_AGAIN_INDEX] == 0
    e.step(MOVE(0))
    assert e.agent_selection == "player_0"
    assert e.state_dict()["draw_again"] is True
    assert e.observe("player_0")["observation"][DRAW_AGAIN_INDEX] == 1


# ---- turn order ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "seats,order",
    [
        ((0, 2), {0: 2, 2: 0}),
        ((0, 1, 3), {0: 1, 1: 3, 3: 0}),
        ((1, 3), {1: 3, 3: 1}),
        ((2, 3), {2: 3, 3: 2}),
        ((0, 1, 2, 3), {0: 1, 1: 2, 2: 3, 3: 0}),
    ],
)
def test_turn_passes_left_skipping_empty_seats(seats, order):
    pawns = [ALL_START if k in seats else None for k in range(4)]
    for me, nxt in order.items():
        d = pos(me, "3", pawns)
        check_move(d, PASS, pawns, to_move=nxt)


def test_turn_order_through_the_env():
    e = raw_env(seats=(0, 1, 3))
    # only 3s left to draw: every turn is a forced PASS
    e.reset(seed=0, options={"state": pos(3, "3", [ALL_START, ALL_START, None, ALL_START], draw_pile={"3": 3})})
    seen = []
    for _ in range(4):
        seen.append(e.agent_selection)
        assert e.state_dict()["card"] == "3"
        e.step(PASS)
    assert seen == ["player_3", "player_0", "player_1", "player_3"]


# ---- winning, rewards, truncation ---------------------------------------------------------


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_win_rewards_plus_one_winner_minus_one_others(num_players):
    e = raw_env(num_players=num_players)
    seats = e.seats
    winner = seats[-1]
    pawns = [None] * 4
    for k in seats:
        pawns[k] = seat(tr(10 + 15 * k))
    pawns[winner] = [H, H, H, sf(4)]
    e.reset(seed=0, options={"state": pos(winner, "1", pawns)})
    assert e.agent_selection == f"player_{winner}"
    e.step(MOVE(3))
    assert all(e.terminations.values())
    assert not any(e.truncations.values())
    expected = {f"player_{k}": (1.0 if k == winner else -1.0) for k in seats}
    assert e.rewards == expected
    assert sum(e.rewards.values()) == 1 - (num_players - 1)
    # every agent collects its reward from last() and is then removed
    collected = {}
    for agent in e.agent_iter():
        _, r, term, trunc, _ = e.last()
        assert term and not trunc
        assert not e.observe(agent)["action_mask"].any()
        collected[agent] = r
        e.step(None)
    assert collected == expected
    assert e.agents == []


def test_winner_recorded_in_the_engine():
    d = two(2, "1", seat(tr(30)), [H, H, H, sf(4)])
    s = game.step(load(d), RULES, MOVE(3))
    assert game.winner(s) == 2
    assert game.card(s) is None  # no card is drawn after the win
    with pytest.raises(ValueError):
        game.step(s, RULES, PASS)


def test_truncation_at_max_turns():
    e = raw_env(num_players=2, max_turns=10)
    e.reset(seed=0, options={"state": two(0, "3", ALL_START, ALL_START, turn=9)})
    e.step(PASS)
    assert all(e.truncations.values())
    assert not any(e.terminations.values())
    assert e.rewards == {"player_0": 0.0, "player_2": 0.0}
    for _agent in e.agent_iter():
        _, r, term, trunc, _ = e.last()
        assert trunc and r == 0.0
        e.step(None)
    assert e.agents == []
    # one turn earlier nothing is truncated
    e.reset(seed=0, options={"state": two(0, "3", ALL_START, ALL_START, turn=8)})
    e.step(PASS)
    assert not any(e.truncations.values())


def test_truncation_counts_cards_from_a_new_game():
    e = raw_env(num_players=4, max_turns=25)
    e.reset(seed=3)
    steps = 0
    for _agent in e.agent_iter():
        obs, _, term, trunc, _ = e.last()
        if term or trunc:
            e.step(None)
            continue
        e.step(int(np.flatnonzero(obs["action_mask"])[0]))
        steps += 1
    assert steps == 25
