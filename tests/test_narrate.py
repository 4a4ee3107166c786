"""Move narration and stable pawn labels (sorry_env.board.narrate) on hand-made positions, and the
pawn tracking checked against the engine over random games of every preset."""

import numpy as np
import pytest

from sorry_env import PRESETS, state_from_dict
from sorry_env.board import engine as E
from sorry_env.board import game
from sorry_env.board.geometry import START
from sorry_env.board.narrate import PawnLabels, describe_move, narrate, option_text

RULES = PRESETS["hasbro2003"]
S = ["start"]
MOVE = 2  # MOVE(i) = 2 + i with 4 pawns (README action table)


def seat(*pawns):
    return [list(p) for p in pawns] + [S] * (4 - len(pawns))


def position(to_move, card, red, yellow):
    return state_from_dict({"to_move": to_move, "card": card, "pawns": [red, None, yellow, None]}, RULES, seed=1)


def play(state, action, labels=None):
    labels = labels if labels is not None else PawnLabels(state, RULES)
    after = game.step(state, RULES, action)
    return describe_move(state, RULES, action, after, labels), after, labels


def test_an_opponents_move_says_whose_pawn_it_bumped():
    # The case: an opponent's "moves 3 forward" sent the player's pawn to Start unsaid.
    state = position(2, "3", seat(["track", 17]), seat(["track", 14]))
    text, after, _ = play(state, MOVE + 0)
    assert text == "Yellow plays 3: Y1 moves 3 forward from square 14 to square 17, bumping Red's R1 back to Start."
    assert game.winner(after) is None


def test_a_slide_names_every_pawn_it_sweeps_own_colour_included():
    # Yellow lands on Red's long-slide triangle (9) and slides to 13 over a Red and a Yellow pawn.
    state = position(2, "3", seat(["track", 11]), seat(["track", 12], ["track", 6]))
    text, after, labels = play(state, MOVE + 1)  # Yellow's slot 1 is the pawn on 6
    assert text == (
        "Yellow plays 3: Y2 moves 3 forward from square 6 to square 9, lands on Red's slide at square 9 "
        "and slides to square 13, sweeping Red's R1 and Yellow's Y1 back to Start."
    )
    yellow = dict(zip(labels.seat_labels(2), game_pawns(after, 2)))
    assert yellow["Y2"] == 13 and yellow["Y1"] == 66  # Y1 is in Start (code 66)


def game_pawns(state, seat_):
    return [int(state[E.PAWNS + seat_ * E.MAX_SLOTS + i]) for i in range(4)]


def test_labels_stay_with_pawns_when_the_engine_reorders_slots():
    # Red's pawns on 20 (slot 0, R1) and 10 (slot 1, R2); the 12 takes the one on 10 past the other.
    state = position(0, "12", seat(["track", 20], ["track", 10]), seat())
    labels = PawnLabels(state, RULES)
    assert labels.seat_labels(0)[:2] == ["R1", "R2"]
    text, after, labels = play(state, MOVE + 1, labels)
    assert text == "Red plays 12: R2 moves 12 forward from square 10 to square 22."
    assert game_pawns(after, 0)[:2] == [22, 20]  # the engine put the moved pawn first...
    assert labels.seat_labels(0)[:2] == ["R2", "R1"]  # ...and its label went with it


def test_reaching_home_and_entering_the_safety_zone_are_said():
    state = position(0, "2", seat(["safe", 3], ["track", 1]), seat())
    assert play(state, MOVE + 0)[0] == "Red plays 2: R1 moves 2 forward from Red safe 3 and reaches Home."
    assert play(state, MOVE + 1)[0] == (
        "Red plays 2: R2 moves 2 forward from square 1 to Red safe 0 (into the safety zone)."
    )


def test_swaps_sorry_and_starts_name_both_pawns():
    state = position(0, "11", seat(["track", 20]), seat(["track", 40]))
    swaps = [a for a in game.legal_actions(state, RULES) if game.decode_action(RULES, a)[0] == "swap"]
    text = play(state, int(swaps[0]))[0]
    assert text == "Red plays 11: R1 on square 20 swaps places with Yellow's Y1 on square 40."
    state = position(0, "SORRY", seat(), seat(["track", 40]))
    (action,) = game.legal_actions(state, RULES)
    assert play(state, int(action))[0] == (
        "Red plays SORRY: R1 leaves Start and takes square 40, sending Yellow's Y1 back to Start."
    )
    state = position(0, "1", seat(), seat(["track", 4]))
    (action,) = game.legal_actions(state, RULES)
    assert play(state, int(action))[0] == (
        "Red plays 1: R1 leaves Start onto square 4, bumping Yellow's Y1 back to Start."
    )


