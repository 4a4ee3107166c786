"""`greedy`: the move with the most immediate progress of its own pawns, Home and the safety
zone first. Moves are tried with the engine, so bumps and slides count as they happen."""

import numpy as np
from numba import njit

from sorry_env import engine as E
from sorry_env import game
from sorry_env.geometry import HOME, SAFE0
from sorry_env.rules import R_PAWNS

from .base import Agent, Turn
from .evaluation import progress
from .simulate import after_move_into

# Lexicographic order of what greedy wants: more pawns Home, then more in the safety zone,
# then more total progress (at most 4 * 65 < SAFE_RANK).
HOME_RANK = 1_000_000
SAFE_RANK = 1_000


@njit(cache=True)
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


@njit(cache=True)
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


class GreedyAgent(Agent):
    name = "greedy"

    def __init__(self, seed: int | None = None):
        self.reset(seed)

    def act(self, turn: Turn) -> int:
        legal = np.asarray(turn.legal, dtype=np.int64)
        return int(greedy_choice(turn.state, game.rules_array(turn.rules), legal, len(legal)))
