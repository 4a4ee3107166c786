"""What a browser client may pick as an opponent: the server's own list, and nothing else.

One menu (:class:`OpponentMenu`) for every registered game. A game's agents on offer
(:func:`offered_agents`) are its registered agents (:func:`agents.agents_of_game`) whose class
has caps decided in :data:`SETTING_CAPS`; a game whose policies do not ship
(``GameType.shipped_policies`` False) offers its other agents too, with their default settings.
A game whose policies ship also offers its shipped catalog names (``hasbro2013-4p``, or
``trained`` for the game's own) and the policy files the server listed at start-up (their
``spec``). What differs between games is declared by the game (``GameType.shipped_policies``)
and by its agents' classes (their caps, whether they answer in a millisecond), never by its id.

A client's opponent text is looked up, never interpreted: it is a name of the game's offered
agents (``heuristic``, ``expectimax:depth=3``) with settings inside the caps of its class, a
shipped catalog name, or the ``spec`` of a listed policy file. Anything else (a
``module:Name`` spec, a path, a ``.zip``) is refused before the disk or the importer is
touched: the agent is then built from the server's own data (a registered agent maker and
integers, or a path the server found), never by :func:`agents.make_agent` on the client's text.

The caps keep one move of a search agent around a second or less on the machine of
docs/hardening.md (measured there), so a client cannot ask for a search that stalls a worker.
Agents that are not quick (:data:`QUICK_AGENTS`: searches, a game's own agents) move in the
search processes under the per-move budget (:mod:`sorry_env.agents.play.serve.workers`).
"""

from __future__ import annotations

import math
import os
import pathlib
import re
import stat

from sorry_env import games
from sorry_env.agents import (
    ALIASES,
    Agent,
    AZSearchAgent,
    ExpectimaxAgent,
    GreedyAgent,
    HeuristicAgent,
    MonteCarloAgent,
    OpenSpielISMCTSAgent,
    OpenSpielMCTSAgent,
    RandomAgent,
    RankingGreedyAgent,
    agents_of_game,
    catalog,
)
from sorry_env.agents.specs import needs_torch
from sorry_env.checks import excerpt

from .workers import MovePool, RemoteAgent

Caps = dict[str, tuple[int, int] | tuple[float, float]]
# Per agent class, the settings a client may give and their inclusive bounds (the type of a
# bound is the setting's type). Every agent of a game whose policies ship needs an entry (a
# test checks): such an agent is offered only once someone has decided what a client may ask
# of it. Not offered anywhere: montecarlo's `value` (it names a file) and rollout_plies=0
# (play to the end: 13 s a move).
SETTING_CAPS: dict[type, Caps] = {
    RandomAgent: {},
    GreedyAgent: {},
    HeuristicAgent: {},
    ExpectimaxAgent: {"depth": (1, 3), "samples": (1, 16), "model_others": (0, 1)},
    MonteCarloAgent: {"iterations": (1, 1000), "rollout_plies": (1, 10), "epsilon": (0.0, 1.0)},
    # Its network is the server's choice (SERVER_NETWORKS), never a client's file; 256
    # simulations are about 54 ms a move (docs/agents.md).
    AZSearchAgent: {"simulations": (1, 256)},
}
# Agent classes a client may not pick, and why (every agent of a game whose policies ship is
# in SETTING_CAPS or here).
NOT_OFFERED: dict[type, str] = {
    OpenSpielMCTSAgent: "needs the optional open_spiel package and seconds a move",
    OpenSpielISMCTSAgent: "needs the optional open_spiel package and seconds a move",
}
# Agent classes whose move takes a millisecond: they answer in the request's thread. Every
# other agent (a search at hundreds of ms, or a game's own agent, maybe a search) moves in the
# worker processes under the per-move time budget (agents.play.serve.workers).
QUICK_AGENTS = frozenset({RandomAgent, GreedyAgent, RankingGreedyAgent, HeuristicAgent})
# (preset, players) -> the shipped value network azsearch searches with on this server (in the
# checkpoints folder); azsearch is offered for these games only.
SERVER_NETWORKS: dict[tuple[str, int], str] = {("hasbro2003", 2): "value-2p.safetensors"}
MAX_OPPONENT_TEXT = 200  # characters: far more than any offered choice needs
# A policy file the server offers is a regular file of at most this size (the shipped ones are
# 0.7-2.2 MB); a larger one, a FIFO, a device or a folder named *.safetensors is left out.
MAX_POLICY_BYTES = 64 * 1024 * 1024
# The text a setting's value may be, by the type of its bounds, and its name in messages.
_FORMS = {
    int: (re.compile(r"[0-9]{1,10}"), "an integer"),
    float: (re.compile(r"[0-9]{1,3}(\.[0-9]{1,6})?"), "a number with at most 6 decimals"),
}


