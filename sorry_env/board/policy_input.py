"""What a trained policy sees: its input vector, and the afterstates of the legal moves.

The input vector (:func:`policy_input`, ``INPUT_SIZE`` float32) is built from the acting
seat's own information only: the env's observation of that seat followed by its view of
the engine state array (:func:`sorry_env.board.engine.own_view`: small integers; the draw order
and generator zeroed, and with hands the other seats' hands zeroed and counted with the
draw pile as unseen cards). Two states that differ only in what the seat cannot see (an
opponent's hand, the draw order) give the same input. Without hands the view is
:func:`sorry_env.board.engine.public_state`, so the inputs of files trained before hands were
supported are unchanged. The self-play envs emit the same vector (:func:`own_view` is the
one builder of its state part); the policy agent builds it from a Turn.

Afterstates are the positions the legal moves lead to (the move played and the turn ended,
the next card not drawn yet), as observations of the mover (compiled). An afterstate policy
scores each move by the position it leaves, the way backgammon programs evaluate moves.
Because nothing hidden is drawn, afterstates need no hidden information: the mover's view
is enough to compute them. With hands (play for points) the afterstate is the position
after the card is played and before the mover draws its replacement
(:func:`sorry_env.board.engine.play_before_draw`): the replacement is hidden when the mover
chooses.
"""

import numpy as np
from numba import njit

from sorry_env.board import engine as E
from sorry_env.board import game
from sorry_env.board.engine import own_view, public_state  # noqa: F401 (public_state: re-exported)
from sorry_env.board.observation import OBS_SIZE, observe
from sorry_env.board.rules import Rules, rules_from_json, rules_to_json
from sorry_env.version import LAYOUT_VERSION

STATE_SIZE = E.STATE_SIZE
INPUT_SIZE = OBS_SIZE + STATE_SIZE


def layout(rules) -> dict:
    """The input/action layout this code builds for `rules`: the environment's version name,
    the observation and state sizes and the number of actions. Policy files and sb3 models
    record it, so a network made for another layout is refused at load."""
    return {
        "version": LAYOUT_VERSION,
        "obs_size": OBS_SIZE,
        "state_size": STATE_SIZE,
        "n_actions": game.num_actions(rules),
    }


# The rules' one JSON form lives with the rules (sorry_env.board.rules); these names are kept for callers.
rules_dict = rules_to_json


def rules_from_dict(d: object, path="rules") -> Rules:
    """The Rules of their JSON form; ValueError (naming `path`) if it is not one."""
    return rules_from_json(d, path)


@njit(cache=True)
def count_afterstates(states, rules):
    """Number of (state, legal action) pairs in a batch of states (each with a card to play)."""
    buf = E.action_buffer(rules)
    total = 0
    for b in range(states.shape[0]):
        total += E.legal_actions(states[b], rules, buf)
    return total


@njit(cache=True)
def sparse_afterstate_observations(states, rules, offsets, rows, actions, columns, values):
    """For every state b and legal action a: row k of compressed sparse rows holding the
    observation of the position after a, seen by the player who moved (its nonzero entries
    are columns/values[offsets[k] : offsets[k + 1]]); rows[k] = b and actions[k] = a.
    offsets, rows and actions hold count_afterstates(states, rules) + 1, + 0, + 0 entries.
    Returns the number of nonzero entries, or -1 if columns/values are too short for them
    (nothing else is then valid)."""
    buf = E.action_buffer(rules)
    child = np.empty(states.shape[1], dtype=np.int64)
    scratch = np.empty(OBS_SIZE, dtype=np.float32)
    capacity = columns.shape[0]
    offsets[0] = 0
    k = 0
    nnz = 0
    for b in range(states.shape[0]):
        mover = E.to_move(states[b])
        count = E.legal_actions(states[b], rules, buf)
        for j in range(count):
            child[:] = states[b]
            E.play_before_draw(child, rules, buf[j])
            observe(child, rules, mover, scratch)
            for c in range(OBS_SIZE):
                if scratch[c] != 0:
                    if nnz == capacity:
                        return -1
                    columns[nnz] = c
                    values[nnz] = scratch[c]
                    nnz += 1
            offsets[k + 1] = nnz
            rows[k] = b
            actions[k] = buf[j]
            k += 1
    return nnz


def sparse_afterstates(states: np.ndarray, rules: np.ndarray) -> tuple:
    """:func:`afterstates` with the observations as compressed sparse rows: (columns, values,
    offsets), rows, actions (see :func:`sparse_afterstate_observations`). Observations are
    one-hot encodings (about 2% nonzero), so a network's first layer needs only these."""
    n = count_afterstates(states, rules)
    offsets = np.empty(n + 1, dtype=np.int64)
    rows = np.empty(n, dtype=np.int64)
    actions = np.empty(n, dtype=np.int64)
    per_row = 64  # on average per row; 2-player positions have 25-31 nonzero entries, 4-player ones up to ~55
    while True:
        columns = np.empty(max(n, 1) * per_row, dtype=np.int64)
        values = np.empty(len(columns), dtype=np.float32)
        nnz = sparse_afterstate_observations(states, rules, offsets, rows, actions, columns, values)
        if nnz >= 0:
            return (columns[:nnz], values[:nnz], offsets), rows, actions
        per_row *= 2


def afterstates(states: np.ndarray, rules: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(observations, rows, actions) of every legal move of every state in the batch (states:
    own views, :func:`own_view`, or full states: only what the mover may know is read): the
    rows of :func:`sparse_afterstates` as a dense float32 matrix."""
    (columns, values, offsets), rows, actions = sparse_afterstates(states, rules)
    obs = np.zeros((len(rows), OBS_SIZE), dtype=np.float32)
    obs[np.repeat(np.arange(len(rows)), np.diff(offsets)), columns] = values
    return obs, rows, actions


def policy_input(state: np.ndarray, rules_array: np.ndarray, viewer: int, out: np.ndarray | None = None) -> np.ndarray:
    """The input vector of `viewer` in `state` (written into `out` if given): its observation
    and its own view of the state array, nothing hidden from it."""
    out = np.empty(INPUT_SIZE, dtype=np.float32) if out is None else out
    observe(state, rules_array, viewer, out[:OBS_SIZE])
    view = np.empty(STATE_SIZE, dtype=np.int64)
    own_view(state, rules_array, viewer, view)
    out[OBS_SIZE:] = view
    return out
