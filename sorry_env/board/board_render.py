"""What ``render()`` returns in every render mode of the board game's envs: the PettingZoo env
(:mod:`sorry_env.board.env`) and the Gymnasium env (:mod:`sorry_env.gym_env`) hold one
:class:`BoardRenderer` each, so both show the same pictures.

- ``"ansi"``: the board as text (:func:`sorry_env.board.render.render_ansi`);
- ``"rgb_array"``: a ``uint8[640, 640, 3]`` picture (:func:`sorry_env.board.draw.board_array`), with
  the last move in words under the card;
- ``"human"``: that picture in a pygame window (:class:`sorry_env.window.Window`).

Pawns keep their label all game (:class:`sorry_env.board.narrate.PawnLabels`): the env calls
:meth:`BoardRenderer.start` at reset and plays every move through :meth:`BoardRenderer.play`.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np

from ..window import Window, require_pygame
from . import engine as E
from .narrate import Move, PawnLabels, narrate
from .render import render_ansi

RENDER_MODES = ("ansi", "rgb_array", "human")


def check_render_mode(render_mode: Any) -> None:
    """Refuse an unknown render mode, and "human" without pygame, before any work."""
    if render_mode not in (None, *RENDER_MODES):
        raise ValueError(f"render_mode must be None, 'ansi', 'rgb_array' or 'human', got {render_mode!r}")
    if render_mode == "human":
        require_pygame()


class BoardRenderer:
    """One env's render state: the pawn labels following the game, the last move (for the
    caption) and, in "human" mode, the window."""

    def __init__(self, rules, render_mode: str | None, fps: float):
        check_render_mode(render_mode)
        self.rules, self.render_mode, self.fps = rules, render_mode, fps
        self._labels: PawnLabels | None = None
        self._last_move: tuple[np.ndarray, int, Move] | None = None
        self._window: Window | None = None  # opened at the first "human" render

    def start(self, state: np.ndarray) -> None:
        """A new game starts at `state`."""
        if self.render_mode is not None:
            self._labels, self._last_move = PawnLabels(state, self.rules), None

    def play(self, state: np.ndarray, rules_array: np.ndarray, action: int) -> None:
        """Play `action` on `state` (the engine's step), following the move when rendering."""
        if self._labels is None:
            E.step(state, rules_array, action)
            return
        before = state.copy()
        E.step(state, rules_array, action)
        self._last_move = (before, action, self._labels.advance(before, action, state))

    def render(self, state: np.ndarray) -> str | np.ndarray | None:
        if self.render_mode is None:
            gymnasium.logger.warn(
                "render() called without a render_mode; pass render_mode='ansi', 'rgb_array' or 'human'"
            )
            return None
        if self.render_mode == "ansi":
            rules = self.rules
            hand_seat = int(state[E.TO_MOVE]) if rules.hand_size else None
            return render_ansi(
                state, rules.pawns_per_player, self._labels, hand_seat, rules.teams != "none", rules.fire_ice
            )
        from .draw import board_array  # Pillow is imported only when pictures are asked for

        caption = None
        if self._last_move is not None and self._labels is not None:
            before, action, move = self._last_move
            caption = narrate(before, self.rules, action, move, self._labels.previous)
        image = board_array(state, self.rules, self._labels, caption)
        if self.render_mode == "rgb_array":
            return image
        if self._window is None:
            self._window = Window("Sorry!", self.fps)
        self._window.show(image)
        return None

    def close(self) -> None:
        if self._window is not None:
            self._window.close()
            self._window = None