def _agent_class(maker) -> type:
    """The class a registered agent maker builds (the generic greedy is a partial of its class)."""
    return getattr(maker, "func", maker)


def check_policy_file(path: pathlib.Path) -> None:
    """ValueError unless `path` is a regular file of at most MAX_POLICY_BYTES (stat only:
    a FIFO is never opened)."""
    try:
        info = os.stat(path)
    except OSError as exc:
        raise ValueError(f"{path.name}: cannot read it ({exc.strerror})") from None
    if not stat.S_ISREG(info.st_mode):
        raise ValueError(f"{path.name} is not a regular file")
    if info.st_size > MAX_POLICY_BYTES:
        raise ValueError(f"{path.name} is over the {MAX_POLICY_BYTES // 2**20} MiB limit for a policy file")


def list_policies(folder: pathlib.Path | None) -> list[dict]:
    """The policy files the server offers: the ``*.safetensors`` files of `folder` and the
    shipped catalog's files, each a regular file within MAX_POLICY_BYTES whose metadata
    reads as a policy's. Each entry: spec (how a client names it), path, name, rules,
    players, shipped (the catalog name, or None), value (holds a value network)."""
    candidates: list[pathlib.Path] = []
    if folder is not None and folder.is_dir():
        candidates += sorted(folder.glob("*.safetensors"))
    candidates += [entry.path for entry in catalog.CATALOG]
    by_file = {entry.path.resolve(): entry.name for entry in catalog.CATALOG}
    found: dict[pathlib.Path, dict] = {}
    for path in candidates:
        real = path.resolve()
        if real in found:
            continue
        try:
            check_policy_file(path)
            meta = needs_torch("policy").read_metadata(path)  # torch is imported only when there is a file
            found[real] = {
                "spec": f"{path.parent.name}/{path.name}",
                "path": str(path),
                "name": str(meta.get("name", path.stem))[:80],
                "rules": meta["rules"]["name"],
                "players": int(meta["num_players"]),
                "shipped": by_file.get(real),
                "value": "value_hidden" in meta["network"],
            }
        except (ValueError, KeyError, TypeError):  # not a policy of this project (a value network)
            continue
    return list(found.values())


def offered_agents(game: games.Game) -> dict[str, Caps]:
    """Name -> caps of the agents a client may pick for `game` (module docstring), sorted by name."""
    default: Caps | None = None if game.game_type.shipped_policies else {}  # caps of an agent without an entry
    offered = {}
    for name, maker in sorted(agents_of_game(game).items()):
        caps = SETTING_CAPS.get(_agent_class(maker), default)
        if caps is not None and _agent_class(maker) not in NOT_OFFERED:
            offered[name] = caps
    return offered


def _setting(name: str, caps: Caps, key: str, text: str) -> int | float:
    """One client setting of agent `name`, parsed and inside its cap (ValueError naming the cap if not)."""
    if key not in caps:
        offered = ", ".join(sorted(caps)) or "none (it plays with its default settings on this server)"
        raise ValueError(f"agent {name!r} has no setting {excerpt(key)} a client may give; its settings: {offered}")
    low, high = caps[key]
    pattern, kind = _FORMS[type(low)]
    if not pattern.fullmatch(text):
        raise ValueError(f"{name} setting {key} must be {kind} from {low} to {high}, got {excerpt(text)}")
    value = type(low)(text)
    if not (low <= value <= high and math.isfinite(value)):
        raise ValueError(f"{name} setting {key} must be from {low} to {high} on this server, got {excerpt(text)}")
    return value


def parse_agent(game: games.Game, text: str) -> tuple[str, tuple] | None:
    """(name, settings) of the offered agent of `game` that `text` names (``name`` or
    ``name:k=v,...``, each setting within its cap), or None when `text` names none."""
    name, _, settings = text.partition(":")
    name = ALIASES.get(name, name)
    caps = offered_agents(game).get(name)
    if caps is None:
        return None
    chosen: dict[str, int | float | str] = {}
    for item in filter(None, (part.strip() for part in settings.split(","))):
        key, eq, value = (part.strip() for part in item.partition("="))
        if not eq:
            raise ValueError(f"agent setting {excerpt(item)} must look like key=value")
        chosen[key] = _setting(name, caps, key, value)
    return name, tuple(sorted(chosen.items()))


