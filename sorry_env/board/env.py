"""Sorry! as a PettingZoo AEC environment.

=====================  ==========================================================
Import                 ``from sorry_env import env, raw_env``
Registered id          ``pettingzoo.make("aec", "sorry_env/sorry-v1")`` after ``import sorry_env``
Actions                Discrete: 142 (4 pawns), 80 (2013), 802 (2013 Fire and Ice), 227 / 515 (teams), 1573 (hands)
Parallel API           turn-based: ``sorry_env.parallel_env()`` (:mod:`sorry_env.parallel`)
Manual control         no (see the play command)
Agents                 ``player_<seat>`` for each seat in play (2 players: player_0, player_2)
Action shape           ()
Action values          0 .. n_actions - 1
Observation shape      ``{"observation": (1184,), "action_mask": (n_actions,)}``
Observation values     observation in [0, 1] (float32); action_mask 0/1 (int8)
State shape            ``state()``: (1233,) float32 in [0, 1], every hand included (``state_space``)
=====================  ==========================================================

The board game Sorry! for 2 to 4 players (2003 Hasbro rules by default; other rule sheets
through ``rules=``). Each turn the player to move holds one card drawn from a shuffled pack
and picks one legal move for it; a 2 lets the same player draw again. First to bring every
pawn Home wins.

Arguments
---------
``raw_env(num_players=None, seats=None, rules=DEFAULT_PRESET, max_turns=2000, render_mode=None,
reward="win")``

- ``num_players``: 2, 3 or 4 (default: 4, or the number of ``seats``); seats default to
  (0, 2), (0, 1, 2), (0, 1, 2, 3).
- ``seats``: explicit seats in play, e.g. ``(0, 1)`` (a list or tuple of integers); overrides
  the default. Given with ``num_players``, the two must agree.
- ``rules``: a preset name (``sorry_env.PRESETS``) or a ``sorry_env.Rules``.
- ``max_turns``: truncate every agent after this many cards played (the draw-again of a 2
  counts as its own turn). ``None`` disables truncation.
- ``render_mode``: ``"ansi"``: ``render()`` returns the board as text; ``"rgb_array"``: as a
  ``uint8[640, 640, 3]`` image; ``"human"``: shows that image in a window (needs pygame, the
  ``human`` extra) as PettingZoo's classic games do, redrawn after every step. Pawns keep
  the same label all game; the picture names the last move. See ``docs/rendering.md``.
- ``reward``: ``"win"`` (default: +1 / -1) or ``"points"`` (the end-of-game score of the
  rules' scoring system, for the play-for-points presets).

Observation
-----------
Player-relative: the observing seat first, then the other seats in turn order; the board is
rotated so the observer's side is side 0. Index ranges are documented in
:mod:`sorry_env.board.observation` and docs/observation.md. ``action_mask`` is 1 exactly on the legal actions
of the player to move (all zero for the others and after the game ends).

Action space
------------
Player-relative and fixed per rules configuration; layout and decoding formula in
:mod:`sorry_env.board.engine` and docs/action-space.md. PASS (index 0) is legal only when nothing else is,
or on an 11 when no pawn can move 11 forward nor (``hasbro2013``) start (declining to swap).
With hands (play for points) index 0 is never legal: a player plays a card (an 11 may be
played to decline a swap) or, with no playable card, discards one.

Rewards
-------
When a player brings its last pawn Home: +1 to the winner, -1 to every other player (team
rules: +1 to both partners of the team whose eight pawns are Home, -1 to the other team).
Zero otherwise, and zero for everybody on truncation. Under a scoring system (play for
points) every agent's ``infos`` holds ``{"score": points}`` at the end, and ``reward="points"``
makes those points the final rewards.

Reset options
-------------
``reset(seed=None, options={"state": STATE})`` starts from a state dict
(:mod:`sorry_env.board.state_io`). The seed shuffles the hidden draw pile and, for new games,
chooses the first player. ``env.unwrapped.state_dict()`` returns the current state dict.

Errors
------
``raw_env.step`` raises ``ValueError`` naming an illegal or out-of-range action and the legal
ones; ``env()`` instead does what PettingZoo's TerminateIllegalWrapper does (the offender gets
-1 and the game ends), with the order and bounds checks of PettingZoo's other classic-game
wrappers (all three in one: :class:`sorry_env.game_env.ClassicChecks`). A malformed state in
``reset`` raises ``ValueError`` and leaves the env as it was.

Version history
---------------
- v0: first release.
- v1: Fire and Ice (preset ``hasbro2013_fire_ice``): the observation grows to 1184 entries,
  the state array to 142 (docs/versioning.md); every other preset plays as in v0.
"""

from collections.abc import Iterable
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from ..game_env import NO_LIMIT, GameEnv, wrap_env
from ..games import load_game
from ..version import ENV_NAME
from . import engine as E
from . import game
from .board_render import RENDER_MODES, BoardRenderer, check_render_mode
from .observation import GLOBAL_STATE_SIZE, OBS_SIZE, global_state, observe
from .rules import DEFAULT_MAX_TURNS, DEFAULT_PRESET, Rules, get_rules
from .scoring import scores


