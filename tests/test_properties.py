"""Random-play property tests (issue #2, Tests): thousands of random games with invariants
checked after every step, every masked action stepped and every unmasked one refused on
sampled positions, termination and rewards, and an independent pure-Python reference of
the move rules compared with the engine on thousands of positions.

The invariant checker is compiled (numba) so that it can follow every step of thousands of
games quickly; it is written here from the rules, not taken from the engine.
"""

import itertools

import numpy as np
import pytest
from numba import njit

from sorry_env import PRESETS, env, state_from_dict, state_to_dict
from sorry_env.board import engine as E
from sorry_env.board import game
from sorry_env.board.geometry import SLIDE_OWNER
from sorry_env.board.rules import CARD_NAMES

# ---- configurations -----------------------------------------------------------------------

SEATINGS = {2: (0, 2), 3: (0, 1, 2), 4: (0, 1, 2, 3)}
ODD_SEATINGS = [(0, 1), (1, 3), (0, 1, 3), (1, 2, 3)]


def _issue2_play(rules):
    """Presets played as issue #2 defines the game: one drawn card per turn, every player for
    itself. Team play (multi-part sevens, partner moves), hands of cards (play for points) and
    Fire and Ice (a decision before the draw, token choices) change the turn structure; their
    own tests live with those variants (tests/test_fire_ice.py)."""
    return (
        not getattr(rules, "fire_ice", False)
        and getattr(rules, "teams", "none") == "none"
        and not getattr(rules, "hand_size", 0)
        and getattr(rules, "scoring", "none") == "none"
    )


PLAIN_PRESETS = [n for n, r in PRESETS.items() if _issue2_play(r)]
CONFIGS = [(n, seats) for n in PLAIN_PRESETS for seats in SEATINGS.values()]
# issue #2's own presets must be among them
for _name in ("hasbro2003", "hasbro2003_fast", "parker1958"):
    assert (_name, (0, 2)) in CONFIGS and (_name, (0, 1, 2, 3)) in CONFIGS

HOME, START, SAFE0 = 65, 66, 60  # pawn codes (state layout documented in sorry_env.board.geometry)
C2, C11 = CARD_NAMES.index("2"), CARD_NAMES.index("11")


def _ids(configs):
    return [f"{n}-{''.join(map(str, s))}" for n, s in configs]


# ---- compiled invariant checks --------------------------------------------------------------

ERRORS = {
    1: "pawn slots: an active seat must hold exactly pawns_per_player valid codes, others -1",
    2: "a seat's pawns are not in canonical order (fewest steps to Home first)",
    3: "two pawns of one colour share a track or safe square",
    4: "two pawns share a track square",
    5: "the deck is not the pack, or REMAIN does not match the draw pile",
    6: "the card in play is not the last card drawn (or a card after the win)",
    7: "to_move is not a seat in play",
    8: "winner flag wrong (a finished side without WINNER, or WINNER without all Home)",
    9: "TURN did not advance by one",
    10: "a Home pawn moved / Home count fell",
    11: "a pawn of a seat not moving changed other than by going back to Start or a swap",
    12: "turn order or draw-again flag wrong after the move",
    13: "legal action list malformed (empty, out of range, duplicate, PASS beside moves)",
    14: "the winner is not the player who moved",
    15: "a safety-zone pawn of a seat not moving changed",
}


# Not cached: numba's cache does not notice changes in engine.py (the engine functions and
# state-layout constants used below), so a cached copy could test stale engine code.
_jit = njit(cache=False)


@_jit
def _steps_to_home(seat, code):
    if code == 65:
        return 0
    if code == 66:
        return 66
    if code >= 60:
        return 5 - (code - 60)
    return (15 * seat + 2 - code) % 60 + 6


@_jit
def _all_home(state, seat, ppp):
    for i in range(ppp):
        if state[E.PAWNS + seat * 4 + i] != 65:
            return False
    return True