def test_options_are_told_with_their_consequences_before_the_choice():
    state = position(0, "3", seat(["track", 14]), seat(["track", 17]))
    labels = PawnLabels(state, RULES)
    texts = [option_text(state, RULES, int(a), labels) for a in game.legal_actions(state, RULES)]
    assert "R1 moves 3 forward from square 14 to square 17, bumping Yellow's Y1 back to Start" in texts
    assert labels.seat_labels(0) == ["R1", "R2", "R3", "R4"]  # asking does not move the labels


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_pawn_tracking_agrees_with_the_engine_over_random_games(name):
    rules = PRESETS[name]
    r = game.rules_array(rules)
    moves = 0
    for g in range(6):
        rng = np.random.default_rng(g)
        players = 4 if rules.teams != "none" else 2 + g % 3
        state = game.new_state(rules, players, seed=g)
        labels = PawnLabels(state, rules)
        buf = np.empty(game.num_actions(rules), dtype=np.int64)
        while state[E.WINNER] < 0 and state[E.TURN] < 300:
            n = E.legal_actions(state, r, buf)
            action = int(buf[rng.integers(n)])
            after = state.copy()
            E.step(after, r, action)
            move = labels.advance(state, action, after)
            assert move.consistent, (name, g, int(state[E.TURN]), game.describe_action(state, rules, action))
            text = narrate(state, rules, action, move, labels.previous)  # every kind of move can be told
            assert text.startswith(("Red", "Blue", "Yellow", "Green")) and "tracking lost" not in text
            if game.decode_action(rules, action)[0] == "seven_part":
                assert "of the 7 still to move" in text or "the 7 is finished" in text
            for s in game.seats(after):  # every label kept, none duplicated
                assert sorted(labels.numbers[s]) == list(range(1, rules.pawns_per_player + 1))
            state = after
            moves += 1
    assert moves > 500


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_recording_a_moves_events_leaves_the_same_state(name):
    # apply_move_events is apply_move plus a record: the state after must not differ, and a
    # replay of the record from the slots before the move gives the pawns after it.
    rules = PRESETS[name]
    r = game.rules_array(rules)
    buf = np.empty(game.num_actions(rules), dtype=np.int64)
    recorded = 0
    for g in range(4):
        rng = np.random.default_rng(100 + g)
        state = game.new_state(rules, 4 if rules.teams != "none" else 2 + g % 3, seed=100 + g)
        while state[E.WINNER] < 0 and state[E.TURN] < 200:
            n = E.legal_actions(state, r, buf)
            action = int(buf[rng.integers(n)])
            plain, logged, events = state.copy(), state.copy(), E.event_buffer()
            E.apply_move(plain, r, action)
            E.apply_move_events(logged, r, action, events)
            assert np.array_equal(plain, logged)
            codes = [list(state[E.PAWNS + s * E.MAX_SLOTS : E.PAWNS + (s + 1) * E.MAX_SLOTS]) for s in range(4)]
            for kind, seat, slot, _, b in events[1 : 1 + E.EVENT_SIZE * events[0]].reshape(-1, E.EVENT_SIZE):
                codes[seat][slot] = START if kind in (E.EV_BUMP, E.EV_SWEEP) else b
            for s in game.seats(state):
                assert sorted(codes[s]) == sorted(plain[E.PAWNS + s * E.MAX_SLOTS : E.PAWNS + (s + 1) * E.MAX_SLOTS])
            recorded += int(events[0])
            E.step(state, r, action)
    assert recorded > 300


def test_a_too_small_event_buffer_is_refused():
    state = position(2, "3", seat(["track", 11]), seat(["track", 12], ["track", 6]))
    with pytest.raises(ValueError, match="buffer is too small"):
        E.apply_move_events(state.copy(), game.rules_array(RULES), MOVE + 1, np.zeros(1 + E.EVENT_SIZE, np.int64))
