"""The one agent interface used everywhere: evaluation, training opponents, the play command.
:class:`Agent` (and :class:`GameTurn`, for the other registered games) live in
:mod:`sorry_env.agent`; this module adds the board game's :class:`Turn`.

An agent sees a :class:`Turn`: the acting seat, the rules, the legal actions and a *public*
engine state. The public state is a copy whose hidden parts (the order of the draw pile and
the generator that would reshuffle it) are scrambled, so an agent can use the engine for
search but cannot peek at the next card.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from sorry_env import engine as E
from sorry_env import game
from sorry_env.agent import Agent, GameTurn  # the one interface of every game (re-exported)
from sorry_env.observation import OBS_SIZE, observe
from sorry_env.rules import Rules, get_rules


def public_view(state: np.ndarray, rules: Rules, rng: np.random.Generator) -> np.ndarray:
    """A copy of `state` with everything the acting player cannot see re-drawn from `rng`:
    the draw-pile order, the other players' hands (play for points; dealt again from the
    unseen cards) and the generator state."""
    return game.public_view(state, rules, rng)  # one home: sorry_env.game


@dataclasses.dataclass(frozen=True)
class Turn:
    """What an agent is shown when it must act."""

    state: np.ndarray  # public engine state (see public_view); the card to play is in it
    rules: Rules
    seat: int
    legal: np.ndarray  # legal action indices, sorted

    @classmethod
    def from_state(
        cls, state: np.ndarray, rules: Rules | str, rng: np.random.Generator, legal: np.ndarray | None = None
    ) -> Turn:
        """The turn of the seat to move in the true game `state`, with everything that seat
        cannot see re-drawn from `rng` (:func:`public_view`). The one way to build a Turn
        from a real game, so no caller can hand an agent the draw order by mistake.
        `legal` may pass the legal actions when the caller already has them."""
        rules = get_rules(rules)
        if legal is None:
            legal = game.legal_actions(state, rules)
        return cls(public_view(state, rules, rng), rules, int(E.to_move(state)), np.asarray(legal, dtype=np.int64))

    def observation(self) -> dict:
        """The env's observation dict for this seat (for policy agents)."""
        obs = np.empty(OBS_SIZE, dtype=np.float32)
        observe(self.state, game.rules_array(self.rules), self.seat, obs)
        mask = np.zeros(game.num_actions(self.rules), dtype=np.int8)
        mask[self.legal] = 1
        return {"observation": obs, "action_mask": mask}


class CallableAgent(Agent):
    """A function as an agent: `fn` gets the acting seat's observation dict (the PettingZoo
    env's: ``{"observation": float32[OBS_SIZE], "action_mask": int8[n_actions]}``, built by
    the same encoder) and returns an action index. Whoever plays it checks the action."""

    game_ids = None  # every registered game's turn has an observation dict

    def __init__(self, fn, name: str | None = None, seed=None):
        if not callable(fn):
            raise TypeError(f"an opponent function must be callable, got {fn!r}")
        self.fn = fn
        self.name = name or getattr(fn, "__name__", None) or type(fn).__name__
        self.reset(seed)

    def act(self, turn: Turn) -> int:
        action = self.fn(turn.observation())
        try:
            return int(np.asarray(action).item())  # numpy scalars and 1-element arrays (sb3's predict)
        except (TypeError, ValueError):
            raise ValueError(f"agent {self.name!r} returned {action!r}, not an action index") from None


class ChoosingAgent(Agent):
    """An agent that computes its choice among several legal moves (`choose`); a lone legal
    move is played at once, without spending search time on it."""

    def act(self, turn: Turn) -> int:
        legal = np.asarray(turn.legal, dtype=np.int64)
        if len(legal) == 1:
            return int(legal[0])
        return int(self.choose(turn, legal))

    def choose(self, turn: Turn, legal: np.ndarray) -> int:
        raise NotImplementedError


__all__ = ["Agent", "CallableAgent", "ChoosingAgent", "GameTurn", "Turn", "public_view"]