@_jit
def _check_state(state, active, ppp, pack, size):
    for seat in range(4):
        if state[E.ACTIVE + seat] != active[seat]:
            return 1
        for i in range(4):
            c = state[E.PAWNS + seat * 4 + i]
            if active[seat] != 0 and i < ppp:
                if c < 0 or c > 66:
                    return 1
            elif c != -1:
                return 1
        if not active[seat]:
            continue
        for i in range(1, ppp):
            if _steps_to_home(seat, state[E.PAWNS + seat * 4 + i - 1]) > _steps_to_home(
                seat, state[E.PAWNS + seat * 4 + i]
            ):
                return 2
        for i in range(ppp):
            for j in range(i + 1, ppp):
                c = state[E.PAWNS + seat * 4 + i]
                if c < 65 and c == state[E.PAWNS + seat * 4 + j]:
                    return 3
    seen = np.zeros(60, np.int64)
    for seat in range(4):
        if active[seat]:
            for i in range(ppp):
                c = state[E.PAWNS + seat * 4 + i]
                if c < 60:
                    seen[c] += 1
                    if seen[c] > 1:
                        return 4
    pos = state[E.DRAW_POS]
    if pos < 0 or pos > size:
        return 5
    counts = np.zeros(11, np.int64)
    pile = np.zeros(11, np.int64)
    for k in range(size):
        c = state[E.DECK + k]
        if c < 0 or c > 10:
            return 5
        counts[c] += 1
        if k >= pos:
            pile[c] += 1
    for c in range(11):
        if counts[c] != pack[c] or pile[c] != state[E.REMAIN + c]:
            return 5
    if state[E.WINNER] < 0:
        card = state[E.CARD]
        if card < 0 or card > 10 or pos < 1 or state[E.DECK + pos - 1] != card:
            return 6
    elif state[E.CARD] != -1:
        return 6
    if state[E.TO_MOVE] < 0 or state[E.TO_MOVE] > 3 or not active[state[E.TO_MOVE]]:
        return 7
    w = state[E.WINNER]
    for seat in range(4):
        if active[seat]:
            done = _all_home(state, seat, ppp)
            if done and w < 0:
                return 8
    if w >= 0 and not (active[w] != 0 and _all_home(state, w, ppp)):
        return 8
    return 0


@_jit
def _next_seat(active, me):
    for k in range(1, 4):
        if active[(me + k) % 4]:
            return (me + k) % 4
    return -1


@_jit
def _check_transition(prev, state, active, ppp, two_again):
    if state[E.TURN] != prev[E.TURN] + 1:
        return 9
    me = prev[E.TO_MOVE]
    card = prev[E.CARD]
    for seat in range(4):
        if not active[seat]:
            continue
        h0 = 0
        h1 = 0
        for i in range(ppp):
            h0 += prev[E.PAWNS + seat * 4 + i] == 65
            h1 += state[E.PAWNS + seat * 4 + i] == 65
        moving = seat == me
        if h1 < h0 or (h1 != h0 and not moving):
            return 10
        if moving:
            continue
        # Every pawn of a seat that did not move is where it was, in Start, or (after an 11
        # swap) on another track square; its safety-zone pawns stay put.
        for i in range(ppp):
            c = prev[E.PAWNS + seat * 4 + i]
            if 60 <= c < 65:
                found = False
                for j in range(ppp):
                    if state[E.PAWNS + seat * 4 + j] == c:
                        found = True
                if not found:
                    return 15
        for i in range(ppp):
            c = state[E.PAWNS + seat * 4 + i]
            if c < 60 and card != C11:  # after a swap it may stand anywhere on the track
                found = False
                for j in range(ppp):
                    if prev[E.PAWNS + seat * 4 + j] == c:
                        found = True
                if not found:
                    return 11
    w = state[E.WINNER]
    if w >= 0:
        if w != me:
            return 14
        return 0
    if card == C2 and two_again:
        if state[E.TO_MOVE] != me or state[E.DRAW_AGAIN] != 1:
            return 12
    elif state[E.TO_MOVE] != _next_seat(active, me) or state[E.DRAW_AGAIN] != 0:
        return 12
    return 0


