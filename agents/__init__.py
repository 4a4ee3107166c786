"""Agents for sorry_env: scripted baselines, search agents and trained policies, all behind
the interface in :mod:`sorry_env.agents.base`. ``make_agent(spec)`` builds one from a name, optionally
with settings: ``"expectimax:depth=3"``, ``"montecarlo:iterations=400,rollout_plies=20"``
(``mcts`` is an alias of ``montecarlo``, its old name: see ALIASES); a policy file; an sb3
model; or your own agent as ``package.module:Name``. ``as_agent`` also passes Agent objects
and functions through, and ``action_for(env, agent)`` asks an agent for the move of the
player to move in a PettingZoo env.

One road for every registered game (:mod:`sorry_env.games`): ``make_agent(spec, game=ID)``
reads a spec the same way for each, through one table (:func:`agents_of_game`): the agents
written once over the registry's API (``random``, ``playouts``, ``greedy`` over the game's own
evaluation), the game's own agents (the ``AGENTS`` of the module its
``GameType.agents_module`` names; the board game's are :data:`AGENTS` here), its policy files
(:mod:`sorry_env.agents.policy`) and shipped policies (:mod:`sorry_env.agents.catalog`)."""

import functools
import importlib
import os

import numpy as np

from sorry_env import games
from sorry_env.agent import agent_label, agent_turn, checked_action  # one home: the core (its envs label opponents too)
from sorry_env.numba_cache import clear_stale

# Agents compile code that calls the engine: recompile when either changes (one rule for every
# caching package: sorry_env.numba_cache).
clear_stale("sorry_env.agents", "sorry_env", "sorry_env.board")

from .azsearch import AZSearchAgent  # noqa: E402
from .base import Agent, CallableAgent, Turn, public_view  # noqa: E402
from .catalog import BY_NAME, TRAINED, shipped  # noqa: E402
from .expectimax import ExpectimaxAgent  # noqa: E402
from .greedy import GreedyAgent, RankingGreedyAgent  # noqa: E402
from .heuristic import HeuristicAgent  # noqa: E402
from .montecarlo import MonteCarloAgent  # noqa: E402
from .openspiel_bots import OpenSpielISMCTSAgent, OpenSpielMCTSAgent  # noqa: E402  (open_spiel imported when made)
from .playouts import PlayoutAgent  # noqa: E402
from .random_agent import RandomAgent  # noqa: E402
from .specs import ALIASES, import_agent, is_import_spec, needs_torch, refuse_directory, settings_from_spec  # noqa: E402

# The board game's own agents (its GameType.agents_module is this package); agents_of_game adds
# the ones written once for every game.
AGENTS = {
    "random": RandomAgent,
    "greedy": GreedyAgent,
    "heuristic": HeuristicAgent,
    "expectimax": ExpectimaxAgent,
    "montecarlo": MonteCarloAgent,
    "openspiel_mcts": OpenSpielMCTSAgent,
    "openspiel_ismcts": OpenSpielISMCTSAgent,
    "azsearch": AZSearchAgent,
}
MCTSAgent = MonteCarloAgent  # old class name


def runs_code(spec) -> bool:
    """Whether building `spec` runs code that is not this package's: ``package.module:Name``
    imports a module, and an sb3 ``.zip`` may unpickle parts of the file."""
    return isinstance(spec, str) and (is_import_spec(spec, AGENTS) or spec.endswith(".zip"))


def refuse_code(spec: str, source: str, how: str) -> None:
    """ValueError if `spec` runs code (:func:`runs_code`): for specs read from a file
    (`source`, e.g. ``"runs/x/run_state.json"``), which are data and never imported or
    unpickled; `how` says how the user can name the spec themselves (``"--trust-agent SPEC"``)."""
    if runs_code(spec):
        kind = (
            "imports Python code" if is_import_spec(spec, AGENTS) else "is an sb3 zip, whose loading can unpickle code"
        )
        raise ValueError(
            f"agent {spec[:120]!r} read from {source} {kind}; specs stored in files are data and are never "
            f"run. If you trust it, name it yourself: {how}"
        )


