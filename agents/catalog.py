"""The shipped trained policies of every registered game, keyed by game: for the board game one
per preset family and player count (docs/shipped.md).

    from sorry_env import agents
    agents.shipped("hasbro2013", 4)          # Path of checkpoints/hasbro2013-4p.safetensors
    agents.make_agent("hasbro2013-4p")       # the same policy by its catalog name
    sorry-play --list                        # the catalog, with each file's rules and players

A policy plays only the rules and player count it was trained for; :func:`shipped` finds the
file that fits a game, or says which games have one. The spec ``trained`` means "the shipped
policy for this game": ``make_agent("trained", game=..., players=N)`` (tournaments, the Gymnasium
env's opponents, ``sorry-play --opponents``). Files live in
``checkpoints/`` beside the package (a source checkout); ``SORRY_CHECKPOINTS`` names another folder.

Looking a game up reads no file and imports no torch. Nor does checking a network file's
metadata against a game (:func:`check_trained_for`, :class:`NetworkFiles`): every agent that
plays network files refuses a game they were not trained for here, with the fitting file's name.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
from typing import Any

from sorry_env import games
from sorry_env.board.board_game import SorryGame
from sorry_env.board.rules import Rules
from sorry_env.checks import excerpt

# The default folder of the shipped files: checkpoints/ beside the package.
DEFAULT_CHECKPOINTS = pathlib.Path(__file__).resolve().parents[1] / "checkpoints"
# The agent spec that stands for the shipped policy of the game being set up.
TRAINED = "trained"


@dataclasses.dataclass(frozen=True)
class ShippedPolicy(games.PolicyFile):
    """One catalog entry: a policy file a registered game declares (``GameType.policy_files``:
    its catalog name, also an agent spec, its variant and players, its file in the checkpoints
    folder, whether it is the game's ``trained``), with the id of that game."""

    game: str = ""

    @property
    def path(self) -> pathlib.Path:
        return checkpoints_dir() / self.file

    def plays(self, played: games.Game, players: int) -> bool:
        """Whether this is the game's policy for `played` (a custom variant equal to the
        preset counts as it) with `players`."""
        return self.default and self.players == players and games.load_game(self.game, self.variant) == played


# Every registered built-in game's shipped files (GameType.policy_files), the board game first.
CATALOG: tuple[ShippedPolicy, ...] = tuple(
    ShippedPolicy(**dataclasses.asdict(f), game=kind.id)
    for kind in games.builtin_game_types()
    for f in kind.policy_files
)
BY_NAME = {entry.name: entry for entry in CATALOG}


def named_like(path: str | os.PathLike) -> ShippedPolicy | None:
    """The catalog entry whose file has `path`'s file name (a missing
    ``checkpoints/sorry-2p.safetensors`` typed outside the project folder), or None."""
    return next((entry for entry in CATALOG if entry.file == os.path.basename(path)), None)


def checkpoints_dir() -> pathlib.Path:
    """The folder of the shipped files: ``$SORRY_CHECKPOINTS`` or checkpoints/ beside the package."""
    folder = os.environ.get("SORRY_CHECKPOINTS")
    return pathlib.Path(folder) if folder else DEFAULT_CHECKPOINTS


def policy_game(rules: games.Game | Rules | str) -> games.Game:
    """The game a policy is for: a :class:`sorry_env.games.Game` as it is, the board game's
    Rules or preset name as the board game with those rules."""
    return rules if isinstance(rules, games.Game) else SorryGame(rules)


def _named(played: games.Game) -> str:
    kind = played.game_type
    return f"{kind.variant_word} {played.variant_name!r}" if kind.policy_records_rules else kind.long_name


def find(rules: games.Game | Rules | str, players: int) -> ShippedPolicy | None:
    """The catalog entry for this game (a Game, or the board game's rules) and player count, or None."""
    played = policy_game(rules)
    return next((e for e in CATALOG if e.plays(played, players)), None)


def shipped(rules: games.Game | Rules | str, players: int) -> pathlib.Path:
    """Path of the shipped policy trained for this game (a Game, or the board game's rules: a
    preset name or Rules) and `players`; ValueError naming the games that have one if there
    is none, or if its file is missing."""
    played = policy_game(rules)
    entry = find(played, players)
    if entry is None:
        raise ValueError(
            f"no shipped policy for {_named(played)} with {players} players; "
            f"shipped for it: {', '.join(e.name for e in CATALOG if e.game == played.game_type.id) or 'none'} "
            "(sorry-play --list)"
        )
    if not entry.path.is_file():
        raise ValueError(f"the shipped policy {entry.name} should be {entry.path}, but that file is missing")
    return entry.path


def fitting_hint(rules: games.Game | Rules | str, players: int) -> str:
    """One sentence for refusals: the shipped file that fits this game, or that none does."""
    entry = find(rules, players)
    if entry is None:
        return f"no shipped policy plays {policy_game(rules).variant_name} with {players} players (sorry-play --list)"
    return f"the shipped policy for {entry.variant} with {players} players is {entry.name} ({entry.path})"


def catalog_rows() -> list[dict]:
    """The catalog as rows for listings: name, rules, players, path, and whether the file is there."""
    return [
        {"name": e.name, "rules": e.variant, "players": e.players, "path": str(e.path), "present": e.path.is_file()}
        for e in CATALOG
    ]


def file_game(path, meta: dict) -> games.Game:
    """The game (with its rules) a policy file's metadata `meta` says it plays; ValueError if
    its game or rules are not ones this code knows."""
    kind = next(
        (
            cls.game_type
            for cls in games.registered_games().values()
            if cls.game_type.policy_format == meta.get("format")
        ),
        None,
    )
    if kind is None:
        raise ValueError(f"{path}: unknown policy format {excerpt(meta.get('format'))}")
    if kind.policy_records_rules:
        return games.game_class(kind.id).from_json(meta.get("rules"), path)
    if meta.get("game") != kind.id:
        raise ValueError(f"{path}: a {kind.long_name} policy file for game {excerpt(meta.get('game'))}")
    return games.load_game(kind.id)


def check_trained_for(path: str | os.PathLike, meta: dict, rules: games.Game | Rules | str, num_players: int) -> None:
    """ValueError unless the network of file `path` (metadata `meta`) was trained for this
    game (a Game, or the board game's rules) and player count; the message names what it was
    trained for and the shipped file that fits the game asked for (:func:`fitting_hint`)."""
    played, trained = policy_game(rules), file_game(path, meta)
    kind = trained.game_type
    if played.game_type.id != kind.id:
        raise ValueError(f"{path} is a {kind.long_name} policy; it cannot play {played.game_type.long_name}")
    if played != trained:
        ours, theirs = played.variant_to_json(), trained.variant_to_json()
        differs = sorted(k for k, v in ours.items() if theirs.get(k) != v)
        raise ValueError(
            f"network {path} was trained for {kind.variant_word} {trained.variant_name!r} with {meta['num_players']} "
            f"players, not {played.variant_name!r} ({kind.variant_word} differing: {', '.join(differs)}); "
            f"{fitting_hint(played, num_players)}"
        )
    if num_players != int(meta["num_players"]):
        raise ValueError(
            f"network {path} was trained for {meta['num_players']} players, not {num_players} "
            f"({kind.variant_word} {trained.variant_name!r}); {fitting_hint(played, num_players)}"
        )


class NetworkFiles:
    """For an agent that plays network files (a policy file, azsearch's ``net=`` and
    ``policy=``, a search's ``value=``): :meth:`check_game` refuses a game (rules, player count)
    that a file was not trained for, each game checked once."""

    _checked: tuple[Any, int] | None = None  # the last (rules, num_players) found compatible

    def network_files(self) -> list[tuple[str, dict]]:
        """(file, its metadata) of every network the agent plays."""
        raise NotImplementedError

    def check_turns(self, turns: list) -> Any:
        """The rules of `turns` (decided at once: all of one game and player count), once
        :meth:`check_game` accepts them; ValueError naming the first turn of other rules."""
        rules = turns[0].rules
        for k, turn in enumerate(turns):
            if turn.rules != rules:
                raise ValueError(f"{turns[0].game.variant_name}: every turn must be of the same rules, turn {k} is not")
        self.check_game(rules, turns[0].num_players)
        return rules

    def check_game(self, rules, num_players: int) -> None:
        """ValueError if a network was trained for other rules or another player count."""
        if (rules, num_players) != self._checked:
            for path, meta in self.network_files():
                check_trained_for(path, meta, rules, num_players)
            self._checked = (rules, num_players)