@_jit
def _check_actions(buf, n, card, n_actions):
    if n < 1:
        return 13
    seen = np.zeros(n_actions, np.int64)
    has_pass = False
    for k in range(n):
        a = buf[k]
        if a < 0 or a >= n_actions or seen[a]:
            return 13
        seen[a] = 1
        if a == 0:
            has_pass = True
    if has_pass and n > 1 and card != C11:
        return 13
    return 0


@_jit
def _play_games(rules_arr, active, ppp, two_again, pack, size, n_actions, n_games, seed, max_turns, result):
    """Random legal games; result[g] = (winner, cards played, error code, turn of the error)."""
    np.random.seed(seed)
    state = np.zeros(E.STATE_SIZE, np.int64)
    prev = np.zeros(E.STATE_SIZE, np.int64)
    buf = np.empty(n_actions, np.int64)
    for g in range(n_games):
        E.init_state(state, rules_arr, active, seed * 100003 + g)
        err = _check_state(state, active, ppp, pack, size)
        while err == 0 and state[E.WINNER] < 0 and state[E.TURN] < max_turns:
            n = E.legal_actions(state, rules_arr, buf)
            err = _check_actions(buf, n, state[E.CARD], n_actions)
            if err:
                break
            prev[:] = state
            E.step(state, rules_arr, buf[np.random.randint(n)])
            err = _check_state(state, active, ppp, pack, size)
            if err == 0:
                err = _check_transition(prev, state, active, ppp, two_again)
        result[g, 0] = state[E.WINNER]
        result[g, 1] = state[E.TURN]
        result[g, 2] = err
        result[g, 3] = state[E.TURN]
        if err:
            return g + 1
    return n_games


def _config_arrays(name, seats):
    rules = PRESETS[name]
    active = np.zeros(4, np.int64)
    active[list(seats)] = 1
    return (
        rules,
        game.rules_array(rules),
        active,
        rules.pawns_per_player,
        int(rules.two_draws_again),
        np.array(rules.pack, np.int64),
        int(sum(rules.pack)),
        game.num_actions(rules),
    )


MAX_TURNS = 2000


@pytest.mark.parametrize("name,seats", CONFIGS, ids=_ids(CONFIGS))
def test_random_games_keep_invariants_and_end_with_a_winner(name, seats):
    rules, r, active, ppp, two_again, pack, size, n_actions = _config_arrays(name, seats)
    n_games = 600
    result = np.zeros((n_games, 4), np.int64)
    played = _play_games(
        r, active, ppp, two_again, pack, size, n_actions, n_games, len(name) * 7 + sum(seats), MAX_TURNS, result
    )
    errors = result[:played, 2]
    bad = np.flatnonzero(errors)
    assert not len(bad), f"game {bad[0]}: {ERRORS[int(errors[bad[0]])]} at turn {result[bad[0], 3]}"
    assert played == n_games
    winners = result[:, 0]
    assert (winners >= 0).all(), "a random game hit max_turns without a winner"
    assert set(winners.tolist()) <= set(seats)
    assert result[:, 1].max() < MAX_TURNS * 3 // 4  # well within max_turns
    # every seat wins some of the random games
    assert set(winners.tolist()) == set(seats)


@pytest.mark.parametrize("seats", ODD_SEATINGS)
def test_random_games_on_any_subset_of_seats(seats):
    rules, r, active, ppp, two_again, pack, size, n_actions = _config_arrays("hasbro2003", seats)
    result = np.zeros((150, 4), np.int64)
    played = _play_games(r, active, ppp, two_again, pack, size, n_actions, 150, 5, MAX_TURNS, result)
    assert played == 150 and not result[:, 2].any(), ERRORS.get(int(result[:, 2].max()))
    assert set(result[:, 0].tolist()) == set(seats)


