"""Agents for every registered game other than the board game (:mod:`sorry_env.games`), built
only on the registry's functional API and written once: ``random``, ``greedy`` (one ply, ranked
by the game's own evaluation), ``playouts`` (flat Monte Carlo search), policy files
(:mod:`sorry_env.agents.game_policy`), your own function of the observation dict or
``package.module:Name``, and the game's own agents (the ``AGENTS`` of the module its
``GameType.agents_module`` names).

They act on a :class:`sorry_env.agent.GameTurn`, built with ``GameTurn.from_state``, which
hides what the player to move cannot see (the game's ``public_view``).
``sorry_env.agents.make_agent(spec, game=ID)`` and ``sorry_env.agents.action_for(env, agent)``
reach this module for those games."""

from __future__ import annotations

import functools
import importlib
import os
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from sorry_env import games
from sorry_env.agent import Agent, GameTurn, checked_action

from .base import CallableAgent
from .random_agent import RandomAgent
from .specs import ALIASES, import_agent, is_import_spec, needs_torch, refuse_directory, settings_from_spec


class GreedyAgent(Agent):
    """One ply: tries every legal action with the game's ``after_move`` and keeps the first, in
    action order, whose result ranks highest by `evaluation(state, seat)` (the game's own
    ranking: ``evaluation`` in its agents module)."""

    name = "greedy"
    game_ids = None  # any game that offers an evaluation (agent_makers checks)

    def __init__(self, seed: int | None = None, evaluation: Callable[[np.ndarray, int], Any] | None = None):
        if not callable(evaluation):
            raise TypeError(f"greedy needs the game's evaluation function, got {evaluation!r}")
        self.evaluation = evaluation
        self.reset(seed)

    def act(self, turn: GameTurn) -> int:
        if len(turn.legal) == 1:
            return int(turn.legal[0])
        best_action, best = int(turn.legal[0]), None
        for action in turn.legal:
            score = self.evaluation(turn.game.after_move(turn.state, int(action)), turn.seat)
            if best is None or score > best:
                best_action, best = int(action), score
        return best_action


MAX_PLAYOUTS = 100_000  # per decision: a setting beyond it is a typo, not a stronger agent


class PlayoutAgent(Agent):
    """Flat Monte Carlo written once for every registered game: each legal action is tried in
    ``playouts`` worlds, each a fresh :meth:`~sorry_env.games.Game.public_view` of the turn
    (what the player cannot see, the coming chance included, re-drawn), played on to the end
    with uniformly random moves; the action whose worlds the player's seat won most often is
    chosen (ties: the first in action order). It uses nothing but the registry's functional
    API, so a new game has it at once; games with their own search (an agents module's
    ``montecarlo``) are stronger at the same cost."""

    name = "playouts"
    game_ids = None  # every registered game

    def __init__(self, seed: int | None = None, playouts: int = 50, max_turns: int = 0):
        if not 1 <= playouts <= MAX_PLAYOUTS:
            raise ValueError(f"playouts must be in 1..{MAX_PLAYOUTS:,}, got {playouts}")
        if max_turns < 0:
            raise ValueError(f"max_turns must be at least 0 (0: the game's own limit), got {max_turns}")
        self.playouts = playouts
        self.max_turns = max_turns
        self.reset(seed)

    def act(self, turn: GameTurn) -> int:
        if len(turn.legal) == 1:
            return int(turn.legal[0])
        game = turn.game
        limit = self.max_turns or game.game_type.max_turns
        wins = np.zeros(len(turn.legal))
        for k, action in enumerate(turn.legal):
            for _ in range(self.playouts):
                world = game.apply(game.public_view(turn.state, self.rng), int(action))
                while game.winner(world) is None and game.turn(world) < limit:
                    world = game.apply(world, int(self.rng.choice(game.legal_actions(world))))
                wins[k] += game.winner(world) == turn.seat
        return int(turn.legal[int(np.argmax(wins))])


def game_agents_module(game_id: str) -> ModuleType | None:
    """The module of a registered game's own agents (its ``GameType.agents_module``), or None."""
    name = games.game_type(game_id).agents_module
    return importlib.import_module(name) if name else None


