"""The board game's compiled scripted move choices: ``heuristic_choice`` (the move whose
resulting position scores best under :mod:`sorry_env.board.evaluation`) and ``greedy_choice`` (the
move leaving the mover's own pawns furthest along). Moves are tried with the engine, so bumps
and slides count as they happen; ties go to the first of the sorted legal actions.

They are the board game's evaluation functions, so they live with the game: the agents
``heuristic`` and ``greedy`` (:mod:`sorry_env.agents.heuristic`, :mod:`sorry_env.agents.greedy`)
call them, and so do the compiled opponents of :mod:`sorry_env.vector_opponents`, which is
why their batched play equals those agents' move for move.
"""

import numpy as np

from . import engine as E
from .evaluation import progress, seat_equities, seat_score
from .geometry import HOME, SAFE0
from .rules import R_PAWNS
from .simulate import after_move_into

# Lexicographic order of what greedy wants: more pawns Home, then more in the safety zone,
# then more total progress (at most 4 * 65 < SAFE_RANK).
HOME_RANK = 1_000_000
SAFE_RANK = 1_000


@E.compiled
def heuristic_choice(state, rules, w, legal, n, extras=True):
    """The legal action (of legal[:n]) whose resulting position scores best for the player
    to move under the evaluation weights `w` (:meth:`sorry_env.board.evaluation.Weights.array`);
    the first one on ties. `extras`: see the engine's COMPILE COST."""
    me = E.to_move(state)
    child = np.empty_like(state)
    equity = np.empty(4)
    best_action = legal[0]
    best = -np.inf
    for k in range(n):
        after_move_into(child, state, rules, legal[k], extras)
        seat_equities(child, rules, w, equity, extras)
        score = seat_score(child, rules, w, equity, me)
        if score > best:
            best = score
            best_action = legal[k]
    return best_action


@E.compiled
def _own_progress(state, rules, seat):
    total = 0
    for i in range(rules[R_PAWNS]):
        code = E.pawn_code(state, seat, i)
        total += progress(seat, code)
        if code == HOME:
            total += HOME_RANK
        elif code >= SAFE0:
            total += SAFE_RANK
    return total


@E.compiled
def greedy_choice(state, rules, legal, n):
    """The legal action (of legal[:n]) leaving the mover's own pawns furthest along."""
    me = E.to_move(state)
    child = np.empty_like(state)
    best_action = legal[0]
    best = -1
    for k in range(n):
        after_move_into(child, state, rules, legal[k])
        score = _own_progress(child, rules, me)
        if score > best:
            best = score
            best_action = legal[k]
    return best_action