def test_invariant_checker_catches_broken_states():
    """The checks above can fail: feed them corrupted states."""
    rules, r, active, ppp, two_again, pack, size, n_actions = _config_arrays("hasbro2003", (0, 2))
    s = game.new_state("hasbro2003", 2, seed=1)
    assert _check_state(s, active, ppp, pack, size) == 0
    t = s.copy()
    t[E.PAWNS + 0] = 10
    t[E.PAWNS + 1] = 10
    assert _check_state(t, active, ppp, pack, size) in (2, 3)
    t = s.copy()
    t[E.PAWNS + 0] = 10
    t[E.PAWNS + 8] = 10
    assert _check_state(t, active, ppp, pack, size) == 4
    t = s.copy()
    t[E.REMAIN + 3] += 1
    assert _check_state(t, active, ppp, pack, size) == 5
    t = s.copy()
    t[E.PAWNS + 4] = START
    assert _check_state(t, active, ppp, pack, size) == 1
    t = s.copy()
    t[E.PAWNS : E.PAWNS + 4] = HOME
    assert _check_state(t, active, ppp, pack, size) == 8
    prev = s.copy()
    nxt = game.step(s, "hasbro2003", game.legal_actions(s, "hasbro2003")[0])
    assert _check_transition(prev, nxt, active, ppp, two_again) == 0
    bad = nxt.copy()
    bad[E.TURN] += 1
    assert _check_transition(prev, bad, active, ppp, two_again) == 9


# ---- every masked action steps, every unmasked one is refused ---------------------------


def _sample_positions(name, seats, n_games, every, seed):
    """States met in random games played through the public game API."""
    rng = np.random.default_rng(seed)
    out = []
    for g in range(n_games):
        s = game.new_state(name, seats=seats, seed=seed * 1000 + g)
        k = 0
        while game.winner(s) is None and s[E.TURN] < MAX_TURNS:
            legal = game.legal_actions(s, name)
            if k % every == 0:
                out.append(s)
            s = game.step(s, name, int(rng.choice(legal)))
            k += 1
    return out


@pytest.mark.parametrize("name,seats", CONFIGS, ids=_ids(CONFIGS))
def test_every_masked_action_steps_and_every_unmasked_is_refused(name, seats):
    rules, r, active, ppp, two_again, pack, size, n_actions = _config_arrays(name, seats)
    positions = _sample_positions(name, seats, n_games=4, every=6, seed=len(name) + len(seats))
    assert len(positions) > 50
    for s in positions:
        keep = s.copy()
        legal = game.legal_actions(s, name)
        mask = game.legal_mask(s, name)
        assert mask.shape == (n_actions,) and mask.dtype == np.int8
        assert np.flatnonzero(mask).tolist() == legal.tolist()
        for a in legal:
            s2 = game.step(s, name, int(a))
            assert _check_state(s2, active, ppp, pack, size) == 0
            assert _check_transition(s, s2, active, ppp, two_again) == 0
            after = game.after_move(s, name, int(a))
            d2, da = state_to_dict(s2, rules), state_to_dict(after, rules)
            assert (d2["pawns"], d2["to_move"], d2["turn"]) == (da["pawns"], da["to_move"], da["turn"])
        # No two indices are the same move (the same pawns, distances and target). Different
        # moves can still reach the same position: the two orders of an independent split
        # (documented), a pawn moving 7 onto Q past an own pawn on P versus the split P->Q,
        # X->P (own pawns are interchangeable), or two pawns each sliding back onto the
        # square they left.
        _engine_moves(s, rules)
        legal_set = set(legal.tolist())
        for a in range(n_actions):
            if a not in legal_set:
                with pytest.raises(ValueError):
                    game.check_action(s, name, a)
        for bad in (-1, n_actions, 2.5, "1", None):
            with pytest.raises(ValueError):
                game.check_action(s, name, bad)
        assert np.array_equal(s, keep)  # the game functions never mutate their input