def env(**kwargs: Any) -> AECEnv:
    """The raw env with the checks of PettingZoo's standard classic-game wrappers
    (:func:`sorry_env.game_env.wrap_env`)."""
    return wrap_env(raw_env(**kwargs))


class raw_env(GameEnv):
    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": list(RENDER_MODES),
        "name": ENV_NAME,
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(
        self,
        num_players: int | None = None,
        seats: Iterable[int] | None = None,
        rules: Rules | str = DEFAULT_PRESET,
        max_turns: int | None = DEFAULT_MAX_TURNS,
        render_mode: str | None = None,
        reward: str = "win",
    ):
        if reward not in ("win", "points"):
            raise ValueError(f"reward must be 'win' or 'points', got {reward!r}")
        check_render_mode(render_mode)
        self.rules = get_rules(rules)
        if reward == "points" and self.rules.scoring == "none":
            raise ValueError(f"reward='points' needs rules with a scoring system; {self.rules.name!r} has none")
        self.reward = reward
        if num_players is None and seats is None:
            num_players = 4
        in_play = game.seats_for(num_players, seats, self.rules)
        # The registered game, by its id: its module makes this env (and its sizes come from
        # compiled code, so it is not imported at `import sorry_env`).
        board = load_game("sorry", self.rules)
        super().__init__(board, len(in_play), NO_LIMIT if max_turns is None else max_turns, render_mode, in_play)
        self._rules_array = game.rules_array(self.rules)
        self._active = np.zeros(4, dtype=np.int64)
        self._active[list(self.seats)] = 1
        # state(): the full game state for centralized critics (layout: sorry_env.board.observation)
        self.state_space = spaces.Box(0.0, 1.0, (GLOBAL_STATE_SIZE,), dtype=np.float32)
        self._renderer = BoardRenderer(self.rules, render_mode, self.metadata["render_fps"])

    # -- the board game's engine, in place ----------------------------------------------------
    def _new_state(self, seed32: int) -> np.ndarray:
        state = np.zeros(E.STATE_SIZE, dtype=np.int64)
        E.init_state(state, self._rules_array, self._active, seed32)
        return state

    def _new_game(self, state: np.ndarray) -> None:
        self._renderer.start(state)

    def _status(self) -> tuple[int, int, int]:
        state = self._game()
        return int(state[E.TO_MOVE]), int(state[E.WINNER]), int(state[E.TURN])

    def _play(self, action: int) -> None:
        self._renderer.play(self._state, self._rules_array, action)  # type: ignore[arg-type]  # step checked it

    def _fill_mask(self) -> None:
        E.legal_mask(self._state, self._rules_array, self._mask)

    def _observation(self, seat: int) -> np.ndarray:
        obs = np.empty(OBS_SIZE, dtype=np.float32)
        observe(self._game(), self._rules_array, seat, obs)
        return obs

    def _refuse_action(self, action) -> None:
        game.check_action(self._game(), self.rules, action)  # raises, naming the legal actions

    # -- the end of a game under teams and scoring ---------------------------------------------
    def _final_rewards(self, winner: int) -> dict[str, float]:
        # reward="points" was refused in __init__ for rules without a scoring system
        if self.reward == "points":
            points = scores(self._game(), self.rules)
            return {a: float(points[seat]) for a, seat in self._agent_seat.items()}
        return {a: 1.0 if game.same_side(self.rules, seat, winner) else -1.0 for a, seat in self._agent_seat.items()}

    def _final_infos(self, winner: int) -> dict[str, dict]:
        infos: dict[str, dict] = {a: {} for a in self._agent_seat}
        state = self._game()
        if self.rules.scoring != "none":
            points = scores(state, self.rules)
            for a, seat in self._agent_seat.items():
                infos[a]["score"] = points[seat]
        if self.rules.teams == "parker1958":
            # Parker 1958: a partnership home before either opponent has all four men home
            # wins a double game.
            for info in infos.values():
                info["double_game"] = game.is_double_game(state, self.rules)
        return infos

    def state(self) -> np.ndarray:
        """The full game state as float32[GLOBAL_STATE_SIZE] in [0, 1] (PettingZoo's state(),
        for centralized critics): every hand included, the draw-pile order left out. Layout in
        :mod:`sorry_env.board.observation` and docs/observation.md."""
        out = np.empty(GLOBAL_STATE_SIZE, dtype=np.float32)
        global_state(self._game(), self._rules_array, None if self.max_turns == NO_LIMIT else self.max_turns, out)
        return out

    def render(self) -> str | np.ndarray | None:
        return self._renderer.render(self._game())

    def close(self) -> None:
        self._renderer.close()


raw_env.__doc__ = __doc__  # help(sorry_env.raw_env) shows the full reference
