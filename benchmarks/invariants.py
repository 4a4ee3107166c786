"""Long-run invariant check: random games under every preset family, checked at every move.

    python benchmarks/invariants.py --games 1000000          # per preset family
    python benchmarks/invariants.py --games 20000 --seed 3 --roundtrip-every 50
    python benchmarks/invariants.py --rules hasbro2013_fire_ice --games 30000

The games run in compiled code (uniformly random legal moves, as the fuzz study played them);
after every move the engine state is checked for:

- ``no_legal``: the game runs but the player to move has no legal action;
- ``bad_actions``: legal actions out of range, repeated, or disagreeing with ``legal_mask``;
- ``pawn_code``: a pawn code out of range, or a slot of an empty seat in use;
- ``two_on_square``: two pawns on one track square, or two pawns of a seat on one safe square;
- ``draw_pile``: the public counts (``REMAIN``) disagree with the cards left in the deck;
- ``hands``: with hands, the seats do not hold their hand size at a decision;
- ``turn``: the turn counter went backwards or jumped;
- ``winner``: a winner whose side does not have every pawn Home;
- ``tokens``: Fire and Ice fields out of range (``sorry_env.checks``: Fire on a pawn not in
  play, Ice on an empty square or off the track, a fire decision with a card or without a
  fire move; any token under rules without them);
- ``ice_moved``: the iced pawn left its square (or another seat's pawn took it) in a move
  that did not move Ice (only a 1 moves Ice).

Every ``--roundtrip-every``-th game, one position is written with ``state_to_dict`` and loaded
back with ``state_from_dict`` (Python); ``roundtrip`` counts positions whose legal actions or
public facts changed, or that failed to load. A game that reaches ``--max-turns`` counts as
truncated (not a violation). The last line per family is ``FAMILY: G games, M moves, V
violations {...}``; the exit status is 1 if any violation was found.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from numba import njit

from sorry_env import PRESETS
from sorry_env.board import engine as E
from sorry_env.board import game
from sorry_env.board.geometry import HOME, SAFE0, START, TRACK
from sorry_env.board.rules import C1, N_CARDS, R_HAND_SIZE, R_PACK_SIZE, R_PAWNS, R_TEAMS
from sorry_env.board.state_io import state_from_dict, state_to_dict
from sorry_env.checks import _token_problem

CHECKS = (
    "no_legal",
    "bad_actions",
    "pawn_code",
    "two_on_square",
    "draw_pile",
    "hands",
    "turn",
    "winner",
    "roundtrip",
    "tokens",
    "ice_moved",
)


@njit  # not cached: benchmarks do not cache compiled code (sorry_env.numba_cache)
def _check(state, rules, buf, mask, seen, counts):
    """Add the invariants `state` breaks to `counts` (indices as CHECKS); returns the number
    of legal actions (0 at the end of a game)."""
    ppp = rules[R_PAWNS]
    if _token_problem(state, rules, ppp):
        counts[9] += 1
    _check_pawns(state, ppp, counts)
    _check_pile(state, rules, counts)
    winner = state[E.WINNER]
    if winner >= 0:
        for c in range(2 if rules[R_TEAMS] else 1):
            seat = (winner + 2 * c) % 4
            for slot in range(ppp):
                if state[E.PAWNS + seat * E.MAX_SLOTS + slot] != HOME:
                    counts[7] += 1
        return 0
    if rules[R_HAND_SIZE]:
        for seat in range(4):
            held = 0
            for c in range(N_CARDS):
                held += state[E.HANDS + seat * N_CARDS + c]
            if state[E.ACTIVE + seat] and held != rules[R_HAND_SIZE]:
                counts[5] += 1
    return _check_actions(state, rules, buf, mask, seen, counts)


@njit  # not cached: benchmarks do not cache compiled code (sorry_env.numba_cache)
def _check_pawns(state, ppp, counts):
    """Pawn codes in range (counts[2]) and no two pawns on one square (counts[3])."""
    track = np.full(TRACK, -1, dtype=np.int64)
    for seat in range(4):
        safe = np.zeros(HOME - SAFE0, dtype=np.int64)
        for slot in range(E.MAX_SLOTS):
            code = state[E.PAWNS + seat * E.MAX_SLOTS + slot]
            in_use = state[E.ACTIVE + seat] == 1 and slot < ppp
            if (in_use and not 0 <= code <= START) or (not in_use and code != -1):
                counts[2] += 1
            elif in_use and code < TRACK:
                if track[code] >= 0:
                    counts[3] += 1
                track[code] = seat
            elif in_use and SAFE0 <= code < HOME:
                if safe[code - SAFE0]:
                    counts[3] += 1
                safe[code - SAFE0] = 1


@njit  # not cached: benchmarks do not cache compiled code (sorry_env.numba_cache)
def _check_pile(state, rules, counts):
    """The draw pile's cards agree with its counts (counts[4])."""
    size = rules[R_PACK_SIZE]
    pile = np.zeros(N_CARDS, dtype=np.int64)
    for k in range(state[E.DRAW_POS], size):
        pile[state[E.DECK + k]] += 1
    for c in range(N_CARDS):
        if pile[c] != state[E.REMAIN + c]:
            counts[4] += 1
            break