def test_game_functions_do_not_mutate_their_input():
    s = game.new_state("hasbro2003", 4, seed=9)
    keep = s.copy()
    for a in game.legal_actions(s, "hasbro2003"):
        game.step(s, "hasbro2003", int(a))
        after = game.after_move(s, "hasbro2003", int(a))
        keep_after = after.copy()
        for card, _p in game.chance_outcomes(after, "hasbro2003"):
            game.deal(after, "hasbro2003", card)
        assert np.array_equal(after, keep_after)
    assert np.array_equal(s, keep)


def test_chance_outcomes_and_deal_follow_the_draw_pile():
    rules = PRESETS["hasbro2003"]
    s = game.new_state("hasbro2003", 2, seed=2)
    after = game.after_move(s, rules, int(game.legal_actions(s, rules)[0]))
    outcomes = game.chance_outcomes(after, rules)
    pile = state_to_dict(after, rules)["draw_pile"]
    total = sum(pile.values())
    assert abs(sum(p for _, p in outcomes) - 1) < 1e-12
    assert [card for card, _ in outcomes] == [c for c in CARD_NAMES if pile[c] > 0]
    for card, p in outcomes:
        assert abs(p - pile[card] / total) < 1e-12
        dealt = game.deal(after, rules, card)
        assert game.card(dealt) == card
        d = state_to_dict(dealt, rules)["draw_pile"]
        assert d[card] == pile[card] - 1
    with pytest.raises(ValueError, match="no card in play"):
        game.chance_outcomes(s, rules)
    with pytest.raises(ValueError, match="no chance nodes"):
        game.deal(game.new_state("hasbro2003_points", 2, seed=0), "hasbro2003_points", "1")
    with pytest.raises(ValueError, match="the game is over"):
        game.legal_actions(np.where(np.arange(len(s)) == E.WINNER, 0, s), rules)


# ---- rewards through the env ----------------------------------------------------------------


@pytest.mark.parametrize("name,seats", [c for c in CONFIGS if c[0] in ("hasbro2003", "parker1958")])
def test_full_games_through_the_env_reward_the_winner(name, seats):
    rng = np.random.default_rng(len(seats))
    n = len(seats)
    for g in range(6):
        e = env(seats=seats, rules=name)
        e.reset(seed=g)
        final = {}
        steps = 0
        for agent in e.agent_iter():
            obs, reward, term, trunc, _ = e.last()
            if term or trunc:
                assert term and not trunc
                final[agent] = reward
                e.step(None)
                continue
            steps += 1
            e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        assert set(final) == {f"player_{s}" for s in seats}
        winners = {a for a, r in final.items() if r == 1}
        assert all(r in (1, -1) for r in final.values())
        assert len(winners) == 1
        assert sum(final.values()) == 1 - (n - 1)
        assert steps < MAX_TURNS


# ---- an independent reference of the move rules ---------------------------------------------
# Written from the rule texts and issue #2, square by square; it shares nothing with the engine
# but the pawn-code numbering (0..59 track, 60..64 safe 0..4, 65 Home, 66 Start).


def _entry(seat):
    return 15 * seat + 2


def _circle(seat):
    return 15 * seat + 4


_TRIANGLE = {}
for _s in range(4):
    _TRIANGLE[(15 * _s + 1) % 60] = (_s, (15 * _s + 4) % 60)
    _TRIANGLE[(15 * _s + 9) % 60] = (_s, (15 * _s + 13) % 60)

_STEP = {"1": 1, "2": 2, "3": 3, "4": -4, "5": 5, "7": 7, "8": 8, "10": 10, "11": 11, "12": 12}