def make_agent(
    spec: str, seed=None, allow_code: bool = True, game: "str | games.Game | None" = None, players: int | None = None
) -> Agent:
    """An agent from a spec. `game` (a registered game's id or a :class:`sorry_env.games.Game`;
    default: the board game) says which game's agents the spec names; every game's spec is
    read the same way:

    - a name of :func:`agents_of_game` (ALIASES maps old names), with optional
      ``name:key=value,...`` settings passed to its constructor: ``"expectimax:depth=3"``;
    - a trained policy file of that game (``*.safetensors``), or a shipped policy's catalog
      name (``sorry-play --list``);
    - ``trained``: the shipped policy of `game` (its variant) for `players` players
      (:func:`sorry_env.agents.catalog.shipped`; ValueError naming the games that have one);
    - an sb3-contrib MaskablePPO model (``*.zip``) trained on the Gymnasium env, for the games
      its agent plays (:mod:`sorry_env.agents.sb3_agent`);
    - ``package.module:Name`` (optionally ``:key=value,...``): your own Agent subclass or a
      function returning an Agent, imported from the Python path.

    A setting an agent does not have, a value of the wrong kind, a policy file or an agent of
    another game is refused with a ValueError naming it. `allow_code=False` refuses the specs
    that run code (the last two: :func:`runs_code`), as a ValueError: for specs that did not
    come from the user (read from a file, received over HTTP)."""
    if not isinstance(spec, str):
        raise TypeError(f"an agent spec is text, got {spec!r}; pass Agent objects through as_agent")
    kind = _played(game).game_type
    makers = agents_of_game(kind.id)
    if not allow_code and runs_code(spec):
        raise ValueError(f"agent {spec[:120]!r} runs code (an import or an sb3 zip) and is not allowed here")
    name, _, settings = spec.partition(":")
    name = ALIASES.get(name, name)
    if name in makers:
        return makers[name](seed=seed, **settings_from_spec(makers[name], name, spec, settings))
    if is_import_spec(spec, makers):  # before the file suffixes: its settings may name a file
        agent = import_agent(spec, seed)
        agent.check_game_id(kind.id)
        return agent
    if spec.endswith(".zip"):
        from .sb3_agent import SB3Agent  # imports torch and sb3 only when a model is loaded

        if SB3Agent.game_ids is not None and kind.id not in SB3Agent.game_ids:
            theirs = " or ".join(games.game_type(g).long_name for g in SB3Agent.game_ids)
            raise ValueError(
                f"{spec}: sb3 models play {theirs}; {kind.long_name} plays {sorted(makers)} or its policy files"
            )
        return SB3Agent(spec, seed=seed)
    if spec == TRAINED:  # the shipped policy of this game
        if players is None:
            raise ValueError(
                f"{TRAINED!r} stands for the shipped policy of a game and player count: give make_agent "
                "players=N (and game=), or name the file or its catalog name (sorry-play --list)"
            )
        spec = str(shipped(_played(game), players))
    spec = str(BY_NAME[spec].path) if spec in BY_NAME else spec  # a shipped policy by its catalog name
    if spec.endswith(".safetensors") or os.path.isfile(spec):
        # torch is imported only when a policy is asked for
        return needs_torch("policy").PolicyAgent(spec, seed=seed, game=kind.id)
    refuse_directory(spec)
    raise ValueError(
        f"unknown agent {name!r} for {kind.long_name}; choose from {sorted(makers)} (or the aliases "
        f"{sorted(ALIASES)}), a {kind.long_name} policy file (.safetensors) or a shipped policy's name "
        "(sorry-play --list), an sb3 model (.zip) or package.module:Name"
    )


def as_agent(agent, seed=None, game: "str | games.Game | None" = None, players: int | None = None) -> Agent:
    """An Agent from anything that names or is one: a spec of `game`'s agents for `players`
    players (:func:`make_agent`), an :class:`Agent` (returned as it is), or a function from the
    observation dict to an action (:class:`CallableAgent`)."""
    if isinstance(agent, Agent):
        return agent
    if isinstance(agent, str):
        return make_agent(agent, seed=seed, game=game, players=players)
    if callable(agent) and not isinstance(agent, type):
        return CallableAgent(agent, seed=seed)
    raise TypeError(
        f"an agent is a spec (text), an agents.Agent or a function from the observation dict "
        f"to an action; got {agent!r}"
    )


