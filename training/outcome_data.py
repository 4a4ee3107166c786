"""Positions labelled with who went on to win: the data of a learned position value.

A teacher (the heuristic agent, playing a uniformly random legal move with chance
`epsilon` so that the data also covers positions it would not steer into) plays every seat.
After each of its decisions with a real choice, the position the move led to (the
*afterstate*: the move played and the turn ended, the next card not drawn) is kept with
the seat that moved; when the game ends, every kept position gets the winner.

The games are played by compiled code (`heuristic_outcome_games`): a million two-player positions
(about 18,000 games) take about 7 s of one core. Positions are stored as public state arrays
(:func:`sorry_env.board.policy_input.public_state`: no draw-pile order) in int16, and observations
are built from them batch by batch (:func:`observations`): a million positions take 280 MB.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from sorry_env.board import engine as E
from sorry_env.board import game
from sorry_env.board.observation import OBS_SIZE, observe
from sorry_env.board.policy_input import public_state
from sorry_env.board.rules import DEFAULT_MAX_TURNS
from sorry_env.board.scripted_choices import heuristic_choice


@njit(cache=True)
def heuristic_outcome_games(rules, active, w, epsilon, seed, max_turns, states, games, winners):
    """Play games of the epsilon-heuristic teacher until `states` (rows: positions) is full.

    states[k]: public afterstate of the k-th recorded decision; games[k]: its game's index into
    `winners` (the winning seat, -1 if the game hit `max_turns` card plays). Returns the number
    of games started; the last one may be cut short when the buffer fills, and its winner is
    then -1 too."""
    buf = E.action_buffer(rules)
    state = np.zeros(E.STATE_SIZE, dtype=np.int64)
    public = np.empty(E.STATE_SIZE, dtype=np.int64)
    coin = np.zeros(E.STATE_SIZE, dtype=np.int64)  # a generator for the teacher's own choices
    E.seed_generator(coin, (seed ^ 0x5DEECE66D) & 0xFFFFFFFF)
    k = 0
    g = 0
    while k < states.shape[0]:
        E.init_state(state, rules, active, (seed + 7919 * g) & 0xFFFFFFFF)
        winners[g] = -1
        while E.is_running(state, max_turns) and k < states.shape[0]:
            n = E.legal_actions(state, rules, buf)
            if n == 1:
                E.step(state, rules, buf[0])
                continue
            if E.randint(coin, 1 << 20) < epsilon * (1 << 20):
                action = buf[E.randint(coin, n)]
            else:
                action = heuristic_choice(state, rules, w, buf, n)
            E.play(state, rules, action)
            public_state(state, public)
            states[k] = public  # int16: every public field is small
            games[k] = g
            k += 1
            if E.winner(state) < 0:
                E.draw(state, rules)
        if E.winner(state) >= 0:
            winners[g] = E.winner(state)
        g += 1
    return g


@njit(cache=True)
def observations(states, rules, viewers, out):
    """out[k] := observation of states[k] (int16 rows) by seat viewers[k]."""
    state = np.empty(states.shape[1], dtype=np.int64)
    for k in range(states.shape[0]):
        state[:] = states[k]
        observe(state, rules, viewers[k], out[k])


@njit(cache=True)
def won(rules, winners, games, viewers, out):
    """out[k] := 1.0 if viewers[k]'s side won game games[k], else 0.0."""
    for k in range(games.shape[0]):
        w = winners[games[k]]
        out[k] = 1.0 if w >= 0 and E.same_side(rules, viewers[k], w) else 0.0


class OutcomeData:
    """A set of teacher positions with outcomes. Each position is seen from every seat, so
    a batch row is (position, viewer) and its label is whether the viewer's side won."""

    def __init__(
        self,
        rules_array: np.ndarray,
        num_players: int,
        positions: int,
        *,
        weights: np.ndarray,
        epsilon: float,
        seed: int,
        max_turns: int = DEFAULT_MAX_TURNS,
    ):
        self.seats = np.array(game.seats_for(num_players), dtype=np.int64)
        active = np.zeros(4, dtype=np.int64)
        active[self.seats] = 1
        self.rules_array = rules_array
        self.states = np.zeros((positions, E.STATE_SIZE), dtype=np.int16)
        self.games = np.zeros(positions, dtype=np.int64)
        winners = np.full(positions, -1, dtype=np.int64)
        n_games = heuristic_outcome_games(
            rules_array, active, weights, float(epsilon), int(seed), int(max_turns), self.states, self.games, winners
        )
        self.winners = winners[:n_games]
        # Positions of unfinished games carry no outcome: drop them (they are the last rows,
        # or rare: a game that hit max_turns).
        keep = self.winners[self.games] >= 0
        if not keep.all():
            self.states, self.games = self.states[keep], self.games[keep]
        self.num_games = int((self.winners >= 0).sum())

    def __len__(self) -> int:
        return len(self.states) * len(self.seats)

    def batch(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(observations float32 (len(rows), OBS_SIZE), labels float32) of dataset rows:
        row r is position r // seats seen by seat r % seats."""
        pos = rows // len(self.seats)
        viewers = self.seats[rows % len(self.seats)]
        obs = np.empty((len(rows), OBS_SIZE), dtype=np.float32)
        observations(self.states[pos], self.rules_array, viewers, obs)
        labels = np.empty(len(rows), dtype=np.float32)
        won(self.rules_array, self.winners, self.games[pos], viewers, labels)
        return obs, labels