def _one_forward(seat, c):
    if c >= SAFE0:
        return c + 1  # safe 4 + 1 = Home (65)
    if c == _entry(seat):
        return SAFE0  # a forward move passing the own entry turns into the zone
    return (c + 1) % 60


def _one_backward(seat, c):
    if c == SAFE0:
        return _entry(seat)  # out of the zone through the entry
    if c > SAFE0:
        return c - 1
    return (c - 1) % 60  # backward moves never enter a zone


def _walk(seat, c, n):
    """Where a pawn on c ends after n squares (n < 0: backward); None if impossible."""
    if c in (HOME, START):
        return None
    for _ in range(abs(n)):
        if c == HOME:
            return None  # Home by exact count only
        c = _one_forward(seat, c) if n > 0 else _one_backward(seat, c)
    return c


def _land(pawns, seat, i, dest):
    """Pawn i of seat ends its move on dest: bump, then slide on a foreign triangle."""
    pawns[seat][i] = dest
    if dest >= 60:
        return
    for s, pl in enumerate(pawns):
        if pl is not None:
            for k in range(len(pl)):
                if (s, k) != (seat, i) and pl[k] == dest:
                    pl[k] = START
    _slide(pawns, seat, i)


def _slide(pawns, seat, i):
    c = pawns[seat][i]
    if c not in _TRIANGLE or _TRIANGLE[c][0] == seat:
        return
    end = _TRIANGLE[c][1]
    squares = {(c + d) % 60 for d in range(1, (end - c) % 60 + 1)}
    for s, pl in enumerate(pawns):
        if pl is not None:
            for k in range(len(pl)):
                if (s, k) != (seat, i) and pl[k] in squares:
                    pl[k] = START
    pawns[seat][i] = end


def _copy(pawns):
    return [None if pl is None else list(pl) for pl in pawns]


def _others(pawns, me):
    """The other seats in turn order (to the left: increasing seat number)."""
    return [(me + k) % 4 for k in (1, 2, 3) if pawns[(me + k) % 4] is not None]


def reference_moves(pawns, me, card, rules):
    """{move description: pawns after it} for every legal move of `card` (issue #2 rules)."""
    own = pawns[me]
    out = {}

    def free_for_me(p, dest, moving):
        return dest == HOME or all(p[me][k] != dest for k in range(len(p[me])) if k != moving)

    if card in rules.start_cards and START in own and _circle(me) not in own:
        p = _copy(pawns)
        _land(p, me, own.index(START), _circle(me))
        out[("start",)] = p
    step = _STEP.get(card, rules.sorry_forward if card == "SORRY" else 0)
    in_play = [c for c in own if c not in (HOME, START)]
    for dist, kind in ((step, "move"), (-1 if card == "10" else 0, "back1")):
        if not dist:
            continue
        for c in in_play:
            dest = _walk(me, c, dist)
            if dest is not None and free_for_me(pawns, dest, own.index(c)):
                p = _copy(pawns)
                _land(p, me, own.index(c), dest)
                out[(kind, c)] = p
    if card == "7":
        for ci, cj in itertools.permutations(in_play, 2):
            i, j = own.index(ci), own.index(cj)
            for a in range(1, 7):
                d1 = _walk(me, ci, a)
                if d1 is None or not free_for_me(pawns, d1, i):
                    continue
                p = _copy(pawns)
                _land(p, me, i, d1)  # the first half resolves fully
                d2 = _walk(me, p[me][j], 7 - a)
                if d2 is None or not free_for_me(p, d2, j):
                    continue
                _land(p, me, j, d2)
                out[("split", ci, cj, a)] = p
    if card == "11":
        swaps = {}
        for c in in_play:
            if c >= 60:
                continue
            for s in _others(pawns, me):
                for k, oc in enumerate(pawns[s]):
                    if oc < 60:
                        p = _copy(pawns)
                        i = own.index(c)
                        p[me][i], p[s][k] = oc, c
                        _slide(p, me, i)  # the mover's pawn first
                        if p[s][k] == c:
                            _slide(p, s, k)
                        swaps[("swap", c, s, oc)] = p
        if swaps and not out:
            # No +11 move (nor a start, where an 11 starts pawns, 2013): the player may
            # decline to swap.
            out[("pass",)] = _copy(pawns)
        out.update(swaps)
    if card == "SORRY" and START in own:
        for s in _others(pawns, me):
            for oc in pawns[s]:
                if oc < 60:
                    p = _copy(pawns)
                    _land(p, me, own.index(START), oc)
                    out[("sorry", s, oc)] = p
    if not out:
        out[("pass",)] = _copy(pawns)
    return out


