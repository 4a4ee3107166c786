"""Sorry! Express registered as ``"express"`` in :mod:`sorry_env.games`: its facts
(:data:`GAME_TYPE`), the distribution of one roll, and the registry's functional API over
:mod:`sorry_env.express.game`.

Chance: a move that resolves the last playable die ends the turn; :meth:`ExpressGame.after_move`
stops there (a chance node: no dice left, the mover not yet passed on) and
:meth:`ExpressGame.apply_chance` makes the next seat's roll, named by its faces
(``"Red Blue Sorry!"``, in face order). A roll with no playable die passes the turn on at
once, to another chance node."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ..games import Game, register_game
from . import engine as E
from . import game
from .game import GAME_TYPE, VARIANT
from .state_io import state_from_dict, state_to_dict


@functools.cache
def roll_outcomes() -> tuple[tuple[str, tuple[int, ...], float], ...]:
    """(name, face counts, probability) of every distinct roll of the three dice (two plain
    dice and the Sorry! die; dice showing the same face are interchangeable)."""
    counts: dict[tuple[int, ...], int] = {}
    for a in E.PLAIN_DIE:
        for b in E.PLAIN_DIE:
            for c in E.SORRY_DIE:
                shown = [0] * E.N_FACES
                for face in (a, b, c):
                    shown[int(face)] += 1
                counts[tuple(shown)] = counts.get(tuple(shown), 0) + 1
    total = sum(counts.values())
    out = []
    for faces in sorted(counts):
        name = " ".join(game.FACE_NAMES[f] for f in range(E.N_FACES) for _ in range(faces[f]))
        out.append((name, faces, counts[faces] / total))
    return tuple(out)


@register_game
class ExpressGame(Game):
    """Sorry! Express (one variant)."""

    game_type = GAME_TYPE

    def parse_variant(self, variant: Any) -> str:
        if variant != VARIANT:
            raise ValueError(f"Sorry! Express has one variant, {VARIANT!r}; got {variant!r}")
        return VARIANT

    @property
    def variant_name(self) -> str:
        return VARIANT

    def variant_to_json(self) -> dict:
        return {"name": VARIANT}

    @classmethod
    def from_json(cls, data: Any, where: str = "rules") -> ExpressGame:
        if data != {"name": VARIANT}:
            raise ValueError(f"{where}: Sorry! Express rules must be {{'name': {VARIANT!r}}}, got {data!r}"[:300])
        return cls()

    @property
    def num_actions(self) -> int:
        return E.N_ACTIONS

    def new_state(self, num_players: int, seed: int = 0, first: int | None = None) -> np.ndarray:
        return game.new_state(num_players, seed=seed, first=first)

    def legal_actions(self, state: np.ndarray) -> np.ndarray:
        self._require_decision(state)
        return game.legal_actions(state)

    def apply(self, state: np.ndarray, action: int) -> np.ndarray:
        self._require_decision(state)
        return game.step(state, action)

    def after_move(self, state: np.ndarray, action: int) -> np.ndarray:
        self._require_decision(state)
        child = state.copy()
        E.apply_die(child, game.check_action(state, action))
        E.end_move(child)
        return child

    def is_chance_node(self, state: np.ndarray) -> bool:
        # tolist: a plain loop over seven numbers is faster than a numpy reduction here (hot in tournaments)
        return bool(state[E.WINNER] < 0) and not any(state[E.DICE : E.DICE + E.N_FACES].tolist())

    def chance_outcomes(self, state: np.ndarray) -> list[tuple[str, float]]:
        self._require_chance_node(state)
        return [(name, p) for name, _, p in roll_outcomes()]

    def apply_chance(self, state: np.ndarray, outcome: str) -> np.ndarray:
        self._require_chance_node(state)
        faces = {name: f for name, f, _ in roll_outcomes()}
        if not isinstance(outcome, str) or outcome not in faces:
            raise ValueError(f"a roll is named by its faces, e.g. {next(iter(faces))!r}; got {outcome!r}"[:300])
        child = state.copy()
        E.pass_turn_rolled(child, np.array(faces[outcome], dtype=np.int64))
        return child

    def winner(self, state: np.ndarray) -> int | None:
        return game.winner(state)

    def to_move(self, state: np.ndarray) -> int:
        return game.to_move(state)

    def seats(self, state: np.ndarray) -> tuple[int, ...]:
        return tuple(range(game.num_players(state)))

    def turn(self, state: np.ndarray) -> int:
        return game.turn(state)

    def observation(self, state: np.ndarray, seat: int) -> np.ndarray:
        out = np.empty(E.OBS_SIZE, dtype=np.float32)
        E.observe(state, int(seat), out)
        return out

    def public_view(self, state: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        view = state.copy()
        view[E.RNG] = int(rng.integers(0, 2**32))  # the next rolls are hidden
        return view

    def describe_action(self, state: np.ndarray, action: int) -> str:
        return game.describe_action(state, action)

    def render_text(self, state: np.ndarray, viewer: int | None = None) -> str:
        return game.render_text(state)  # nothing is hidden: every seat sees the same

    def state_to_dict(self, state: np.ndarray) -> dict:
        return state_to_dict(state)

    def state_from_dict(self, data: Any, seed: int = 0) -> np.ndarray:
        return state_from_dict(data, seed)

    def make_env(self, num_players: int, **kwargs: Any) -> Any:
        from .env import raw_env

        return raw_env(num_players=num_players, **kwargs)

    @classmethod
    def of_env(cls, raw_env: Any) -> ExpressGame | None:
        from .env import raw_env as ExpressEnv

        return cls() if isinstance(raw_env, ExpressEnv) else None

    def _require_decision(self, state: np.ndarray) -> None:
        if self.is_chance_node(state):
            raise ValueError("this is a chance node (the turn is over): roll with apply_chance first")

    def _require_chance_node(self, state: np.ndarray) -> None:
        if not self.is_chance_node(state):
            raise ValueError("not a chance node: dice are left to resolve, or the game is over")