def agent_makers(game_id: str) -> dict[str, Callable[..., Agent]]:
    """Spec name -> agent maker (called with ``seed=`` and the spec's settings) of a registered
    game other than the board game: random, playouts, greedy if the game offers an evaluation,
    and the game's own agents."""
    if games.game_class(game_id).game_type.id == "sorry":
        raise ValueError("the board game's agents are sorry_env.agents.AGENTS")
    makers: dict[str, Callable[..., Agent]] = {"random": RandomAgent, "playouts": PlayoutAgent}
    module = game_agents_module(game_id)
    evaluation = getattr(module, "evaluation", None)
    if evaluation is not None:
        makers["greedy"] = functools.partial(GreedyAgent, evaluation=evaluation)
    makers.update(getattr(module, "AGENTS", {}))
    return makers


def as_game(game: str | games.Game) -> games.Game:
    """The Game a game id (its default variant) or a Game names; ValueError for an unknown id."""
    if isinstance(game, games.Game):
        return game
    return games.load_game(game)


def make_game_agent(game: str | games.Game, spec: str, seed: int | None = None, allow_code: bool = True) -> Agent:
    """An agent of a registered game other than the board game from a spec, parsed as the board
    game's (:func:`sorry_env.agents.make_agent`): a name of :func:`agent_makers` (the board
    game's aliases too) with optional ``name:key=value,...`` settings; a policy file of that
    game (``*.safetensors``); ``package.module:Name`` (your own Agent, if `allow_code`). A
    setting it does not have, a value of the wrong kind, a board-game policy file or an agent of
    another game is refused with a ValueError naming it."""
    game = as_game(game)
    kind = game.game_type
    if not isinstance(spec, str):
        raise TypeError(f"an agent spec is text, got {spec!r}")
    makers = agent_makers(kind.id)
    name, _, settings = spec.partition(":")
    name = ALIASES.get(name, name)
    if name in makers:
        maker = makers[name]
        return maker(seed=seed, **settings_from_spec(maker, name, spec, settings))
    if is_import_spec(spec, makers):  # before the file suffixes: its settings may name a file
        if not allow_code:
            raise ValueError(f"agent {spec[:120]!r} runs code (an import) and is not allowed here")
        agent = import_agent(spec, seed)
        agent.check_game_id(kind.id)
        return agent
    if spec.endswith(".zip"):
        raise ValueError(
            f"{spec}: sb3 models play the board game; {kind.long_name} plays {sorted(makers)} or its policy files"
        )
    if spec.endswith(".safetensors") or os.path.isfile(spec):
        # torch is imported only when a policy is asked for
        return needs_torch("game_policy").GamePolicyAgent(spec, game=game, seed=seed)
    refuse_directory(spec)
    raise ValueError(
        f"unknown agent {name!r} for {kind.long_name}; choose from {sorted(makers)} (or the aliases "
        f"{sorted(ALIASES)}), a {kind.long_name} policy file (.safetensors) or package.module:Name"
    )


def as_game_agent(game: str | games.Game, agent: Any, seed: int | None = None) -> Agent:
    """An Agent of a registered game from a spec (:func:`make_game_agent`), an Agent (returned
    as it is) or a function of the observation dict (:class:`CallableAgent`)."""
    if isinstance(agent, Agent):
        return agent
    if isinstance(agent, str):
        return make_game_agent(game, agent, seed=seed)
    if callable(agent) and not isinstance(agent, type):
        return CallableAgent(agent, seed=seed)
    raise TypeError(f"an agent is a spec (text), an Agent or a function of the observation dict; got {agent!r}")


def check_plays(agent: Agent, game: games.Game, num_players: int) -> None:
    """ValueError unless `agent` can play `game` with `num_players` (its game ids, then its
    own check_game: a policy file's game and player count)."""
    agent.check_game_id(game.game_type.id)
    agent.check_game(game, num_players)


def game_action_for(raw: Any, agent: Any, rng: np.random.Generator | None = None) -> int:
    """The action `agent` (a spec, an Agent or a function of the observation dict) chooses for
    the player to move in the unwrapped env of a registered game other than the board game."""
    game = games.game_of_env(raw)
    agent = as_game_agent(game, agent)
    state = raw.state_array
    mover = raw.agent_selection
    if not raw.agents or raw.terminations.get(mover) or raw.truncations.get(mover):
        raise ValueError("the game is over (won or truncated): nobody is to move")
    legal = game.legal_actions(state)
    check_plays(agent, game, len(game.seats(state)))
    turn = GameTurn.from_state(game, state, rng if rng is not None else np.random.default_rng(), legal)
    return checked_action(agent.act(turn), legal, f"agent {agent.name!r}")


__all__ = [
    "GameTurn",
    "GreedyAgent",
    "PlayoutAgent",
    "agent_makers",
    "as_game",
    "as_game_agent",
    "check_plays",
    "game_action_for",
    "game_agents_module",
    "make_game_agent",
]