def _reference_result(p, me, card, rules):
    if all(c == HOME for c in p[me]):
        return p, me, False, me
    if card == "2" and rules.two_draws_again:
        return p, me, True, None
    return p, _others(p, me)[0], False, None


def _canon(pawns):
    return tuple(None if pl is None else tuple(sorted(pl)) for pl in pawns)


def _engine_moves(s, rules):
    """The engine's moves of state s in the reference's terms."""
    r = game.rules_array(rules)
    ppp = rules.pawns_per_player
    me = int(s[E.TO_MOVE])
    seats_ = [k for k in range(4) if s[E.ACTIVE + k]]
    own = [int(s[E.PAWNS + me * 4 + i]) for i in range(ppp)]
    order = [(me + k) % 4 for k in (1, 2, 3) if (me + k) % 4 in seats_]
    out = {}
    for a in game.legal_actions(s, rules):
        kind, i, j, first, t = game.decode_action(rules, int(a))
        if kind in ("swap", "sorry"):
            ts = order[t // ppp]
            tc = int(s[E.PAWNS + ts * 4 + t % ppp])
        key = {
            "pass": lambda: ("pass",),
            "start": lambda: ("start",),
            "move": lambda: ("move", own[i]),
            "back1": lambda: ("back1", own[i]),
            "split": lambda: ("split", own[i], own[j], first),
            "swap": lambda: ("swap", own[i], ts, tc),
            "sorry": lambda: ("sorry", ts, tc),
        }[kind]()
        assert key not in out, f"two actions for {key}"
        x = s.copy()
        E.apply_move(x, r, int(a))
        E.end_turn(x, r)
        pawns = [[int(x[E.PAWNS + k * 4 + q]) for q in range(ppp)] if k in seats_ else None for k in range(4)]
        winner = int(x[E.WINNER])
        out[key] = (_canon(pawns), int(x[E.TO_MOVE]), bool(x[E.DRAW_AGAIN]), winner if winner >= 0 else None)
    return out


def _random_position(rng, rules, seats):
    ppp = rules.pawns_per_player
    while True:
        taken = set()
        pawns = [None] * 4
        for k in seats:
            pl = []
            safe_taken = set()
            for _ in range(ppp):
                kind = rng.choice(["start", "home", "safe", "track", "track", "track", "near"])
                if kind == "start":
                    pl.append(["start"])
                elif kind == "home":
                    pl.append(["home"])
                elif kind == "safe":
                    q = int(rng.integers(5))
                    if q in safe_taken:
                        pl.append(["start"])
                    else:
                        safe_taken.add(q)
                        pl.append(["safe", q])
                else:
                    if kind == "near":  # crowd the slides, circles and entries
                        q = int((rng.integers(4) * 15 + rng.integers(-2, 15)) % 60)
                    else:
                        q = int(rng.integers(60))
                    if q in taken or SLIDE_OWNER[q] not in (-1, k):  # no pawn rests on a foreign triangle
                        pl.append(["start"])
                    else:
                        taken.add(q)
                        pl.append(["track", q])
            if all(p == ["home"] for p in pl):
                pl[0] = ["start"]
            pawns[k] = pl
        cards = [c for c, n in zip(CARD_NAMES, rules.pack) if n]
        card = str(rng.choice(cards + ["7", "11", "SORRY"]))  # the intricate cards twice as often
        return {"to_move": int(rng.choice(seats)), "card": card, "pawns": pawns}


def _reference_check(s, rules):
    d = state_to_dict(s, rules)
    pawns = [
        None if pl is None else [int(x) for x in s[E.PAWNS + k * 4 : E.PAWNS + k * 4 + rules.pawns_per_player]]
        for k, pl in enumerate(d["pawns"])
    ]
    me, card = d["to_move"], d["card"]
    ref = {key: _reference_result(p, me, card, rules) for key, p in reference_moves(pawns, me, card, rules).items()}
    ref = {key: (_canon(p), tm, da, w) for key, (p, tm, da, w) in ref.items()}
    eng = _engine_moves(s, rules)
    if set(ref) != set(eng) or any(ref[k] != eng[k] for k in ref):
        only_ref = sorted(set(ref) - set(eng), key=str)
        only_eng = sorted(set(eng) - set(ref), key=str)
        differ = [(k, ref[k], eng[k]) for k in set(ref) & set(eng) if ref[k] != eng[k]]
        pytest.fail(
            f"engine and reference disagree on {d}\n  only reference: {only_ref}\n"
            f"  only engine: {only_eng}\n  different results (ref, engine): {differ[:3]}"
        )
    return len(ref)


REFERENCE_PRESETS = PLAIN_PRESETS


@pytest.mark.parametrize("name", REFERENCE_PRESETS)
def test_engine_matches_reference_on_random_positions(name):
    rules = PRESETS[name]
    rng = np.random.default_rng(2024 + len(name))
    n_moves = 0
    count = 5000 if name == "hasbro2003" else 1000
    for k in range(count):
        seats = [(0, 2), (0, 1, 2), (0, 1, 2, 3), (1, 3), (0, 1, 3)][k % 5]
        d = _random_position(rng, rules, seats)
        s = state_from_dict(d, rules, k)
        n_moves += _reference_check(s, rules)
    assert n_moves > count * 3


@pytest.mark.parametrize("name", REFERENCE_PRESETS)
def test_engine_matches_reference_in_played_games(name):
    rules = PRESETS[name]
    n = 0
    for seats in ((0, 2), (0, 1, 2, 3)):
        for s in _sample_positions(name, seats, n_games=4 if name == "hasbro2003" else 2, every=2, seed=7):
            _reference_check(s, rules)
            n += 1
    assert n > 150


def test_reference_agrees_with_hand_worked_cases():
    """The reference itself against a few cases worked out by hand (see test_rules.py)."""
    rules = PRESETS["hasbro2003"]
    st = [START] * 4
    # 13 + 3 = 16 slides to 19 sweeping own 18, seat 2's 17, seat 1's 19
    p = [[18, 13, START, START], [19, START, START, START], [17, START, START, START], list(st)]
    out = reference_moves(p, 0, "3", rules)
    assert _canon(out[("move", 13)]) == _canon([[19, START, START, START], st, st, st])
    # 4 from the circle then 3: safe 0
    assert _walk(0, 4, -4) == 0 and _walk(0, 0, 3) == SAFE0 and _walk(0, 0, 8) == HOME
    assert _walk(0, 0, 9) is None and _walk(0, SAFE0 + 1, -4) == 0
    # split: 14 + 2 sweeps the own pawn on 18 -> illegal in that order
    out = reference_moves([[18, 14, START, START], None, list(st), None], 0, "7", rules)
    assert ("split", 14, 18, 2) not in out and ("split", 18, 14, 5) in out
    # 11 with no +11: decline allowed
    out = reference_moves([[58, START, START, START], None, [30, START, START, START], None], 0, "11", rules)
    assert set(out) == {("pass",), ("swap", 58, 2, 30)}
