"""The game registry, in the manner of OpenSpiel's ``GameType`` / ``register_game``: every game
declares its facts once in a :class:`GameType` and offers the same small functional API
(:class:`Game`), so agents, tournaments, policy files, replays and tests can treat every
registered game alike.

Example::

    from sorry_env import games
    g = games.load_game("sorry", "hasbro2003")   # or games.load_game("<id>") for its default variant
    s = g.new_state(num_players=2, seed=7)
    s = g.apply(s, g.legal_actions(s)[0])        # chance resolved from the state's generator
    after = g.after_move(s, g.legal_actions(s)[0])
    if g.is_chance_node(after):
        outcome, p = g.chance_outcomes(after)[0]
        s = g.apply_chance(after, outcome)

Adding a game: a folder under ``sorry_env/`` with its engine and a :class:`Game` subclass,
and one line naming that module in :data:`GAME_MODULES` (games of your own, e.g. in tests,
call :func:`register_game` instead). CONTRIBUTING.md, "Where to add a game".
"""

from __future__ import annotations

import abc
import dataclasses
import importlib
import json
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

# The registry line of each built-in game, the board game first: the module whose import
# registers it. Imported on first use, so `import sorry_env` compiles no game it does not need.
GAME_MODULES: tuple[str, ...] = (
    "sorry_env.board.board_game",
    "sorry_env.express.express_game",
)


@dataclasses.dataclass(frozen=True)
class PolicyFile:
    """A trained policy of a game shipped in the checkpoints folder (its catalog entry:
    ``sorry_env.agents.catalog``): played by `name`, or as the game's ``trained`` agent for
    `variant` and `players` when `default`."""

    name: str
    variant: str
    players: int
    file: str  # the file's name in the checkpoints folder
    default: bool = True


@dataclasses.dataclass(frozen=True)
class GameType:
    """The facts of one game, each written once here.

    ``variants`` names the rule sets the game ships (its presets), the first being the
    default; ``policy_format`` is the key under which its policy files store their metadata
    (a file of another game is refused by name)."""

    id: str  # short id: sorry-eval --game, policy files' "game", load_game(id)
    long_name: str
    version: int  # the environment version (sorry_env/version.py)
    env_id: str  # pettingzoo.make("aec", env_id)
    player_counts: tuple[int, ...]
    seat_names: tuple[str, ...]  # by seat index
    seat_colours: tuple[str, ...]  # by seat index
    num_actions: int  # the largest action space over its variants
    observation_size: int
    max_turns: int  # the env's and tournaments' default turn limit
    policy_format: str
    variants: tuple[str, ...]
    turn_unit: str = "turns"  # what one turn of max_turns is, in words (tables and help texts)
    # The env's metadata name, which policy files record as their layout (default: "<id>_v<version>").
    env_name: str = ""
    # "module:function" that pettingzoo.make("aec", env_id) calls (sorry_env registers the
    # built-in games' at import); "" for a game made only through Game.make_env.
    env_entry_point: str = ""
    # The module of the game's own agents, or "" for none: it has AGENTS (spec name -> Agent
    # class acting on a sorry_env.agent.GameTurn) and may have evaluation(state, seat) ->
    # number, the ranking the generic "greedy" agent maximises after each legal move.
    agents_module: str = ""
    # What its variants are called (help texts, "--rules names ..." errors): "rules" for the
    # board game's presets, "variant" for a game that ships one rule set or names them so.
    variant_word: str = "variant"
    # Its policy files (sorry_env.agents.policy): the metadata's format_version, the network
    # kinds it plays ("afterstate" scores the positions each legal move leads to, so needs the
    # game's afterstates), and whether the file records the variant's JSON form under "rules"
    # (a game of many variants) rather than only the game's id under "game".
    policy_format_version: int = 1
    policy_kinds: tuple[str, ...] = ("mlp",)
    policy_records_rules: bool = False
    # Whether its board has a drawn layout (sorry_env.board.board_layout, sorry_env.board.draw): sorry-replay
    # --gif and board images draw its positions, and the browser game draws the board and plays
    # it by clicks on the cells (Game.play_view's page); False: the page shows Game.render_text
    # and lists the moves.
    can_draw: bool = False
    # Whether its replay files and move lists (sorry_env.replay) keep the first format, from
    # before other games could be recorded: no "game" key (a file without one is this game's),
    # seats named by colour, its move texts naming the mover, turns counted as "turns".
    original_replay_format: bool = False
    # True for a game whose compiled engine steps games in place, many at once, and scores
    # afterstates (the board game's sorry_env.board.engine): the batched trainers need it
    # (sorry-train's MaskablePPO, TD(lambda), expert iteration, RLlib and sorry-bench's
    # baselines on them; a game without one trains with the same PPO over this registry,
    # training/game_ppo.py), and its tournament results keep the rules' name.
    batched_step: bool = False
    # Whether people play it against a menu of its policy files with a win-chance estimate
    # (sorry-play --estimate, the browser game's menu), its agents offered only where their
    # class's caps are decided; without: no policy files, and its agents without decided caps
    # are offered with their default settings. (Its shipped files are policy_files, below.)
    shipped_policies: bool = False
    # The policy files it ships (the catalog lists every game's, in the registry's order).
    policy_files: tuple[PolicyFile, ...] = ()

    @property
    def default_variant(self) -> str:
        return self.variants[0]

    @property
    def layout_name(self) -> str:
        """The observation/action layout id its policy files record (the env's metadata name)."""
        return self.env_name or f"{self.id}_v{self.version}"

    def check_players(self, num_players: Any) -> int:
        """`num_players` as an int if the game is played by that many, else ValueError."""
        if (
            isinstance(num_players, (bool, np.bool_))
            or not isinstance(num_players, (int, np.integer))
            or num_players not in self.player_counts
        ):
            counts = ", ".join(map(str, self.player_counts))
            raise ValueError(f"{self.long_name}: num_players must be one of {counts}, got {num_players!r}")
        return int(num_players)