@njit  # not cached: benchmarks do not cache compiled code (sorry_env.numba_cache)
def _check_actions(state, rules, buf, mask, seen, counts):
    """A running game has legal actions (counts[0]) and the list agrees with the mask
    (counts[1]); returns how many there are."""
    n = E.legal_actions(state, rules, buf)
    if n == 0:
        counts[0] += 1
        return 0
    m = E.legal_mask(state, rules, mask)
    seen[:] = 0
    bad = m != n
    for k in range(n):
        a = buf[k]
        if a < 0 or a >= mask.shape[0] or seen[a] or mask[a] != 1:
            bad = True
        else:
            seen[a] = 1
    if bad:
        counts[1] += 1
    return n


@njit  # not cached: benchmarks do not cache compiled code (sorry_env.numba_cache)
def play_games(rules, active, first_seed, games, max_turns, counts):
    """Play `games` random games from seeds first_seed.. and check every position; returns
    (moves, truncated games)."""
    n_act = E.num_actions(rules)
    buf = np.empty(n_act, dtype=np.int64)
    mask = np.zeros(n_act, dtype=np.int8)
    seen = np.zeros(n_act, dtype=np.int8)
    state = np.zeros(E.STATE_SIZE, dtype=np.int64)
    moves = 0
    truncated = 0
    for g in range(games):
        E.init_state(state, rules, active, first_seed + g)
        while True:
            n = _check(state, rules, buf, mask, seen, counts)
            if n == 0 or state[E.TURN] >= max_turns:
                truncated += state[E.WINNER] < 0 and n > 0
                break
            turn = state[E.TURN]
            ice_seat = E.ice_pawn(state)[0]
            ice, card = state[E.ICE], state[E.CARD]
            E.step(state, rules, buf[E.randint(state, n)])
            if state[E.TURN] < turn or state[E.TURN] > turn + 1:
                counts[6] += 1
            if ice_seat >= 0 and card != C1 and (state[E.ICE] != ice or E.ice_pawn(state)[0] != ice_seat):
                counts[10] += 1
            moves += 1
    return moves, truncated


def roundtrip_ok(rules_name: str, seats, seed: int, plies: int) -> bool:
    """Write one position of a random game as a state dict and load it back: same legal
    actions and the same public facts."""
    rules = PRESETS[rules_name]
    state = game.new_state(rules, seats=seats, seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(plies):
        if game.winner(state) is not None:
            return True
        state = game.step(state, rules, int(rng.choice(game.legal_actions(state, rules))))
    if game.winner(state) is not None:
        return True
    d = state_to_dict(state, rules)
    try:
        loaded = state_from_dict(d, rules, seed)
    except ValueError:
        return False
    return state_to_dict(loaded, rules) == d and np.array_equal(
        game.legal_actions(loaded, rules), game.legal_actions(state, rules)
    )


def families(only=None):
    """(label, preset, seats) for every preset (or the one named `only`) and player count it allows."""
    for name, rules in PRESETS.items():
        if only is not None and name != only:
            continue
        for players in (4,) if rules.teams != "none" else (2, 3, 4):
            yield f"{name} {players}p", name, game.DEFAULT_SEATS[players]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="Random games under every preset, checked at every move.")
    p.add_argument("--games", type=int, default=100_000, help="games per preset family (preset and player count)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-turns", type=int, default=2000)
    p.add_argument("--roundtrip-every", type=int, default=100, help="state-dict round trip every N-th game (0: off)")
    p.add_argument("--rules", choices=sorted(PRESETS), help="check this preset only (default: every preset)")
    p.add_argument("--chunk", type=int, default=10_000, help="games per compiled call (progress granularity)")
    args = p.parse_args(argv)
    if args.games < 1 or args.seed < 0 or args.max_turns < 1 or args.chunk < 1 or args.roundtrip_every < 0:
        p.error("--games, --max-turns and --chunk must be >= 1; --seed and --roundtrip-every >= 0")
    total_violations = 0
    start_all = time.perf_counter()
    for label, name, seats in families(args.rules):
        rules = game.rules_array(name)
        active = np.zeros(4, dtype=np.int64)
        active[list(seats)] = 1
        counts = np.zeros(len(CHECKS), dtype=np.int64)
        moves = truncated = 0
        start = time.perf_counter()
        first = args.seed * 10**9
        for done in range(0, args.games, args.chunk):
            m, t = play_games(rules, active, first + done, min(args.chunk, args.games - done), args.max_turns, counts)
            moves += m
            truncated += t
        if args.roundtrip_every:
            rng = np.random.default_rng(args.seed)
            for g in range(0, args.games, args.roundtrip_every):
                if not roundtrip_ok(name, seats, first + g, int(rng.integers(0, 150))):
                    counts[CHECKS.index("roundtrip")] += 1
        violations = int(counts.sum())
        total_violations += violations
        found = {c: int(n) for c, n in zip(CHECKS, counts) if n}
        print(
            f"{label}: {args.games} games, {moves} moves, {truncated} truncated, {violations} violations "
            f"{found} ({time.perf_counter() - start:.1f} s)",
            flush=True,
        )
    print(f"all families: {total_violations} violations in {time.perf_counter() - start_all:.0f} s")
    return 1 if total_violations else 0


if __name__ == "__main__":
    sys.exit(main())
