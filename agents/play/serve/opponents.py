"""What a browser client may pick as an opponent: the server's own list, and nothing else.

For a game whose policies ship (``GameType.shipped_policies``: the board game) that list is
:class:`OpponentMenu`'s, below. For every other game (:func:`choose_agent`) an opponent is the
*name* of one of the game's registered agents (``random``, ``greedy``, the game's own agents of
its ``GameType.agents_module``) with its default settings; settings, policy files and
``module:Name`` are refused before anything is built. Such a game's own agents may be
searches, so they move in the search processes (the generic random and greedy answer in the
request's thread).

A client's opponent text is looked up, never interpreted: it is either a registered agent
name (``heuristic``, ``expectimax:depth=3``) with settings inside the caps of
:data:`SETTING_CAPS`, a shipped catalog name (``hasbro2013-4p``, or ``trained`` for the
game's own), or the ``spec`` of a policy file the server listed at start-up. Anything else
(a ``module:Name`` spec, a path, a ``.zip``) is refused before the disk or the importer is
touched: the agent is then built from the server's own data (a class from
:data:`agents.AGENTS` and integers, or a path the server found), never by
:func:`agents.make_agent` on the client's text.

The caps keep one move of a search agent around a second or less on the machine of
docs/hardening.md (measured there), so a client cannot ask for a search that stalls a worker.
"""

from __future__ import annotations

import dataclasses
import math
import os
import pathlib
import re
import stat

from sorry_env import games
from sorry_env.agents import AGENTS, ALIASES, Agent, agents_of_game, catalog, make_agent
from sorry_env.board.rules import Rules, get_rules
from sorry_env.checks import excerpt

from ..prompt import first_offered
from .workers import MovePool, RemoteAgent

# Per agent, the settings a client may give and their inclusive bounds (the type of a bound is
# the setting's type). Every registered agent needs an entry (a test checks): a new agent is
# offered only once someone has decided what a client may ask of it. Not offered anywhere:
# montecarlo's `value` (it names a file) and rollout_plies=0 (play to the end: 13 s a move).
SETTING_CAPS: dict[str, dict[str, tuple[int, int] | tuple[float, float]]] = {
    "random": {},
    "greedy": {},
    "heuristic": {},
    "expectimax": {"depth": (1, 3), "samples": (1, 16), "model_others": (0, 1)},
    "montecarlo": {"iterations": (1, 1000), "rollout_plies": (1, 10), "epsilon": (0.0, 1.0)},
    # Its network is the server's choice (SERVER_NETWORKS), never a client's file; 256
    # simulations are about 54 ms a move (docs/agents.md).
    "azsearch": {"simulations": (1, 256)},
}
# Registered agents a client may not pick, and why (every agent is in SETTING_CAPS or here).
NOT_OFFERED: dict[str, str] = {
    "openspiel_mcts": "needs the optional open_spiel package and seconds a move",
    "openspiel_ismcts": "needs the optional open_spiel package and seconds a move",
}
# (preset, players) -> the shipped value network azsearch searches with on this server (in the
# checkpoints folder); azsearch is offered for these games only.
SERVER_NETWORKS: dict[tuple[str, int], str] = {("hasbro2003", 2): "value-2p.safetensors"}
# Agents whose move is a search (hundreds of ms at the caps): they play in the worker processes
# under the per-move time budget (agents.play.serve.workers); the others answer in a millisecond.
SEARCH_AGENTS = frozenset({"expectimax", "montecarlo", "azsearch"})
MAX_OPPONENT_TEXT = 200  # characters: far more than any offered choice needs
# Agents written for every game: quick, so they answer in the request's thread. Every other
# agent of a game without a menu is its own, maybe a search: it plays in the pool.
IN_THREAD_AGENTS = ("random", "greedy")
# A policy file the server offers is a regular file of at most this size (the shipped ones are
# 0.7-2.2 MB); a larger one, a FIFO, a device or a folder named *.safetensors is left out.
MAX_POLICY_BYTES = 64 * 1024 * 1024
_INTEGER = re.compile(r"[0-9]{1,10}")
_NUMBER = re.compile(r"[0-9]{1,3}(\.[0-9]{1,6})?")


