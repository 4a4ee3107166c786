"""Sorry! Express as a PettingZoo AEC environment.

=====================  ==========================================================
Import                 ``from sorry_env.express import env, raw_env``
Registered id          ``pettingzoo.make("aec", "sorry_env/express-v0")`` after ``import sorry_env``
Actions                Discrete: 57
Parallel API           no (turn-based; a player acts once per die it resolves)
Manual control         no
Agents                 ``player_<seat>``, seats 0 .. n-1 (player k's home base starts as colour k)
Action shape           ()
Action values          0 .. 56
Observation shape      ``{"observation": (55,), "action_mask": (57,)}``
Observation values     observation in [0, 1] (float32); action_mask 0/1 (int8)
=====================  ==========================================================

The dice game Sorry! Express for 2 to 4 players. Each turn the player to move rolls three
dice and resolves them one at a time in an order of their choice (one step per die); a die
that can change nothing is skipped. The first player whose home section holds all four
pawns of its colour wins. Rules, with their sources, in ``docs/express.md``.

Arguments
---------
``raw_env(num_players=4, max_turns=DEFAULT_MAX_TURNS, render_mode=None)``

- ``num_players``: 2, 3 or 4.
- ``max_turns``: truncate every agent once this many turns (rolls, not dice) are finished
  (``sorry_env.express.game.DEFAULT_MAX_TURNS``). ``None`` disables truncation.
- ``render_mode``: ``"ansi"`` returns the position as text from ``render()``.

Observation
-----------
Player-relative: the observing seat first, then the other seats in turn order; colours are
absolute. Index ranges in :mod:`sorry_env.express.engine` and ``docs/express.md``.
``action_mask`` is 1 exactly on the legal actions of the player to move (all zero for the
others and after the game ends).

Action space
------------
One action resolves one die: the face (dice showing the same face are interchangeable) and
the choice for it (source, victim, base and colour). Layout in
:mod:`sorry_env.express.engine`; ``describe_action(a)`` names an action in words.

Rewards
-------
+1 to the winner, -1 to every other player, checked after every die; zero otherwise and zero
for everybody on truncation.

Reset options
-------------
``reset(seed=None, options={"state": STATE})`` starts from a state dict
(:mod:`sorry_env.express.state_io`). The seed drives every roll and, for new games, chooses
the first player. ``env.unwrapped.state_dict()`` returns the current state dict.

Errors
------
``raw_env.step`` raises ``ValueError`` naming an illegal or out-of-range action and the legal
ones; ``env()`` applies PettingZoo's TerminateIllegalWrapper instead (the offender gets -1
and the game ends). A malformed state in ``reset`` raises ``ValueError`` and leaves the env
as it was.

Version history
---------------
- v0: first release.
"""

from typing import ClassVar

from ..game_env import NO_LIMIT, GameEnv, wrap_env
from . import engine as E
from . import game
from .game import DEFAULT_MAX_TURNS


def env(**kwargs):
    """The raw env with PettingZoo's standard classic-game wrappers."""
    return wrap_env(raw_env(**kwargs))


class raw_env(GameEnv):
    metadata: ClassVar[dict] = {
        "render_modes": ["ansi"],
        "name": game.GAME_TYPE.layout_name,
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(self, num_players=4, max_turns=DEFAULT_MAX_TURNS, render_mode=None):
        # The registered game, by its id (its module makes this env); it checks num_players.
        super().__init__(game.GAME_TYPE.id, num_players, NO_LIMIT if max_turns is None else max_turns, render_mode)

    # -- the engine, in place --------------------------------------------------------------------
    def _status(self) -> tuple[int, int, int]:
        state = self._game()
        return int(state[E.TO_MOVE]), int(state[E.WINNER]), int(state[E.TURN])

    def _play(self, action: int) -> None:
        E.step(self._state, action)

    def _fill_mask(self) -> None:
        E.legal_mask(self._state, self._mask)

    def _refuse_action(self, action) -> None:
        game.check_action(self._game(), action)  # raises, naming the legal actions


raw_env.__doc__ = __doc__  # help(sorry_env.express.raw_env) shows the full reference