class Game(abc.ABC):
    """One registered game with one variant chosen: the functional API every game offers.

    States are numpy int64 arrays; no method mutates its input state. Methods raise
    ValueError naming the problem on a finished game, an illegal action or a bad outcome."""

    game_type: ClassVar[GameType]

    def __init__(self, variant: Any = None) -> None:
        self.variant = self.parse_variant(self.game_type.default_variant if variant is None else variant)

    def __repr__(self) -> str:
        return f"load_game({self.game_type.id!r}, {self.variant_name!r})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.variant_to_json() == self.variant_to_json()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((self.game_type.id, self.variant_name))

    # ---- variants (rules) and their one JSON form ---------------------------------------
    @abc.abstractmethod
    def parse_variant(self, variant: Any) -> Any:
        """The variant object from its name (or the object itself); ValueError if unknown."""

    @property
    @abc.abstractmethod
    def variant_name(self) -> str: ...

    @abc.abstractmethod
    def variant_to_json(self) -> dict:
        """The variant's JSON form (what policy files and replays store)."""

    @classmethod
    @abc.abstractmethod
    def from_json(cls, data: Any, where: str = "rules") -> Game:
        """The game whose variant has this JSON form; ValueError naming `where` if it is not one."""

    # ---- sizes ---------------------------------------------------------------------------
    @property
    @abc.abstractmethod
    def num_actions(self) -> int: ...

    @property
    def observation_size(self) -> int:
        return self.game_type.observation_size

    # ---- playing -------------------------------------------------------------------------
    @abc.abstractmethod
    def new_state(self, num_players: int, seed: int = 0, first: int | None = None) -> np.ndarray:
        """A new game of `num_players`, its chance (shuffle, first roll) drawn from `seed`;
        `first` is the seat to move first (one of :meth:`seats`; default: the game's own
        choice). Tournaments rotate it for fairness."""

    def new_state_in_seats(self, seats: tuple[int, ...], seed: int = 0, first: int | None = None) -> np.ndarray:
        """A new game with exactly `seats` in play (a replay file's seats), as :meth:`new_state`
        of that many players; ValueError if the game seats them elsewhere (a game that can seat
        its players in other seats overrides this)."""
        state = self.new_state(len(seats), seed=seed, first=first)
        if self.seats(state) != tuple(seats):
            where = list(self.seats(state))
            raise ValueError(
                f"{self.game_type.long_name} seats {len(seats)} players in seats {where}, not {list(seats)}"
            )
        return state

    @abc.abstractmethod
    def legal_actions(self, state: np.ndarray) -> np.ndarray:
        """Legal action indices of the player to move, ascending."""

    def legal_actions_trusted(self, state: np.ndarray) -> np.ndarray:
        """:meth:`legal_actions` of a state the caller's own game made (a tournament's hot
        loop, beside :meth:`apply_trusted`): a game may skip re-checking the state."""
        return self.legal_actions(state)

    def check_action(self, state: np.ndarray, action: int) -> None:
        """ValueError naming the legal actions unless `action` is one of them."""
        legal = self.legal_actions(state)
        if action not in legal:
            raise ValueError(f"action {action} is illegal here; legal: {legal.tolist()}")

    @abc.abstractmethod
    def apply(self, state: np.ndarray, action: int) -> np.ndarray:
        """A copy after the legal `action`, chance (the next card or roll) drawn from the
        state's own generator."""

    def apply_trusted(self, state: np.ndarray, action: int) -> np.ndarray:
        """The state after `action`, which the caller has checked is legal (a tournament's hot
        loop): :meth:`apply` by default; a game with a compiled engine steps `state` in place
        and returns it, so the caller must use only the returned state."""
        return self.apply(state, action)

    @abc.abstractmethod
    def after_move(self, state: np.ndarray, action: int) -> np.ndarray:
        """A copy after the legal `action` but before chance: a chance node when the move
        ends the turn (see :meth:`is_chance_node`), else the next decision or a finished game."""

    @abc.abstractmethod
    def is_chance_node(self, state: np.ndarray) -> bool: ...

    @abc.abstractmethod
    def chance_outcomes(self, state: np.ndarray) -> list[tuple[str, float]]:
        """[(outcome name, probability)] at a chance node; the probabilities sum to 1."""

    @abc.abstractmethod
    def apply_chance(self, state: np.ndarray, outcome: str) -> np.ndarray:
        """A copy of a chance node with `outcome` (a name of :meth:`chance_outcomes`) happened."""

    @abc.abstractmethod
    def winner(self, state: np.ndarray) -> int | None:
        """The winning seat, or None while the game runs."""

    def winning_seats(self, state: np.ndarray) -> tuple[int, ...]:
        """The seats sharing the win: the winner alone by default (a game of teams adds the
        winner's partner); empty while the game runs."""
        winner = self.winner(state)
        return () if winner is None else (winner,)

    def is_running(self, state: np.ndarray, max_turns: int) -> bool:
        """Whether nobody has won and fewer than `max_turns` turns are finished (a game with a
        compiled engine answers in one call: the tournament's hot loop asks every turn)."""
        return self.winner(state) is None and self.turn(state) < max_turns

    @abc.abstractmethod
    def to_move(self, state: np.ndarray) -> int: ...

    @abc.abstractmethod
    def seats(self, state: np.ndarray) -> tuple[int, ...]:
        """The seats in play, ascending."""

    @abc.abstractmethod
    def turn(self, state: np.ndarray) -> int:
        """Turns finished so far (what the turn limit counts)."""

    @abc.abstractmethod
    def observation(self, state: np.ndarray, seat: int) -> np.ndarray:
        """The env's observation vector (float32, :attr:`observation_size`) of `seat`."""

    @abc.abstractmethod
    def public_view(self, state: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """A copy with everything the player to move cannot see re-drawn from `rng`."""

    @abc.abstractmethod
    def describe_action(self, state: np.ndarray, action: int) -> str:
        """The legal `action` of the player to move in words (move lists, logs, replays)."""

    @abc.abstractmethod
    def render_text(self, state: np.ndarray, viewer: int | None = None) -> str:
        """The position as text (several lines) as seat `viewer` may see it: what only other
        seats may see (a hand) is left out; `viewer` None shows only what every seat sees.
        What the terminal and browser games and replays show of a position."""

    def recorded_move_facts(self, state: np.ndarray) -> dict:
        """What a replay file records of the position a move is made in besides its turn and
        seat (a game's chance drawn for the move, e.g. the card in play): nothing by default."""
        return {}

    def final_scores(self, state: np.ndarray) -> dict[int, int] | None:
        """Each seat's points in a finished game played for points; None when the game keeps
        no score (the default) or has not finished."""
        return None

    # ---- positions and envs --------------------------------------------------------------
    @abc.abstractmethod
    def state_to_dict(self, state: np.ndarray) -> dict: ...

    @abc.abstractmethod
    def state_from_dict(self, data: Any, seed: int = 0) -> np.ndarray:
        """A validated state from its dict; ValueError naming the problem."""

    @abc.abstractmethod
    def make_env(self, num_players: int, **kwargs: Any) -> Any:
        """Its PettingZoo AEC env (raw, unwrapped)."""

    # ---- what agents and policies are shown ---------------------------------------------
    @property
    def agent_rules(self) -> Any:
        """What ``Agent.check_game`` is given as the game played (a turn's ``rules``): the
        Game itself, whose agents are shown a :class:`sorry_env.agent.GameTurn`; a game whose
        agents read their own rules object (the board game's Rules, in a ``Turn``) overrides
        this (:func:`sorry_env.agent.agent_turn`)."""
        return self

    def policy_input(self, state: np.ndarray, seat: int) -> np.ndarray:
        """The float32 vector a policy network of this game reads for `seat` (default: its
        :meth:`observation`; a game whose networks also read the seat's view of the state
        overrides this)."""
        return self.observation(state, seat)

    def policy_layout(self) -> dict:
        """The input/action layout its policy files record and are checked against (a file made
        for another layout is refused at load instead of playing nonsense)."""
        kind = self.game_type
        return {"version": kind.layout_name, "obs_size": kind.observation_size, "n_actions": self.num_actions}

    @classmethod
    def of_env(cls, raw_env: Any) -> Game | None:
        """The game an unwrapped env plays, or None if it is not one of this game's envs."""
        return None

    # ---- agents and people playing it ----------------------------------------------------
    def check_agent(self, agent: Any, num_players: int) -> None:
        """ValueError unless `agent` plays this game with `num_players` (its game ids, then its
        own check: a policy file's game, rules and player count), before any play."""
        agent.check_game_id(self.game_type.id)
        agent.check_game(self.agent_rules, num_players)

    def play_view(self, state: np.ndarray, viewer: int | None) -> PlayView:
        """What a person at seat `viewer` (None: an onlooker, shown what every seat sees) is
        shown of the game starting at `state`, move by move (the terminal and browser games;
        with `viewer` None also replays' move texts and pictures, :meth:`PlayView.recorded`);
        a game with more to tell returns its own PlayView."""
        return PlayView(self, viewer)


class PlayView:
    """What a person playing `game` at seat `viewer` is shown, move by move, in the game's own
    words (:meth:`Game.render_text`, :meth:`Game.describe_action`): the position, the moves on
    offer, each move played and the result. It follows one game: every move played goes
    through :meth:`told`, in order (a game's view may keep names that last the whole game)."""

    def __init__(self, game: Game, viewer: int | None):
        self.game, self.viewer = game, viewer

    def seat_name(self, seat: int) -> str:
        return self.game.game_type.seat_names[seat]

    def same_side(self, seat: int, winner: int) -> bool:
        """Whether `seat` shares in the win of `winner` (a partner under team rules)."""
        return seat == winner

    def position(self, state: np.ndarray) -> str:
        """The position as text, as the viewer may see it."""
        return self.game.render_text(state, self.viewer)

    def options(self, state: np.ndarray) -> list[tuple[int, str]]:
        """(action, words) of the viewer's moves to choose from, each distinct outcome once."""
        return [(int(a), self.game.describe_action(state, int(a))) for a in self.game.legal_actions(state)]

    def told(self, before: np.ndarray, action: int, after: np.ndarray, player: str | None) -> str:
        """The move `action` of the seat to move in `before` (which led to `after`) in words;
        `player` is who played it (None: the viewer, addressed as "You")."""
        seat, unit = self.game.to_move(before), self.game.game_type.turn_unit
        who = "You" if player is None else f"{self.seat_name(seat)} ({player})"
        text = f"{who}: {self.recorded(before, action, after)}"
        passed = self.game.turn(after) - self.game.turn(before) - 1  # turns after it that nobody could use
        return text + (f" ({passed} {unit} then passed without a possible move)" if passed > 0 else "")

    def recorded(self, before: np.ndarray, action: int, after: np.ndarray) -> str:
        """The move `action` that led from `before` to `after` in the game's own words, as
        replay files record it (:meth:`Game.describe_action` by default). Like :meth:`told`,
        it follows the game: a replay gives it every move, in order, instead of :meth:`told`."""
        return self.game.describe_action(before, action)

    def picture_labels(self) -> Any:
        """What a picture of the current position names its pieces by (a copy that later moves
        leave alone; None by default: nothing to name)."""
        return None

    def result(self, winner: int | None, max_turns: int, player: str) -> str:
        """The end of the game in words; `player` is who sits at `winner`."""
        if winner is None:
            return f"A draw: no one won within {max_turns} {self.game.game_type.turn_unit}."
        if winner == self.viewer:
            return "You win!"
        if self.viewer is not None and self.same_side(self.viewer, winner):
            return f"Your team wins ({self.seat_name(winner)} finished)."
        return f"{self.seat_name(winner)} ({player}) wins."

    # ---- the browser game's page (JSON) ----------------------------------------------------
    def page(self, state: np.ndarray) -> dict:
        """What the page shows of the position (a view's fields)."""
        return {"text": self.position(state)}

    def page_after(self, state: np.ndarray) -> dict:
        """What the page shows of the position after a move (an event's fields)."""
        return {"text_after": self.position(state)}

    def page_moves(self, state: np.ndarray) -> list[dict]:
        """The viewer's legal moves as the page offers them."""
        return [{"action": action, "description": words} for action, words in self.options(state)]

    def page_move(self, before: np.ndarray, action: int) -> dict:
        """What the page keeps of a move played, besides its text (a log entry's fields)."""
        return {"name": self.seat_name(self.game.to_move(before))}


_REGISTRY: dict[str, type[Game]] = {}
_loaded = False


def register_game(game_class: type[Game]) -> type[Game]:
    """Register a :class:`Game` subclass under its ``game_type.id`` (usable as a decorator).
    Registering the same id twice with another class is a mistake."""
    if not (isinstance(game_class, type) and issubclass(game_class, Game)):
        raise TypeError(f"register_game takes a Game subclass, got {game_class!r}")
    kind = getattr(game_class, "game_type", None)
    if not isinstance(kind, GameType):
        raise TypeError(f"{game_class.__name__}.game_type must be a GameType")
    known = _REGISTRY.get(kind.id)
    if known is not None and known is not game_class:
        raise ValueError(f"game id {kind.id!r} is already registered by {known.__name__}")
    _REGISTRY[kind.id] = game_class
    return game_class


def unregister_game(game_id: str) -> None:
    """Forget a game (for tests that register a game of their own)."""
    _REGISTRY.pop(game_id, None)


def _load_builtin() -> None:
    global _loaded
    if not _loaded:
        for module in GAME_MODULES:
            importlib.import_module(module)
        _loaded = True


def registered_games() -> dict[str, type[Game]]:
    """Every registered game by id, the built-in ones first."""
    _load_builtin()
    return dict(_REGISTRY)


def game_class(game_id: str) -> type[Game]:
    """The Game class registered as `game_id`; ValueError naming the registered ids."""
    games = registered_games()
    if not isinstance(game_id, str) or game_id not in games:
        raise ValueError(f"unknown game {game_id!r}; registered games: {sorted(games)}")
    return games[game_id]


def default_game_id() -> str:
    """The first built-in game's id (:data:`GAME_MODULES`: the board game's), what is played
    when no game is named."""
    return builtin_game_types()[0].id


def game_type(game_id: str) -> GameType:
    return game_class(game_id).game_type


def load_game(game_id: str, variant: Any = None) -> Game:
    """The game `game_id` with `variant` (a preset name or the game's own variant object;
    default: its first variant)."""
    return game_class(game_id)(variant)


def game_of_env(env: Any) -> Game:
    """The registered game an env (any wrapper level) plays; TypeError if none plays it."""
    raw = getattr(env, "unwrapped", env)
    for cls in registered_games().values():
        found = cls.of_env(raw)
        if found is not None:
            return found
    raise TypeError(f"{type(env).__name__} is not the env of a registered game ({sorted(registered_games())})")


def game_of_policy_header(header: dict) -> str | None:
    """The id of the game whose policy-format key is in a policy file's header, or None."""
    for cls in registered_games().values():
        if cls.game_type.policy_format in header:
            return cls.game_type.id
    return None


# The metadata key of the networks sorry-bench's baselines save (training/bench/network_agent.py,
# and examples/selfplay_ppo.py's --save): JSON {"algorithm", "rules", "players", ...}. Such a file
# is not a policy file; the baselines whose networks play again, each by its agent spec.
BENCH_NETWORK_KEY = "sorry_bench_game"
BENCH_NETWORK_AGENTS = {
    "selfplay_ppo": "sorry_env.training.bench.selfplay_ppo:agent",
    "dqn": "sorry_env.training.bench.dqn:agent",
}


def _bench_network_agent(record: object) -> str | None:
    """The agent spec (without its path) that plays a sorry-bench network whose metadata record
    is `record` (JSON text, bounded by the header's reader), or None."""
    try:
        algorithm = json.loads(record).get("algorithm") if isinstance(record, str) else None
    except (ValueError, AttributeError, RecursionError):
        return None
    return BENCH_NETWORK_AGENTS.get(algorithm) if isinstance(algorithm, str) else None


def check_policy_game(header: dict, path: Any, game_id: str) -> None:
    """ValueError unless a policy file's header has `game_id`'s policy-format key; a file of
    another registered game is named as such, with the sorry-eval option that plays it, and a
    sorry-bench network with the agent spec that plays it."""
    kind = game_type(game_id)
    if kind.policy_format in header:
        return
    if BENCH_NETWORK_KEY in header:
        spec = _bench_network_agent(header[BENCH_NETWORK_KEY])
        if spec is not None:
            raise ValueError(
                f"{path} is a sorry-bench network, not a policy file; play it as the agent spec {spec}:path={path}"
            )
        raise ValueError(f"{path} is a sorry-bench network of none of the algorithms {sorted(BENCH_NETWORK_AGENTS)}")
    other = game_of_policy_header(header)
    if other is not None:
        theirs = game_type(other)
        how = f"sorry-eval --game {other}"
        raise ValueError(f"{path} is a policy file for {theirs.long_name}, not {kind.long_name}; play it with {how}")
    raise ValueError(f"{path} is a safetensors file without {kind.policy_format} metadata")


def game_id_of_env_id(env_id: str) -> str | None:
    for cls in registered_games().values():
        if cls.game_type.env_id == env_id:
            return cls.game_type.id
    return None


def seats_after(seats, seat: int) -> list:
    """The other seats of `seats` (in turn order) in the order they move after `seat`."""
    i = list(seats).index(seat)
    return [seats[(i + k) % len(seats)] for k in range(1, len(seats))]


def check_first_seat(first: Any, seats: tuple[int, ...], name: str = "first") -> int | None:
    """`first` as a seat of `seats` (or None), else a ValueError naming the argument `name`:
    new_state's check, and the batched envs' seat arguments (sorry_env.vector)."""
    if first is None:
        return None
    if isinstance(first, (bool, np.bool_)) or not isinstance(first, (int, np.integer)) or first not in seats:
        raise ValueError(f"{name} must be a seat in play {list(seats)} or None, got {first!r}")
    return int(first)


def random_playout(
    game: Game, num_players: int, seed: int, max_turns: int | None = None, check: Callable | None = None
) -> np.ndarray:
    """Play one game of uniformly random legal moves (the generator seeded with `seed`) to
    its end or `max_turns` (default: the game's turn limit); `check(state)` runs after every
    move. Returns the last state."""
    rng = np.random.default_rng(seed)
    state = game.new_state(num_players, seed=seed)
    limit = game.game_type.max_turns if max_turns is None else max_turns
    while game.is_running(state, limit):
        legal = game.legal_actions(state)
        state = game.apply(state, int(rng.choice(legal)))
        if check is not None:
            check(state)
    return state


def builtin_game_types() -> list[GameType]:
    """The GameType of every built-in game (:data:`GAME_MODULES`), the board game first."""
    found = {cls.__module__: cls.game_type for cls in registered_games().values()}
    return [found[module] for module in GAME_MODULES if module in found]  # in GAME_MODULES' order


def other_builtin_game_types() -> list[GameType]:
    """The GameType of every built-in game but the board game, importing only their modules:
    what ``import sorry_env`` registers env ids with. It must stay light: the board game's
    module computes its sizes with compiled code (about a second), and its env id is
    registered from ``sorry_env.version``, its facts' home."""
    others = GAME_MODULES[1:]  # GAME_MODULES[0] is the board game
    for module in others:
        importlib.import_module(module)
    return [cls.game_type for cls in _REGISTRY.values() if cls.__module__ in others]