@dataclasses.dataclass(frozen=True)
class Opponent:
    """One offered choice: a registered agent with settings, or a listed policy file."""

    label: str  # what the page shows as the player's name
    agent: str | None = None  # a key of agents.AGENTS
    settings: tuple[tuple[str, int | float | str], ...] = ()
    path: str | None = None  # a policy file the server listed

    @property
    def search(self) -> bool:
        return self.agent in SEARCH_AGENTS

    def build(self, seed: int | None = None) -> Agent:
        """The agent, from the server's own data (a registered class, or a listed file)."""
        if self.agent is not None:
            return AGENTS[self.agent](seed=seed, **dict(self.settings))
        from sorry_env.agents.policy import PolicyAgent  # imports torch: only when a policy plays

        if self.path is None:
            raise ValueError("an opponent choice names an agent or a policy file")  # every choice is made with one
        check_policy_file(pathlib.Path(self.path))  # it may have changed since start-up
        return PolicyAgent(self.path, seed=seed)


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
    shipped_dir = catalog.checkpoints_dir()
    candidates += [shipped_dir / entry.file for entry in catalog.CATALOG]
    by_file = {(shipped_dir / e.file).resolve(): e.name for e in catalog.CATALOG}
    found: dict[pathlib.Path, dict] = {}
    for path in candidates:
        try:
            check_policy_file(path)
        except ValueError:
            continue
        real = path.resolve()
        if real in found:
            continue
        from sorry_env.agents.specs import needs_torch  # torch is imported only when there are files to read

        try:
            meta = needs_torch("policy").read_metadata(path)
            entry = {
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
        found[real] = entry
    return list(found.values())


def _setting(name: str, key: str, text: str) -> int | float:
    """One client setting, parsed and inside its cap (ValueError naming the cap if not)."""
    caps = SETTING_CAPS[name]
    if key not in caps:
        offered = ", ".join(sorted(caps)) or "none"
        raise ValueError(f"agent {name!r} has no setting {excerpt(key)} a client may give; its settings: {offered}")
    low, high = caps[key]
    pattern = _INTEGER if isinstance(low, int) else _NUMBER
    if not pattern.fullmatch(text):
        kind = "an integer" if isinstance(low, int) else "a number with at most 6 decimals"
        raise ValueError(f"{name} setting {key} must be {kind} from {low} to {high}, got {excerpt(text)}")
    value = int(text) if isinstance(low, int) else float(text)
    if not (low <= value <= high and math.isfinite(value)):
        raise ValueError(f"{name} setting {key} must be from {low} to {high} on this server, got {excerpt(text)}")
    return value


def parse_agent(text: str) -> Opponent | None:
    """A registered agent with capped settings from `text` (``name`` or ``name:k=v,...``), or
    None when `text` does not name a registered agent."""
    name, _, settings = text.partition(":")
    name = ALIASES.get(name, name)
    if name not in AGENTS or name not in SETTING_CAPS:
        return None
    chosen: dict[str, int | float] = {}
    for item in filter(None, (part.strip() for part in settings.split(","))):
        key, eq, value = (part.strip() for part in item.partition("="))
        if not eq:
            raise ValueError(f"agent setting {excerpt(item)} must look like key=value")
        chosen[key] = _setting(name, key, value)
    return Opponent(label=text, agent=name, settings=tuple(sorted(chosen.items())))


def with_server_network(choice: Opponent, rules: Rules | str, players: int) -> Opponent:
    """`choice` (azsearch with a client's capped settings) with the server's value network for
    this game added as its ``net``; ValueError for a game the server has no network for."""
    name = get_rules(rules).name
    file = SERVER_NETWORKS.get((name, players))
    if file is None:
        games = ", ".join(f"{preset} with {n} players" for preset, n in SERVER_NETWORKS)
        raise ValueError(f"azsearch plays only the games this server has a value network for: {games}")
    path = catalog.checkpoints_dir() / file
    check_policy_file(path)
    return dataclasses.replace(choice, settings=tuple(sorted((*choice.settings, ("net", str(path))))))


class OpponentMenu:
    """The choices a client may make, fixed at start-up from the registered agents, the caps
    and the policy files found then."""

    def __init__(self, folder: pathlib.Path | None):
        self.policies = list_policies(folder)
        self._by_spec = {p["spec"]: p for p in self.policies}
        self._by_spec.update({p["shipped"]: p for p in self.policies if p["shipped"]})

    def choose(self, text, rules: Rules | str, players: int) -> Opponent:
        """The offered choice `text` names for this game; ValueError if it names none. Looks
        nothing up on the disk and imports nothing."""
        _check_text(text)
        text = original = text.strip()
        agent = parse_agent(text)
        if agent is not None and agent.agent == "azsearch":
            return with_server_network(agent, rules, players)
        if agent is not None:
            return agent
        if text == catalog.TRAINED:
            entry = catalog.find(get_rules(rules), players)
            if entry is None or entry.name not in self._by_spec:
                name = get_rules(rules).name
                raise ValueError(f"no shipped policy on this server plays {name} with {players} players")
            text = entry.name
        policy = self._by_spec.get(text)
        if policy is None:
            agents = ", ".join(sorted(SETTING_CAPS))
            raise ValueError(  # the client's own text in full (at most MAX_OPPONENT_TEXT), nothing about it
                f"unknown opponent {text!r}: choose a registered agent ({agents}; settings within the caps "
                "of /api/options), a shipped policy's name or a policy listed by /api/options"
            )
        name = get_rules(rules).name
        if policy["rules"] != name or policy["players"] != players:
            entry = catalog.find(rules, players)
            fitting = (
                f"; the shipped policy for {name} with {players} players is {entry.name}"
                if entry is not None and entry.name in self._by_spec
                else ""
            )
            raise ValueError(
                f"{text} was trained for {policy['rules']} with {policy['players']} players, "
                f"not {name} with {players}{fitting}"
            )
        return Opponent(label=os.path.basename(original), path=policy["path"])  # as the client chose it

    def estimator_path(self, rules: Rules, players: int) -> str | None:
        """The listed shipped policy of this game if it holds a value network, else None."""
        entry = catalog.find(rules, players)
        policy = self._by_spec.get(entry.name) if entry is not None else None
        return policy["path"] if policy is not None and policy["value"] else None

    def caps(self) -> dict:
        """SETTING_CAPS as JSON: per agent, per setting, [low, high]."""
        return {name: {key: list(bounds) for key, bounds in caps.items()} for name, caps in SETTING_CAPS.items()}


def offered_agents(game_id: str) -> list[str]:
    """The agent names a client may pick for a game without a menu (its registered agents), sorted."""
    return sorted(agents_of_game(game_id))


def remote_agent(pool: MovePool, game: games.Game, name: str, settings: tuple, seed: int) -> RemoteAgent:
    """The game's agent `name` (with `settings`) moving in the pool; the first quick agent the
    game offers (prompt.QUICK_AGENTS) moves when the pool gives no answer."""
    game_id = game.game_type.id
    fallback = make_agent(first_offered(game_id), seed=seed, allow_code=False, game=game)
    return RemoteAgent(pool, name, settings, seed, game_id, fallback)


def named_agent(pool: MovePool, game: games.Game, name: str, seed: int) -> Agent:
    """The game's registered agent `name` with its default settings, built from the server's
    own data: in this thread, or moving in the pool."""
    if name in IN_THREAD_AGENTS:
        return make_agent(name, seed=seed, allow_code=False, game=game)
    return remote_agent(pool, game, name, (), seed)


def choose_agent(game: games.Game, text) -> str:
    """The name of the offered agent `text` names for `game` (a game without a menu);
    ValueError naming the choices otherwise. Looks nothing up on the disk and imports nothing
    a client names."""
    kind = game.game_type
    offered = offered_agents(kind.id)
    _check_text(text)
    name = ALIASES.get(text.strip(), text.strip())
    if name in offered:
        return name
    if name.partition(":")[0] in offered:
        raise ValueError(
            f"{kind.long_name}'s agents play with their default settings on this server: choose one of {offered}"
        )
    raise ValueError(f"unknown opponent {text!r} for {kind.long_name}: choose one of {offered}")


def _check_text(text) -> None:
    """ValueError unless a client's opponent `text` is non-empty text of at most MAX_OPPONENT_TEXT characters."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"an opponent must be one of the choices of /api/options (text), got {excerpt(text)}")
    if len(text) > MAX_OPPONENT_TEXT:
        raise ValueError(f"an opponent is at most {MAX_OPPONENT_TEXT} characters, got {len(text)}")