def action_for(env, agent, rng: np.random.Generator | None = None) -> int:
    """The action `agent` chooses for the player to move in the PettingZoo env of any
    registered game (``sorry_env.env()``, ``raw_env()``, ``Game.make_env`` or any wrapper of
    them): the one call needed to use a shipped policy, a search agent or your own as an
    opponent in your own loop::

        opponent = agents.as_agent("checkpoints/sorry-2p.safetensors")
        action = agents.action_for(env, opponent)

    The agent sees only what the player to move may see (the hidden parts are re-drawn from
    `rng`; default: a fresh generator). `agent` is an Agent (reuse one object over the game),
    a spec of the env's game (:func:`agents_of_game`) or a function of the observation dict.
    ValueError if the game is over, if the agent cannot play this game (an agent of another
    game, a policy trained for other rules or another player count), or if it picks an
    illegal action."""
    raw = getattr(env, "unwrapped", env)
    played = games.game_of_env(raw)  # TypeError for an env of no registered game
    agent = as_agent(agent, game=played)
    state = raw.state_array  # RuntimeError before the first reset
    mover = raw.agent_selection
    if not raw.agents or raw.terminations.get(mover) or raw.truncations.get(mover):
        raise ValueError("the game is over (won or truncated): nobody is to move")
    legal = played.legal_actions(state)
    played.check_agent(agent, len(played.seats(state)))
    turn = agent_turn(played, state, rng if rng is not None else np.random.default_rng(), legal)
    return checked_action(agent.act(turn), legal, f"agent {agent_label(agent)!r}", f"for {mover}")


def _played(game: "str | games.Game | None") -> games.Game:
    """The Game `game` names: a Game as it is, a registered id with its default variant, None
    the board game (the first registered); ValueError for an unknown id."""
    if isinstance(game, games.Game):
        return game
    return games.load_game(games.default_game_id() if game is None else game)


def agents_of_game(game_id: "str | games.Game") -> dict:
    """Spec name -> agent maker (called with ``seed=`` and the spec's settings) of a registered
    game, one table for every game: random and playouts (written once over the registry's
    API), greedy over the game's ``evaluation(state, seat)`` if its agents module has one, and
    the game's own agents (the ``AGENTS`` of its ``GameType.agents_module``; the board game's
    are :data:`AGENTS`), which take precedence."""
    kind = _played(game_id).game_type
    makers: dict = {"random": RandomAgent, "playouts": PlayoutAgent}
    module = importlib.import_module(kind.agents_module) if kind.agents_module else None
    evaluation = getattr(module, "evaluation", None)
    if evaluation is not None:
        makers["greedy"] = functools.partial(RankingGreedyAgent, evaluation=evaluation)
    makers.update(getattr(module, "AGENTS", {}))
    return makers


def set_torch_threads(threads: int | None = None) -> int | None:
    """Give torch `threads` threads in this process (default: the SORRY_TORCH_THREADS
    environment variable, else 1) if torch is loaded; returns the number set, or None when
    torch is not loaded (nothing to set). Policy agents evaluate one small batch at a time:
    with several processes on few cores, torch's default of one thread per core makes every
    worker's threads fight over the same cores (a 400-game evaluation on 2 cores: 165 s with
    the default, 14.8 s with one thread, identical results)."""
    import sys

    if "torch" not in sys.modules:
        return None
    if threads is None:
        text = os.environ.get(TORCH_THREADS_VAR, "1")
        if not text.isdigit() or int(text) < 1:
            raise ValueError(f"{TORCH_THREADS_VAR} must be a positive integer, got {text!r}")
        threads = int(text)
    sys.modules["torch"].set_num_threads(threads)
    return threads


TORCH_THREADS_VAR = "SORRY_TORCH_THREADS"

__all__ = [
    "Agent",
    "Turn",
    "CallableAgent",
    "public_view",
    "make_agent",
    "runs_code",
    "refuse_code",
    "shipped",
    "as_agent",
    "action_for",
    "agent_label",
    "set_torch_threads",
    "agents_of_game",
    "AGENTS",
    "RandomAgent",
    "GreedyAgent",
    "HeuristicAgent",
    "ExpectimaxAgent",
    "MonteCarloAgent",
    "AZSearchAgent",
    "PlayoutAgent",
    "RankingGreedyAgent",
    "MCTSAgent",
    "ALIASES",
]
