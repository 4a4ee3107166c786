"""Recorded games: write a game down as JSON, replay it exactly, print its moves, make a GIF.

Command line (``sorry-replay`` or ``python -m sorry_env.replay``)::

    sorry-eval heuristic random --games 100 --record 3 runs/replays   # saves games 0, 1, 2
    sorry-replay runs/replays/game-0000.json                          # the move list
    sorry-replay runs/replays/game-0000.json --gif game0.gif --fps 4  # and an animation

A replay file (``"format": "sorry-replay/1"``) holds everything needed to play the game again
and everything seen on the way::

    {
      "format": "sorry-replay/1",
      "rules": {...},             # the complete Rules (sorry_env.board.rules.Rules fields)
      "seats": [0, 2],            # seats in play
      "seed": 123456789,          # the engine seed of sorry_env.board.game.new_state
      "first_seat": 2,            # who moved first (sorry-eval rotates it; null: the seed's choice)
      "max_turns": 2000,
      "players": [{"agent": "heuristic", "seat": 2}, ...],    # the lineup, in lineup order
      "source": {"tool": "sorry-eval", "tournament_seed": 0, "game": 0},
      "initial_state": {...},     # state dict (sorry_env.board.state_io) before the first move
      "moves": [{"turn": 0, "seat": 2, "card": "5", "action": 14,
                 "description": "Yellow plays 5: Y1 moves 5 forward from square 34 to square 39.",
                 "state": {...}}, ...],                # the state dict after each move
      "result": {"winner": 0, "turns": 97, "truncated": false, "scores": null}
    }

A game of another registered game (:mod:`sorry_env.games`; ``sorry-eval --game ID --record``)
is written the same way with one more key, ``"game": ID``, and its rules, states and move
texts in that game's own forms (its ``variant_to_json``, ``state_to_dict`` and
``describe_action``); its moves have no ``"card"`` and its result no scores. A file without
``"game"`` is the board game's (every file written before other games could be recorded).

Replaying starts a new game from ``seed`` (and ``first_seat``), checks it against
``initial_state``, then plays every recorded action through the engine, checking each is
legal and that the state after it equals the recorded one; a file whose states, actions or
result do not match is refused with the first difference named. So a replay is the game
itself, re-run, never just the file's pictures. Move descriptions come from
:mod:`sorry_env.board.narrate` (pawn labels stable through the game). Needs no torch.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import pathlib
import sys
from typing import Any

import numpy as np

from . import files, games
from .checks import excerpt, is_integer, printable

FORMAT = "sorry-replay/1"
_KEYS = {
    "format",
    "rules",
    "seats",
    "seed",
    "first_seat",
    "max_turns",
    "players",
    "source",
    "initial_state",
    "moves",
    "result",
}


# A replay file's caps, checked before it is read or re-played: a 2,000-turn game (the
# default truncation) makes about 2,500 moves and 1 MB; the caps leave room for longer
# truncations while keeping a hostile file's cost (reading, replaying, drawing) bounded.
MAX_REPLAY_BYTES = 32 * 1024 * 1024
MAX_REPLAY_MOVES = 20_000
MAX_AGENT_NAME = 200  # characters of a lineup entry's agent name
MAX_GIF_SIZE = 2048  # GIF width and height in pixels: each frame is drawn at this size


class ReplayError(ValueError):
    """A replay file that cannot be read or does not reproduce its game."""


@dataclasses.dataclass
class Replay:
    """A game re-played: ``states[k]`` is the position before move k (``states[-1]`` the end),
    ``labels[k]`` what a picture of it names the pieces by (the board game's pawn labels; None
    for games without, :meth:`sorry_env.games.PlayView.picture_labels`), ``descriptions[k]`` move k
    in words. `game` is the registered game played."""

    game: games.Game
    states: list
    labels: list
    actions: list
    descriptions: list
    record: dict

    @property
    def rules(self) -> Any:
        """The variant played (the board game's :class:`Rules`)."""
        return self.game.variant

    @property
    def game_type(self) -> games.GameType:
        return self.game.game_type


def _original_format_game() -> type[games.Game]:
    """The game of files without "game": the one whose files keep the first format
    (``GameType.original_replay_format``, the board game's, written before other games could be recorded)."""
    return next(cls for cls in games.registered_games().values() if cls.game_type.original_replay_format)


def _result(played: games.Game, state: np.ndarray) -> dict:
    winner = played.winner(state)
    points = played.final_scores(state)
    return {
        "winner": winner,
        "turns": played.turn(state),
        "truncated": winner is None,
        "scores": {str(s): p for s, p in points.items()} if points is not None else None,
    }


def record_game(
    rules,
    seats,
    seed: int,
    actions,
    first_seat: int | None = None,
    max_turns: int | None = None,
    players: list | None = None,
    source: dict | None = None,
) -> dict:
    """The replay record of the game `rules` (a :class:`sorry_env.games.Game`, or the board
    game's :class:`Rules` or preset name) started by ``Game.new_state_in_seats(seats, seed,
    first_seat)`` and played with `actions` (chance from the state's own generator,
    ``Game.apply``), written in its own forms (module docstring)."""
    played = rules if isinstance(rules, games.Game) else _original_format_game()(rules)
    state = played.new_state_in_seats(tuple(seats), seed=seed, first=first_seat)
    view = played.play_view(state, None)
    initial = played.state_to_dict(state)
    moves = []
    for action in actions:
        before, state = state, played.apply(state, int(action))
        moves.append(
            {
                "turn": played.turn(before),
                "seat": played.to_move(before),
                **played.recorded_move_facts(before),
                "action": int(action),
                "description": view.recorded(before, int(action), state),
                "state": played.state_to_dict(state),
            }
        )
    original = played.game_type.original_replay_format
    return {
        "format": FORMAT,
        **({} if original else {"game": played.game_type.id}),
        "rules": played.variant_to_json(),
        "seats": list(seats),
        "seed": int(seed),
        "first_seat": first_seat,
        "max_turns": max_turns,
        "players": players or [],
        "source": source or {},
        "initial_state": initial,
        "moves": moves,
        "result": _result(played, state),
    }


def _int(value, what) -> int:
    if not is_integer(value):
        raise ReplayError(f"{what} must be an integer, got {value!r}")
    return value


def _check_state(played: games.Game, state: np.ndarray, want, what: str) -> None:
    """ReplayError saying `what` and naming the first difference unless the dict of the
    replayed `state` is `want`, the recorded one."""
    got = played.state_to_dict(state)
    if got == want:
        return
    if not isinstance(want, dict):
        raise ReplayError(f"{what}: recorded a {type(want).__name__}, not a state dict")
    key = next(key for key in sorted(set(got) | set(want)) if got.get(key) != want.get(key))
    raise ReplayError(f"{what}: {key!r}: replayed {got.get(key)!r}, recorded {want.get(key)!r}")


def _check_players(players, seats) -> None:
    """The lineup: a list of ``{"agent": name, "seat": seat in play}``, one entry per seat at most."""
    if not isinstance(players, list) or len(players) > len(seats):
        raise ReplayError(f"'players' must be a list of at most {len(seats)} lineup entries, got {excerpt(players)}")
    taken = set()
    for entry in players:
        if (
            not isinstance(entry, dict)
            or not isinstance(entry.get("agent"), str)
            or len(entry["agent"]) > MAX_AGENT_NAME
            or type(entry.get("seat")) is not int
            or entry.get("seat") not in seats
            or entry["seat"] in taken
        ):
            raise ReplayError(
                f"'players': each entry must be {{'agent': a name of at most {MAX_AGENT_NAME} characters, "
                f"'seat': a distinct seat of {list(seats)}}}, got {excerpt(entry)}"
            )
        taken.add(entry["seat"])


def _moves_of(record: dict, seats) -> list:
    """The record's move list, within MAX_REPLAY_MOVES, once its lineup is checked."""
    moves = record["moves"]
    if not isinstance(moves, list):
        raise ReplayError("'moves' must be a list")
    if len(moves) > MAX_REPLAY_MOVES:
        raise ReplayError(f"{len(moves):,} moves, more than the {MAX_REPLAY_MOVES:,} a replay may hold")
    _check_players(record["players"], seats)
    return moves


def game_of_record(record) -> games.Game:
    """The registered game a record was played in, from its ``"game"`` key (none: the board
    game's) and rules through that game's rules codec (``Game.from_json``). ReplayError for a
    record that is not a replay file, an unknown game id or rules that game does not have."""
    _check_format(record)
    if "game" not in record:
        game_class = _original_format_game()
    else:
        try:
            game_class = games.game_class(record["game"])
        except ValueError:
            known = ", ".join(sorted(games.registered_games()))
            raise ReplayError(f"'game' is {excerpt(record['game'])}, not a registered game ({known})") from None
    try:
        return game_class.from_json(record["rules"], "replay")
    except ValueError as error:
        raise ReplayError(str(error)) from None


def replay(record: dict) -> Replay:
    """Re-play a record through its game's engine, checking every action and state (ReplayError
    on the first mismatch)."""
    played = game_of_record(record)
    state = _start(record, played)
    moves = _moves_of(record, played.seats(state))
    view = played.play_view(state, None)
    out = Replay(played, [state], [view.picture_labels()], [], [], record)
    for k, entry in enumerate(moves):
        if not isinstance(entry, dict) or "action" not in entry or "state" not in entry:
            raise ReplayError(f"move {k}: must be an object with 'action' and 'state'")
        if played.winner(state) is not None:
            raise ReplayError(f"move {k}: the game was already over")
        action = _int(entry["action"], f"move {k}: 'action'")
        try:
            played.check_action(state, action)
        except ValueError as error:
            raise ReplayError(f"move {k}: {error}") from None
        before, state = state, played.apply(state, action)
        description = view.recorded(before, action, state)
        _check_state(
            played,
            state,
            entry["state"],
            f"move {k} (action {action}): the state after it differs from the recorded one",
        )
        out.actions.append(action)
        out.descriptions.append(description)
        out.states.append(state)
        out.labels.append(view.picture_labels())
    result = _result(played, state)
    if record["result"] != result:
        raise ReplayError(f"the recorded result {record['result']!r} differs from the replayed one {result!r}")
    return out


def _check_format(record) -> None:
    if not isinstance(record, dict):
        raise ReplayError(f"a replay file holds one JSON object, got {type(record).__name__}")
    if record.get("format") != FORMAT:
        raise ReplayError(f"not a replay file: 'format' is {excerpt(record.get('format'))}, expected {FORMAT!r}")
    missing = _KEYS - set(record)
    if missing:
        raise ReplayError(f"missing keys {sorted(missing)}")


def _start(record: dict, played: games.Game) -> np.ndarray:
    """The starting state of a record: its seed, seats and first seat, checked against its
    initial state."""
    seed = _int(record["seed"], "'seed'")
    seats, first = record["seats"], record["first_seat"]
    if not isinstance(seats, list) or not all(map(is_integer, seats)):
        raise ReplayError(f"'seats' must be a list of seats, got {excerpt(seats)}")
    try:
        state = played.new_state_in_seats(
            tuple(seats), seed=seed, first=None if first is None else _int(first, "'first_seat'")
        )
    except ReplayError:
        raise
    except ValueError as error:
        raise ReplayError(f"{played.game_type.long_name}: {error}") from None
    _check_state(played, state, record["initial_state"], "the initial state differs from the game the seed starts")
    return state


def load(path) -> dict:
    """The JSON object of a replay file (ReplayError if it is not a regular file of at most
    MAX_REPLAY_BYTES, cannot be read or is not JSON; the message never quotes the file)."""
    try:
        return files.read_json(path, MAX_REPLAY_BYTES, "replay file")
    except ValueError as error:
        raise ReplayError(str(error)) from None


def save(record: dict, path) -> pathlib.Path:
    path = pathlib.Path(path)
    path.write_text(json.dumps(record, separators=(",", ":")) + "\n", encoding="utf-8")
    return path


def move_list(rep: Replay) -> list:
    """Lines of the move list: who played what, the consequences, and the result."""
    record, played = rep.record, rep.game
    kind = played.game_type
    original = kind.original_replay_format  # the board game's lines stay as they were before other games
    # The board game names seats by colour; other games by their seat names, as their move texts do.
    colours = kind.seat_colours if original else kind.seat_names
    lines = []
    names: dict = {p.get("seat"): p.get("agent") for p in record.get("players", []) if isinstance(p, dict)}
    if names:
        # The names come from the file: printable() keeps terminal escape codes in them inert.
        lines.append("players: " + ", ".join(f"{colours[s]} = {printable(names[s])}" for s in sorted(names)))
    if not original:
        lines.append(f"game: {kind.long_name}")
    lines.append(f"rules {played.variant_name}, seats {list(record['seats'])}, seed {record['seed']}")
    for k, text in enumerate(rep.descriptions):
        # The board game's narration names the mover; other games' move texts do not.
        who = "" if original else f"{colours[played.to_move(rep.states[k])]}: "
        lines.append(f"{k + 1:4d}. {who}{text}")
    end = rep.states[-1]
    winner, turns = played.winner(end), played.turn(end)
    unit = "turns" if original else kind.turn_unit
    who = "no winner" if winner is None else f"{colours[winner]} wins"
    lines.append(f"{who} after {turns} {unit}")
    return lines


def write_gif(rep: Replay, path, fps: float = 2.0, size: int = 640) -> int:
    """An animated GIF of the game: the start, then the board after every move with the move
    as caption (the last frame held 3 s). Returns the number of frames.

    Frames are drawn, encoded and written one at a time, so memory does not grow with the
    game's length (a frame at the default size is about 1.2 MB before encoding)."""
    if not rep.game_type.can_draw:
        raise ReplayError(f"a GIF draws the board game's board; {rep.game_type.long_name} has none")
    from PIL import GifImagePlugin, Image  # Pillow only when pictures are asked for

    from .board.draw import draw_board

    def frame(k: int):
        caption = "start of the game" if k == 0 else f"{k}. {rep.descriptions[k - 1]}"
        return draw_board(rep.states[k], rep.rules, rep.labels[k], caption, size)

    count = len(rep.descriptions) + 1
    # One palette for the whole game, from its first and last pictures (every colour the
    # board uses is in them): quantizing to a shared palette is ~10x faster than letting the
    # GIF writer pick one per frame, and the picture is flat colour, so nothing is lost.
    sample = Image.new("RGB", (size * 2, size))
    sample.paste(frame(0), (0, 0))
    sample.paste(frame(count - 1), (size, 0))
    palette = sample.quantize(colors=128, method=Image.Quantize.MEDIANCUT)
    step_ms = max(20, round(1000 / fps))
    with open(path, "wb") as out:
        for k in range(count):
            image = frame(k).quantize(palette=palette, dither=Image.Dither.NONE)
            if k == 0:  # the file's header: size, the shared palette, loop forever
                header, _ = GifImagePlugin.getheader(image, info={"loop": 0, "optimize": False})
                out.writelines(header)
            duration = step_ms if k < count - 1 else max(step_ms, 3000)
            out.writelines(GifImagePlugin.getdata(image, duration=duration))
        out.write(b";")  # the GIF trailer
    return count


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="sorry-replay",
        description="Re-play a recorded game of any registered game (from sorry-eval [--game ID] --record): "
        "check it against the game's engine, print its moves, optionally (the board game) write a GIF.",
    )
    parser.add_argument("file", help="a replay file (JSON)")
    parser.add_argument("--gif", metavar="OUT.gif", help="write the game as an animated GIF")
    parser.add_argument("--fps", type=float, default=2.0, help="GIF frames (moves) per second (default 2)")
    parser.add_argument("--size", type=int, default=640, help="GIF width and height in pixels (default 640)")
    args = parser.parse_args(argv)
    if not 0.1 <= args.fps <= 50:
        parser.error(f"--fps must be between 0.1 and 50, got {args.fps}")
    if not 160 <= args.size <= MAX_GIF_SIZE:
        parser.error(f"--size must be between 160 and {MAX_GIF_SIZE}, got {args.size}")
    if args.gif is not None:
        out = pathlib.Path(args.gif)
        if out.suffix.lower() != ".gif":
            parser.error(f"--gif {args.gif}: the file name must end in .gif")
        if not out.parent.is_dir():
            parser.error(f"--gif {args.gif}: directory {out.parent} does not exist")
    try:
        record = load(args.file)
    except ReplayError as error:  # the message names the file
        print(f"sorry-replay: {error}", file=sys.stderr)
        return 1
    try:
        rep = replay(record)
    except ReplayError as error:
        print(f"sorry-replay: {args.file}: {error}", file=sys.stderr)
        return 1
    if args.gif is not None and not rep.game_type.can_draw:
        print(f"sorry-replay: --gif draws the board game; {rep.game_type.long_name} has no board", file=sys.stderr)
        return 1
    try:
        print("\n".join(move_list(rep)), flush=True)
    except BrokenPipeError:  # `sorry-replay FILE | head`: the reader has all it wanted
        # Point stdout at nothing so the interpreter's final flush does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    if args.gif is not None:
        try:
            n = write_gif(rep, args.gif, args.fps, args.size)
        except OSError as error:
            print(f"sorry-replay: cannot write {args.gif}: {error}", file=sys.stderr)
            return 1
        print(f"wrote {args.gif} ({n} frames)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