def server_network(game: games.Game, players: int) -> str:
    """The server's value network for this game, which azsearch searches with (its ``net``);
    ValueError for a game the server has no network for."""
    file = SERVER_NETWORKS.get((game.variant_name, players))
    if file is None:
        offered = ", ".join(f"{preset} with {n} players" for preset, n in SERVER_NETWORKS)
        raise ValueError(f"azsearch plays only the games this server has a value network for: {offered}")
    path = catalog.checkpoints_dir() / file
    check_policy_file(path)
    return str(path)


class OpponentMenu:
    """The choices a client may make in every registered game, fixed at start-up from the
    registered agents, the caps and the policy files found then."""

    def __init__(self, folder: pathlib.Path | None, pool: MovePool):
        self.pool = pool  # where agents that are not quick move
        self.policies = list_policies(folder)
        self._by_spec = {p["spec"]: p for p in self.policies}
        self._by_spec.update({p["shipped"]: p for p in self.policies if p["shipped"]})

    def choose(self, game: games.Game, text, players: int, seed: int) -> tuple[str, Agent]:
        """(label, agent) of the offered choice `text` names for `game` played by `players`,
        built from the server's own data (a registered maker, or a listed file) with `seed`:
        an agent that is not quick moves in the pool. ValueError if `text` names no choice or it
        cannot play this game. Looks nothing up on the disk and imports nothing a client names."""
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"an opponent must be one of the choices of /api/options (text), got {excerpt(text)}")
        if len(text) > MAX_OPPONENT_TEXT:
            raise ValueError(f"an opponent is at most {MAX_OPPONENT_TEXT} characters, got {len(text)}")
        text = original = text.strip()
        kind, name = game.game_type, game.variant_name
        chosen = parse_agent(game, text)
        if chosen is not None:
            agent_name, settings = chosen
            maker = agents_of_game(game)[agent_name]
            if _agent_class(maker) is AZSearchAgent:
                settings = tuple(sorted((*settings, ("net", server_network(game, players)))))
            if _agent_class(maker) not in QUICK_AGENTS:
                return text, RemoteAgent(self.pool, agent_name, settings, seed, kind.id)
            agent = maker(seed=seed, **dict(settings))
            game.check_agent(agent, players)
            return text, agent
        shipped = self._shipped(game, players)
        if text == catalog.TRAINED and kind.shipped_policies:
            if shipped is None:
                raise ValueError(f"no shipped policy on this server plays {name} with {players} players")
            text = shipped["shipped"]
        policy = self._by_spec.get(text) if kind.shipped_policies else None
        if policy is None:
            policies = ", a shipped policy's name or a policy listed by /api/options" if kind.shipped_policies else ""
            raise ValueError(  # the client's own text in full (at most MAX_OPPONENT_TEXT), nothing about it
                f"unknown opponent {text!r} for {kind.long_name}: choose one of its agents "
                f"({', '.join(offered_agents(game))}; settings within the caps of /api/options){policies}"
            )
        if policy["rules"] != name or policy["players"] != players:
            fitting = (
                f"; the shipped policy for {name} with {players} players is {shipped['shipped']}" if shipped else ""
            )
            raise ValueError(
                f"{text} was trained for {policy['rules']} with {policy['players']} players, "
                f"not {name} with {players}{fitting}"
            )
        label = os.path.basename(original)  # as the client chose it
        try:
            check_policy_file(pathlib.Path(policy["path"]))  # it may have changed since start-up
            agent = needs_torch("policy").PolicyAgent(policy["path"], seed=seed)
        except Exception as exc:  # a listed file damaged since start-up: a refusal, never a 500
            raise ValueError(f"{label} could not be loaded ({type(exc).__name__})") from None
        game.check_agent(agent, players)
        return label, agent

    def estimator(self, game: games.Game, players: int):
        """The listed shipped policy of this game if it holds a value network (it tells the
        person's win chance), else None (also when its file was damaged since start-up)."""
        policy = self._shipped(game, players)
        if policy is None or not policy["value"]:
            return None
        try:
            return needs_torch("policy").PolicyAgent(policy["path"], game=game)
        except Exception:  # the game goes on without the estimate
            return None

    def _shipped(self, game: games.Game, players: int) -> dict | None:
        """The listed shipped policy of this game and player count (its entry), or None."""
        entry = catalog.find(game, players) if game.game_type.shipped_policies else None
        return self._by_spec.get(entry.name) if entry is not None else None
