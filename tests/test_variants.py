"""Rule variants (issue #5): teams, play for points with hands, packs, the 2013 edition.

Positions are literal state dicts; expectations come from the rule texts in shared/rules:
Hasbro 2003 "VARIATION—Team rules" and "Play for points", Parker 1958 "Partnership Games",
and the Wikipedia text's 2013 edition and point-scoring variant.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from sorry_env import PRESETS, env, raw_env
from sorry_env.board import engine as E
from sorry_env.board import game
from sorry_env.board.rules import CARD_NAMES
from sorry_env.board.scoring import scores
from sorry_env.board.state_io import state_from_dict, state_to_dict

START, HOME = ["start"], ["home"]


def T(square):
    return ["track", square]


def S(i):
    return ["safe", i]


def load(rules, d, seed=0):
    return state_from_dict(d, PRESETS[rules], seed)


def outcomes(state, rules):
    """{description: resulting state dict} for every legal action."""
    return {
        game.describe_action(state, rules, a): state_to_dict(game.after_move(state, rules, a), PRESETS[rules])["pawns"]
        for a in game.legal_actions(state, rules)
    }


def descriptions(state, rules):
    return sorted(game.describe_action(state, rules, a) for a in game.legal_actions(state, rules))


# ---- teams ------------------------------------------------------------------------------
TEAM_PRESETS = ["hasbro2003_teams", "parker1958_teams"]


@pytest.mark.parametrize("rules", TEAM_PRESETS)
def test_team_player_may_move_partner_pawn(rules):
    # Parker 1958: "Red draws a four card which he uses to play Yellow's man."
    s = load(
        rules,
        {"to_move": 0, "card": "4", "pawns": [[START] * 4, [START] * 4, [T(40), START, START, START], [START] * 4]},
    )
    legal = descriptions(s, rules)
    assert legal == ["partner Yellow's pawn 4 (square 40) moves 4 back"]
    after = state_to_dict(game.after_move(s, rules, game.legal_actions(s, rules)[0]), PRESETS[rules])
    assert after["pawns"][2][0] == T(36)


def test_hasbro2003_team_landing_on_partner_bumps_it():
    # Hasbro 2003 team rules: "If you land on a space occupied by a partner's pawn, BUMP it".
    rules = "hasbro2003_teams"
    s = load(
        rules,
        {
            "to_move": 0,
            "card": "5",
            "pawns": [[T(10), START, START, START], [START] * 4, [T(15), T(30), START, START], [START] * 4],
        },
    )
    results = outcomes(s, rules)
    bump = results["pawn 0 (square 10) moves 5 forward"]
    assert bump[0][0] == T(15)
    assert bump[2] == [T(30), START, START, START]
    # Yellow's pawns in canonical order: square 30 (2 from its entry at 32) first.
    assert set(results) == {
        "pawn 0 (square 10) moves 5 forward",
        "partner Yellow's pawn 4 (square 30) moves 5 forward",
        "partner Yellow's pawn 5 (square 15) moves 5 forward",
    }


def test_parker1958_partner_bumped_only_when_it_is_the_only_move():
    # Parker 1958 special rule 2: the partner is removed only when no other move exists.
    rules = "parker1958_teams"
    # A 12: Red 15 -> 27 lands on Yellow; Yellow's 27 cannot move 12 (past its Home);
    # Red's pawn on 40 can move to 52.
    pawns = [[T(15), T(40), HOME, HOME], [START] * 4, [T(27), HOME, HOME, HOME], [START] * 4]
    s = load(rules, {"to_move": 0, "card": "12", "pawns": pawns})
    # (Canonical order puts Home pawns first: the track pawns are slots 2 and 3.)
    assert descriptions(s, rules) == ["pawn 2 (square 40) moves 12 forward"]
    assert (
        len(descriptions(load("hasbro2003_teams", {"to_move": 0, "card": "12", "pawns": pawns}), "hasbro2003_teams"))
        == 2
    )
    # Without the pawn on 40 the bump is the only move, and must be made.
    pawns = [[T(15), HOME, HOME, HOME], [START] * 4, [T(27), HOME, HOME, HOME], [START] * 4]
    s = load(rules, {"to_move": 0, "card": "12", "pawns": pawns})
    assert descriptions(s, rules) == ["pawn 3 (square 15) moves 12 forward"]
    after = state_to_dict(game.after_move(s, rules, game.legal_actions(s, rules)[0]), PRESETS[rules])
    assert after["pawns"][0][-1] == T(27) and after["pawns"][2][-1] == START


@pytest.mark.parametrize("rules", TEAM_PRESETS)
def test_team_sorry_must_be_used_even_on_partner(rules):
    # No opponent on the track: the Sorry! sends a partner's pawn back (Red from its Start
    # onto Yellow), or from Yellow's Start onto Red's own pawn.
    s = load(
        rules,
        {
            "to_move": 0,
            "card": "SORRY",
            "pawns": [[T(20), START, START, START], [START] * 4, [T(50), START, START, START], [START] * 4],
        },
    )
    legal = descriptions(s, rules)
    assert legal == [
        "Sorry!: a pawn from Start bumps Yellow's pawn on square 50",
        "Sorry!: a pawn from partner Yellow's Start bumps Red's pawn on square 20",
    ]
    # With an opponent on the track, the Sorry! picks on opponents only.
    s = load(
        rules,
        {
            "to_move": 0,
            "card": "SORRY",
            "pawns": [
                [T(20), START, START, START],
                [T(5), START, START, START],
                [T(50), START, START, START],
                [START] * 4,
            ],
        },
    )
    assert descriptions(s, rules) == [
        "Sorry!: a pawn from Start bumps Blue's pawn on square 5",
        "Sorry!: a pawn from partner Yellow's Start bumps Blue's pawn on square 5",
    ]


def test_parker1958_team_split_seven_between_own_and_partner_pawn():
    # Parker 1958 special rule 3: "A seven may be split between any two men, including
    # those of a partner."
    rules = "parker1958_teams"
    s = load(
        rules,
        {
            "to_move": 0,
            "card": "7",
            "pawns": [[S(3), START, START, START], [START] * 4, [S(4), START, START, START], [START] * 4],
        },
    )
    # Red's safe 3 is 2 from Home and Yellow's safe 4 is 1: no way to use all seven.
    assert descriptions(s, rules) == ["pass"]
    s = load(
        rules,
        {
            "to_move": 0,
            "card": "7",
            "pawns": [[S(3), START, START, START], [START] * 4, [T(20), START, START, START], [START] * 4],
        },
    )
    results = outcomes(s, rules)
    both = results["split 7: pawn 0 (safe 3) moves 2, then partner Yellow's pawn 4 (square 20) moves 5"]
    assert both[0] == [HOME, START, START, START] and both[2][0] == T(25)


@pytest.mark.parametrize("rules", TEAM_PRESETS)
def test_team_swap_only_with_opponents(rules):
    s = load(
        rules,
        {
            "to_move": 0,
            "card": "11",
            "pawns": [
                [T(20), START, START, START],
                [T(40), START, START, START],
                [T(50), START, START, START],
                [START] * 4,
            ],
        },
    )
    legal = descriptions(s, rules)
    assert "11: swap pawn 0 (square 20) with Blue's pawn on square 40" in legal
    assert "11: swap partner Yellow's pawn 4 (square 50) with Blue's pawn on square 40" in legal
    assert not any("with Yellow" in d or "with Red" in d for d in legal)


@pytest.mark.parametrize("rules", TEAM_PRESETS)
def test_team_wins_only_with_all_eight_pawns_home(rules):
    e = raw_env(num_players=4, rules=rules)
    # Red is all Home and keeps playing for Yellow; Yellow's last pawn is 3 from Home.
    e.reset(
        seed=0,
        options={
            "state": {
                "to_move": 0,
                "card": "3",
                "pawns": [[HOME] * 4, [START] * 4, [S(2), HOME, HOME, HOME], [START] * 4],
            }
        },
    )
    assert [e.describe_action(a) for a in np.flatnonzero(e.observe("player_0")["action_mask"])] == [
        "partner Yellow's pawn 7 (safe 2) moves 3 forward"
    ]  # Home pawns come first
    e.step(int(np.flatnonzero(e.observe("player_0")["action_mask"])[0]))
    assert e.terminations["player_0"]
    assert e.rewards == {"player_0": 1.0, "player_1": -1.0, "player_2": 1.0, "player_3": -1.0}
    if rules == "parker1958_teams":
        assert e.infos["player_0"]["double_game"] is True


@pytest.mark.parametrize("rules", TEAM_PRESETS)
def test_one_partner_home_does_not_end_the_game(rules):
    s = load(
        rules,
        {
            "to_move": 0,
            "card": "3",
            "pawns": [[S(2), HOME, HOME, HOME], [START] * 4, [T(10), START, START, START], [START] * 4],
        },
    )
    a = [a for a in game.legal_actions(s, rules) if "safe 2" in game.describe_action(s, rules, a)][0]
    after = game.step(s, rules, a)
    assert game.winner(after) is None and game.to_move(after) == 1


def test_team_rules_need_four_seats():
    with pytest.raises(ValueError, match="four seats"):
        raw_env(num_players=2, rules="hasbro2003_teams")


def test_observation_marks_partner():
    from sorry_env.board.observation import TEAM_BASE

    e = raw_env(num_players=4, rules="hasbro2003_teams")
    e.reset(seed=0)
    obs = e.observe(e.agent_selection)["observation"]
    # player slots: self, next, partner, previous
    assert obs[TEAM_BASE : TEAM_BASE + 4].tolist() == [1, 0, 1, 0]
    plain = raw_env(num_players=4)
    plain.reset(seed=0)
    assert plain.observe(plain.agent_selection)["observation"][TEAM_BASE : TEAM_BASE + 4].tolist() == [1, 0, 0, 0]


# ---- play for points ----------------------------------------------------------------------
POINTS = ["hasbro2003_points", "parker1939_points"]


def points_state(hand, pawns=None, to_move=0):
    pawns = pawns or [[T(10), START, START, START], None, [START] * 4, None]
    hands = [hand, None, {"10": 4, "11": 1}, None]
    return {"to_move": to_move, "pawns": pawns, "hands": hands}


@pytest.mark.parametrize("rules", POINTS)
def test_choose_any_card_of_the_hand(rules):
    s = load(rules, points_state({"5": 1, "8": 1, "4": 1, "12": 2}))
    legal = descriptions(s, rules)
    assert legal == sorted(
        [
            "play 5: pawn 0 (square 10) moves 5 forward",
            "play 8: pawn 0 (square 10) moves 8 forward",
            "play 4: pawn 0 (square 10) moves 4 back",
            "play 12: pawn 0 (square 10) moves 12 forward",
        ]
    )
    a = [a for a in game.legal_actions(s, rules) if game.describe_action(s, rules, a).startswith("play 8")][0]
    after = game.step(s, rules, a)
    d = state_to_dict(after, PRESETS[rules])
    assert d["pawns"][0][0] == T(18)
    assert sum(d["hands"][0].values()) == 5 and d["hands"][0].get("8", 0) <= 1
    assert d["hands"][0].get("12", 0) >= 2 and game.to_move(after) == 2


@pytest.mark.parametrize("rules", POINTS)
def test_no_playable_card_discard_any_and_turn_ends(rules):
    # All pawns in Start and no 1, 2 or Sorry! (or no target): discard one card of choice.
    s = load(rules, points_state({"3": 2, "SORRY": 1, "12": 2}, pawns=[[START] * 4, None, [START] * 4, None]))
    assert descriptions(s, rules) == sorted(
        [
            "discard a 3 (no card in the hand can move)",
            "discard a 12 (no card in the hand can move)",
            "discard a SORRY (no card in the hand can move)",
        ]
    )
    a = [a for a in game.legal_actions(s, rules) if "discard a SORRY" in game.describe_action(s, rules, a)][0]
    after = game.step(s, rules, a)
    d = state_to_dict(after, PRESETS[rules])
    assert d["pawns"][0] == [START] * 4 and game.to_move(after) == 2
    assert d["hands"][0].get("3", 0) >= 2 and d["hands"][0].get("12", 0) >= 2 and sum(d["hands"][0].values()) == 5


@pytest.mark.parametrize("rules", POINTS)
def test_playing_a_two_gives_another_turn(rules):
    s = load(rules, points_state({"2": 1, "3": 3, "4": 1}))
    a = [a for a in game.legal_actions(s, rules) if game.describe_action(s, rules, a) == "play 2: start a pawn"][0]
    after = game.step(s, rules, a)
    assert game.to_move(after) == 0 and after[E.DRAW_AGAIN] == 1


def test_hands_are_private_in_observations():
    rules = "hasbro2003_points"
    e1, e2 = raw_env(num_players=2, rules=rules), raw_env(num_players=2, rules=rules)
    base = points_state({"1": 5})
    other = dict(base, hands=[{"1": 5}, None, {"8": 3, "10": 2}, None])
    e1.reset(seed=0, options={"state": base})
    e2.reset(seed=0, options={"state": other})
    # Same public facts and own hand, different opponent hand: identical observation for seat 0.
    np.testing.assert_array_equal(e1.observe("player_0")["observation"], e2.observe("player_0")["observation"])
    assert not np.array_equal(e1.observe("player_2")["observation"], e2.observe("player_2")["observation"])


def test_hands_validation():
    with pytest.raises(ValueError, match="holds 4 cards"):
        load("hasbro2003_points", points_state({"5": 4}))
    with pytest.raises(ValueError, match="no card in play"):
        load("hasbro2003_points", dict(points_state({"5": 5}), card="5"))
    with pytest.raises(ValueError, match="no hands"):
        load("hasbro2003", dict(points_state({"5": 5}), card="5"))
    with pytest.raises(ValueError, match="more cards than the pack"):
        load(
            "hasbro2003_points",
            {
                "to_move": 0,
                "pawns": [[START] * 4, None, [START] * 4, None],
                "hands": [{"5": 4, "7": 1}, None, {"5": 1, "3": 4}, None],
            },
        )


def final_state(rules, pawns, winner):
    s = load(
        rules,
        {"to_move": winner, "pawns": [p if p is None or winner != i else [S(4)] + p[1:] for i, p in enumerate(pawns)]},
    )
    s[E.PAWNS + winner * 4 : E.PAWNS + winner * 4 + 4] = E.HOME  # the winning move, written directly
    s[E.WINNER] = winner
    return s


def test_hasbro2003_scoring():
    pawns = [[HOME] * 4, [HOME, START, START, START], [HOME, HOME, T(3), START], [START] * 4]
    s = final_state("hasbro2003_points", pawns, 0)
    # Everyone: 5 per pawn Home. Winner: + 5 per opponent pawn not Home (3 + 2 + 4 = 9) and
    # the 25 bonus (no opponent has more than two Home).
    assert scores(s, "hasbro2003_points") == {0: 20 + 45 + 25, 1: 5, 2: 10, 3: 0}
    pawns = [[HOME] * 4, [START] * 4, None, None]
    s = final_state("hasbro2003_points", [pawns[0], None, [START] * 4, None], 0)
    assert scores(s, "hasbro2003_points") == {0: 20 + 20 + 100, 2: 0}


def test_parker1939_scoring():
    pawns = [[HOME] * 4, [HOME, START, START, START], [HOME, HOME, T(3), START], [START] * 4]
    s = final_state("parker1939_points", pawns, 0)
    # 1 per man Home; the winner + 1 per opponent man Home (1 + 2) and bonus 8 (none > 2).
    assert scores(s, "parker1939_points") == {0: 4 + 3 + 8, 1: 1, 2: 2, 3: 0}
    s = final_state("parker1939_points", [[HOME] * 4, None, [HOME, START, START, START], None], 0)
    assert scores(s, "parker1939_points") == {0: 4 + 1 + 16, 2: 1}


def test_points_rewards_switch():
    e = raw_env(num_players=2, rules="hasbro2003_points", reward="points")
    e.reset(
        seed=0,
        options={"state": points_state({"3": 4, "5": 1}, pawns=[[S(2), HOME, HOME, HOME], None, [START] * 4, None])},
    )
    mask = e.observe("player_0")["action_mask"]
    e.step(int(np.flatnonzero(mask)[0]))
    assert e.rewards == {"player_0": 20.0 + 20.0 + 100.0, "player_2": 0.0}
    assert e.infos["player_0"]["score"] == 140
    with pytest.raises(ValueError, match="scoring"):
        raw_env(num_players=2, rules="hasbro2003", reward="points")


# ---- packs, fast play, 2013 ---------------------------------------------------------------
def test_packs():
    assert sum(PRESETS["hasbro2003"].pack) == 45 and PRESETS["hasbro2003"].pack[0] == 5
    assert PRESETS["parker1958"].pack == (4,) * 11
    assert PRESETS["waddingtons1996"].pack == (5,) * 11
    for name in ("hasbro2003", "parker1958", "waddingtons1996"):
        s = game.new_state(name, num_players=2, seed=0)
        held = s[E.REMAIN : E.REMAIN + 11].sum() + 1  # the draw pile and the card in play
        assert held == sum(PRESETS[name].pack)


def test_fast_play_setup():
    s = game.new_state("hasbro2003_fast", num_players=4, seed=0)
    d = state_to_dict(s, PRESETS["hasbro2003_fast"])
    for seat in range(4):
        circle = (4 + 15 * seat) % 60
        assert d["pawns"][seat] == [T(circle), START, START, START]


def test_2013_three_pawns_and_any_number_card_starts():
    rules = "hasbro2013"
    s = game.new_state(rules, num_players=3, seed=0)
    assert all(len(p) == 3 for p in state_to_dict(s, PRESETS[rules])["pawns"] if p)
    for card in CARD_NAMES[:-1]:
        s = load(rules, {"to_move": 0, "card": card, "pawns": [[START] * 3, None, [START] * 3, None]})
        assert "start a pawn" in descriptions(s, rules)


def test_2013_sorry_may_move_four_forward():
    rules = "hasbro2013"
    s = load(
        rules, {"to_move": 0, "card": "SORRY", "pawns": [[T(10), START, START], None, [T(30), START, START], None]}
    )
    assert descriptions(s, rules) == [
        "Sorry!: a pawn from Start bumps Yellow's pawn on square 30",
        "pawn 0 (square 10) moves 4 forward",
    ]
    s = load(rules, {"to_move": 0, "card": "SORRY", "pawns": [[T(10), HOME, HOME], None, [START] * 3, None]})
    assert descriptions(s, rules) == ["pawn 2 (square 10) moves 4 forward"]


def test_2013_two_does_not_draw_again():
    rules = "hasbro2013"
    s = load(rules, {"to_move": 0, "card": "2", "pawns": [[T(10), START, START], None, [START] * 3, None]})
    after = game.step(s, rules, game.legal_actions(s, rules)[-1])
    assert game.to_move(after) == 2 and after[E.DRAW_AGAIN] == 0


# ---- every variant: PettingZoo tests and random play ----------------------------------------
VARIANTS = [(name, n) for name in PRESETS for n in ((4,) if "teams" in name else (2, 3, 4))]


@pytest.mark.parametrize("rules,players", VARIANTS)
def test_variant_api_and_seed(rules, players):
    api_test(raw_env(num_players=players, rules=rules), num_cycles=60)
    seed_test(lambda: env(num_players=players, rules=rules), num_cycles=60)


@pytest.mark.parametrize("rules,players", VARIANTS)
def test_variant_random_play_invariants(rules, players):
    r = PRESETS[rules]
    ra = game.rules_array(r)
    pack = np.array(r.pack)
    for g in range(30):
        s = game.new_state(r, num_players=players, seed=g)
        while game.winner(s) is None:
            legal = game.legal_actions(s, r)
            s = game.step(s, r, legal[(g * 7 + int(E.turns_played(s))) % len(legal)])
            for seat in game.seats(s):
                codes = s[E.PAWNS + 4 * seat : E.PAWNS + 4 * seat + r.pawns_per_player]
                on_board = codes[codes < E.HOME]
                assert len(set(on_board.tolist())) == len(on_board)
            hands = s[E.HANDS : E.HANDS + 44].reshape(4, 11)
            in_play = np.bincount([E.card_index(s)], minlength=11) if E.card_index(s) >= 0 else 0
            assert (s[E.REMAIN : E.REMAIN + 11] + hands.sum(0) + in_play <= pack).all()
            assert all(hands[seat].sum() == r.hand_size for seat in game.seats(s))
            assert E.turns_played(s) < 3000
        assert ra[0] == r.pawns_per_player


# ---- Hasbro 2003 teams: a seven split among any of the eight pawns ----------------------------
def part(state, rules, text):
    """The action whose description is `text` (failing clearly if it is not legal)."""
    found = {game.describe_action(state, rules, a): a for a in game.legal_actions(state, rules)}
    assert text in found, f"{text!r} not in {sorted(found)}"
    return found[text]


def test_hasbro2003_team_seven_splits_among_three_pawns():
    # "7 means you may split a move among any or all eight of your team's pawns."
    rules = "hasbro2003_teams"
    s = load(
        rules,
        {
            "to_move": 0,
            "card": "7",
            "pawns": [[T(10), T(20), START, START], [START] * 4, [T(40), START, START, START], [START] * 4],
        },
    )
    s = game.after_move(s, rules, part(s, rules, "split 7: pawn 0 (square 20) moves 3 (4 of the 7 left)"))
    assert game.to_move(s) == 0 and game.card(s) == "7" and s[E.SEVEN_LEFT] == 4
    d = state_to_dict(s, PRESETS[rules])
    assert d["split_seven"] == {"left": 4, "moved": [0]} and d["pawns"][0][0] == T(23)
    # The moved pawn cannot take another part; the others share the 4 left.
    assert not any(game.describe_action(s, rules, a).startswith("pawn 0") for a in game.legal_actions(s, rules))
    s = game.after_move(s, rules, part(s, rules, "split 7: pawn 1 (square 10) moves 2 (2 of the 7 left)"))
    s = game.after_move(
        s, rules, part(s, rules, "split 7: partner Yellow's pawn 4 (square 40) moves 2 (0 of the 7 left)")
    )
    d = state_to_dict(s, PRESETS[rules])
    assert "split_seven" not in d and game.to_move(s) == 1 and game.card(s) is None
    assert d["pawns"][0][:2] == [T(23), T(12)] and d["pawns"][2][0] == T(42)


def test_hasbro2003_team_seven_part_must_leave_a_finishable_rest():
    rules = "hasbro2003_teams"
    # Red's safe 3 is 2 from Home; Yellow's safe 1 is 4 from Home: 6 steps cannot use a 7.
    s = load(
        rules,
        {
            "to_move": 0,
            "card": "7",
            "pawns": [[S(3), HOME, HOME, HOME], [START] * 4, [S(1), HOME, HOME, HOME], [START] * 4],
        },
    )
    assert descriptions(s, rules) == ["pass"]  # 2 + 4 = 6 < 7: no way to use the whole seven
    s = load(
        rules,
        {
            "to_move": 0,
            "card": "7",
            "pawns": [[S(3), HOME, HOME, HOME], [START] * 4, [S(0), HOME, HOME, HOME], [START] * 4],
        },
    )
    # 2 (Red Home) + 5 (Yellow Home) = 7, in either order.
    assert descriptions(s, rules) == [
        "split 7: partner Yellow's pawn 7 (safe 0) moves 5 (2 of the 7 left)",
        "split 7: pawn 3 (safe 3) moves 2 (5 of the 7 left)",
    ]


def test_hasbro2003_team_seven_round_trips_mid_split():
    rules = "hasbro2003_teams"
    e = raw_env(num_players=4, rules=rules)
    e.reset(
        seed=0,
        options={
            "state": {
                "to_move": 0,
                "card": "7",
                "pawns": [[T(10), T(20), START, START], [START] * 4, [T(40), START, START, START], [START] * 4],
            }
        },
    )
    action = part(e.unwrapped._state, rules, "split 7: pawn 0 (square 20) moves 3 (4 of the 7 left)")
    e.step(action)
    assert e.agent_selection == "player_0"
    d = e.state_dict()
    e2 = raw_env(num_players=4, rules=rules)
    e2.reset(seed=1, options={"state": d})
    assert e2.state_dict() == d
    np.testing.assert_array_equal(e.observe("player_0")["action_mask"], e2.observe("player_0")["action_mask"])
    with pytest.raises(ValueError, match="split_seven"):
        e2.reset(options={"state": dict(d, split_seven={"left": 9, "moved": [0]})})
    with pytest.raises(ValueError, match="card must be '7'"):
        e2.reset(options={"state": {**{k: v for k, v in d.items() if k != "draw_pile"}, "card": "5"}})


def test_2013_eleven_that_can_start_a_pawn_cannot_decline():
    # An 11 may be declined only when the player has no move but swaps (Hasbro 2003 notes:
    # "if ... it is impossible to go forward 11"); in 2013 an 11 can also start a pawn.
    rules = "hasbro2013"
    s = load(rules, {"to_move": 0, "card": "11", "pawns": [[T(58), START, START], None, [T(30), START, START], None]})
    assert descriptions(s, rules) == ["11: swap pawn 0 (square 58) with Yellow's pawn on square 30", "start a pawn"]
    s = load(rules, {"to_move": 0, "card": "11", "pawns": [[T(58), S(2), HOME], None, [T(30), START, START], None]})
    assert "pass" in descriptions(s, rules)


def test_team_rules_refuse_fewer_seats_in_the_engine_too():
    with pytest.raises(ValueError, match="four seats"):
        game.new_state("parker1958_teams", num_players=2)


def test_bad_cards_and_counts_are_refused():
    after = game.after_move(
        game.new_state("hasbro2003", num_players=2, seed=0),
        "hasbro2003",
        game.legal_actions(game.new_state("hasbro2003", num_players=2, seed=0), "hasbro2003")[0],
    )
    for bad in (7, 11, -1, "6", True, 2.0):
        with pytest.raises(ValueError, match="card"):
            game.deal(after, "hasbro2003", bad)
    e = raw_env(num_players=2)
    e.reset(seed=0)
    before = e.state_dict()
    for pile in ({"1": None}, {"1": 1.5}, {"1": True}):
        with pytest.raises(ValueError, match="integer counts"):
            e.reset(
                options={"state": {"to_move": 0, "pawns": [[START] * 4, None, [START] * 4, None], "draw_pile": pile}}
            )
        assert e.state_dict() == before


def test_hands_move_words_name_the_card_once():
    rules = PRESETS["hasbro2003_points"]
    s = state_from_dict(
        {
            "to_move": 0,
            "hands": [{"11": 1, "7": 1, "SORRY": 1, "3": 2}, None, {"1": 5}, None],
            "pawns": [
                [["track", 5], ["track", 30], ["start"], ["start"]],
                None,
                [["track", 40], ["start"], ["start"], ["start"]],
                None,
            ],
        },
        rules,
        0,
    )
    words = {game.describe_action(s, rules, int(a)) for a in game.legal_actions(s, rules)}
    assert "play 3: pawn 1 (square 5) moves 3 forward" in words
    assert "play 11: swap pawn 0 (square 30) with Yellow's pawn on square 40" in words
    assert "play Sorry!: a pawn from Start bumps Yellow's pawn on square 40" in words
    assert "play split 7: pawn 0 (square 30) moves 1, then pawn 1 (square 5) moves 6" in words


# Every seat's four pawns on the track and seat 0 holding 7, 8, 10, 11 and 12: 144 legal
# actions (the split sevens, eleven swaps and every card's moves), more than one card's 142.
MANY_MOVES = {
    "to_move": 0,
    "pawns": [
        [T(6), T(21), T(30), T(55)],
        [T(29), T(25), T(2), T(37)],
        [T(28), T(57), T(43), T(41)],
        [T(26), T(3), T(19), T(44)],
    ],
    "hands": [{"7": 1, "8": 1, "10": 1, "11": 1, "12": 1}] + [{"1": 1, "2": 1, "3": 1, "4": 1, "5": 1}] * 3,
}


def test_random_playout_buffer_holds_every_legal_action_of_a_hand():
    """engine.random_playout's legal-action buffer must hold the moves of every card in the
    hand. numba does not check bounds, so the playout runs here without compiling (plain
    Python indexing raises IndexError on an overflow) for the one step from MANY_MOVES."""
    rules = "hasbro2003_points"
    s = load(rules, MANY_MOVES)
    r = game.rules_array(rules)
    n_legal = len(game.legal_actions(s, rules))
    assert n_legal > int(E.action_offsets(r)[8])  # the position really lists more than one card's actions
    code = (
        "import json, sys, numpy as np\n"
        "from sorry_env.board import engine as E, game\n"
        "from sorry_env.board.state_io import state_from_dict\n"
        "rules = game.get_rules(sys.argv[1])\n"
        "s = state_from_dict(json.loads(sys.argv[2]), rules, 0)\n"
        "print(E.random_playout(s, game.rules_array(rules), int(E.turns_played(s)) + 1))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, rules, json.dumps(MANY_MOVES)],
        capture_output=True,
        text=True,
        env={**os.environ, "NUMBA_DISABLE_JIT": "1"},
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["1"]
