"""Recorded games: write a game down as JSON, replay it exactly, print its moves, make a GIF.

Command line (``sorry-replay`` or ``python -m sorry_env.replay``)::

    sorry-eval heuristic random --games 100 --record 3 runs/replays   # saves games 0, 1, 2
    sorry-replay runs/replays/game-0000.json                          # the move list
    sorry-replay runs/replays/game-0000.json --gif game0.gif --fps 4  # and an animation

A replay file (``"format": "sorry-replay/1"``) holds everything needed to play the game again
and everything seen on the way::

    {
      "format": "sorry-replay/1",
      "rules": {...},             # the complete Rules (sorry_env.rules.Rules fields)
      "seats": [0, 2],            # seats in play
      "seed": 123456789,          # the engine seed of sorry_env.game.new_state
      "first_seat": 2,            # who moved first (sorry-eval rotates it; null: the seed's choice)
      "max_turns": 2000,
      "players": [{"agent": "heuristic", "seat": 2}, ...],    # the lineup, in lineup order
      "source": {"tool": "sorry-eval", "tournament_seed": 0, "game": 0},
      "initial_state": {...},     # state dict (sorry_env.state_io) before the first move
      "moves": [{"turn": 0, "seat": 2, "card": "5", "action": 14,
                 "description": "Yellow plays 5: Y1 moves 5 forward from square 34 to square 39.",
                 "state": {...}}, ...],                # the state dict after each move
      "result": {"winner": 0, "turns": 97, "truncated": false, "scores": null}
    }

Replaying starts a new game from ``seed`` (and ``first_seat``), checks it against
``initial_state``, then plays every recorded action through the engine, checking each is
legal and that the state after it equals the recorded one; a file whose states, actions or
result do not match is refused with the first difference named. So a replay is the game
itself, re-run, never just the file's pictures. Move descriptions come from
:mod:`sorry_env.narrate` (pawn labels stable through the game). Needs no torch.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import pathlib
import sys

from . import engine as E
from . import game
from .narrate import PawnLabels, narrate
from .render import COLOUR_NAMES
from .rules import Rules, get_rules, rules_from_json, rules_to_json
from .scoring import scores
from .state_io import state_to_dict

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


class ReplayError(ValueError):
    """A replay file that cannot be read or does not reproduce its game."""


@dataclasses.dataclass
class Replay:
    """A game re-played: ``states[k]`` is the position before move k (``states[-1]`` the end),
    ``labels[k]`` the pawn labels in it, ``descriptions[k]`` move k in words."""

    rules: Rules
    states: list
    labels: list
    actions: list
    descriptions: list
    record: dict


def _start(rules, seats, seed, first_seat):
    state = game.new_state(rules, seats=seats, seed=seed)
    if first_seat is not None:
        state[E.TO_MOVE] = first_seat  # as sorry-eval does: the first card does not depend on it
    return state


def _result(state, rules) -> dict:
    winner = game.winner(state)
    points = scores(state, rules) if winner is not None and rules.scoring != "none" else None
    return {
        "winner": winner,
        "turns": int(state[E.TURN]),
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
    """The replay record of the game started by ``new_state(rules, seats=seats, seed=seed)``
    (``first_seat`` moving first) and played with `actions`."""
    rules = get_rules(rules)
    state = _start(rules, tuple(seats), seed, first_seat)
    labels = PawnLabels(state, rules)
    initial = state_to_dict(state, rules)
    moves = []
    for action in actions:
        before = state
        state = game.step(before, rules, int(action))
        move = labels.advance(before, int(action), state)
        moves.append(
            {
                "turn": int(before[E.TURN]),
                "seat": game.to_move(before),
                "card": game.card(before),
                "action": int(action),
                "description": narrate(before, rules, int(action), move, labels.previous),
                "state": state_to_dict(state, rules),
            }
        )
    return {
        "format": FORMAT,
        "rules": rules_to_json(rules),
        "seats": list(seats),
        "seed": int(seed),
        "first_seat": first_seat,
        "max_turns": max_turns,
        "players": players or [],
        "source": source or {},
        "initial_state": initial,
        "moves": moves,
        "result": _result(state, rules),
    }


def _rules_from(data) -> Rules:
    try:
        return rules_from_json(data, "replay")
    except ValueError as error:
        raise ReplayError(str(error)) from None


def _int(value, what) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ReplayError(f"{what} must be an integer, got {value!r}")
    return value


def _first_difference(got: dict, want) -> str:
    if not isinstance(want, dict):
        return f"recorded a {type(want).__name__}, not a state dict"
    for key in sorted(set(got) | set(want)):
        if got.get(key) != want.get(key):
            return f"{key!r}: replayed {got.get(key)!r}, recorded {want.get(key)!r}"
    return "no difference"


def replay(record: dict) -> Replay:
    """Re-play a record through the engine, checking every action and state (ReplayError on
    the first mismatch)."""
    if not isinstance(record, dict):
        raise ReplayError(f"a replay file holds one JSON object, got {type(record).__name__}")
    if record.get("format") != FORMAT:
        raise ReplayError(f"not a replay file: 'format' is {record.get('format')!r}, expected {FORMAT!r}")
    missing = _KEYS - set(record)
    if missing:
        raise ReplayError(f"missing keys {sorted(missing)}")
    rules = _rules_from(record["rules"])
    seed = _int(record["seed"], "'seed'")
    seats = record["seats"]
    if not isinstance(seats, list):
        raise ReplayError(f"'seats' must be a list of seats, got {seats!r}")
    first = record["first_seat"]
    try:
        seats = game.seats_for(seats=[_int(s, "a seat") for s in seats], rules=rules)
        if first is not None and _int(first, "'first_seat'") not in seats:
            raise ReplayError(f"'first_seat' {first!r} is not one of the seats {list(seats)}")
        state = _start(rules, seats, seed, first)
    except ReplayError:
        raise
    except ValueError as error:
        raise ReplayError(str(error)) from None
    got = state_to_dict(state, rules)
    if got != record["initial_state"]:
        raise ReplayError(
            "the initial state differs from the game the seed starts: "
            + _first_difference(got, record["initial_state"])
        )
    moves = record["moves"]
    if not isinstance(moves, list):
        raise ReplayError("'moves' must be a list")
    labels = PawnLabels(state, rules)
    out = Replay(rules, [state], [labels.copy()], [], [], record)
    for k, entry in enumerate(moves):
        if not isinstance(entry, dict) or "action" not in entry or "state" not in entry:
            raise ReplayError(f"move {k}: must be an object with 'action' and 'state'")
        if game.winner(state) is not None:
            raise ReplayError(f"move {k}: the game was already over")
        action = _int(entry["action"], f"move {k}: 'action'")
        try:
            game.check_action(state, rules, action)
        except ValueError as error:
            raise ReplayError(f"move {k}: {error}") from None
        before, state = state, game.step(state, rules, action)
        move = labels.advance(before, action, state)
        got = state_to_dict(state, rules)
        if got != entry["state"]:
            raise ReplayError(
                f"move {k} (action {action}): the state after it differs from the recorded one: "
                + _first_difference(got, entry["state"])
            )
        out.actions.append(action)
        out.descriptions.append(narrate(before, rules, action, move, labels.previous))
        out.states.append(state)
        out.labels.append(labels.copy())
    result = _result(state, rules)
    if record["result"] != result:
        raise ReplayError(f"the recorded result {record['result']!r} differs from the replayed one {result!r}")
    return out


def load(path) -> dict:
    """The JSON object of a replay file (ReplayError if unreadable or not JSON)."""
    try:
        text = pathlib.Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ReplayError(f"cannot read {path}: {error}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ReplayError(f"{path} is not JSON: {error}") from None


def save(record: dict, path) -> pathlib.Path:
    path = pathlib.Path(path)
    path.write_text(json.dumps(record, separators=(",", ":")) + "\n", encoding="utf-8")
    return path


def move_list(rep: Replay) -> list:
    """Lines of the move list: who played what, the consequences, and the result."""
    record = rep.record
    lines = []
    names: dict = {p.get("seat"): p.get("agent") for p in record.get("players", []) if isinstance(p, dict)}
    if names:
        lines.append("players: " + ", ".join(f"{COLOUR_NAMES[s]} = {names[s]}" for s in sorted(names)))
    lines.append(f"rules {rep.rules.name}, seats {list(record['seats'])}, seed {record['seed']}")
    for k, text in enumerate(rep.descriptions):
        lines.append(f"{k + 1:4d}. {text}")
    end = rep.states[-1]
    winner = game.winner(end)
    if winner is None:
        lines.append(f"no winner after {int(end[E.TURN])} turns")
    else:
        lines.append(f"{COLOUR_NAMES[winner]} wins after {int(end[E.TURN])} turns")
    return lines


def write_gif(rep: Replay, path, fps: float = 2.0, size: int = 640) -> int:
    """An animated GIF of the game: the start, then the board after every move with the move
    as caption (the last frame held 3 s). Returns the number of frames."""
    from PIL import Image  # Pillow only when pictures are asked for

    from .draw import draw_board

    frames = [draw_board(rep.states[0], rep.rules, rep.labels[0], "start of the game", size)]
    for k, text in enumerate(rep.descriptions):
        frames.append(draw_board(rep.states[k + 1], rep.rules, rep.labels[k + 1], f"{k + 1}. {text}", size))
    # One palette for the whole game, from its first and last pictures (every colour the
    # board uses is in them): quantizing to a shared palette is ~10x faster than letting the
    # GIF writer pick one per frame, and the picture is flat colour, so nothing is lost.
    sample = Image.new("RGB", (size * 2, size))
    sample.paste(frames[0], (0, 0))
    sample.paste(frames[-1], (size, 0))
    palette = sample.quantize(colors=128, method=Image.Quantize.MEDIANCUT)
    frames = [frame.quantize(palette=palette, dither=Image.Dither.NONE) for frame in frames]
    step_ms = max(20, round(1000 / fps))
    durations = [step_ms] * (len(frames) - 1) + [max(step_ms, 3000)]
    frames[0].save(path, save_all=True, append_images=frames[1:], duration=durations, loop=0)
    return len(frames)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="sorry-replay",
        description="Re-play a recorded Sorry! game (from sorry-eval --record): check it "
        "against the engine, print its moves, optionally write a GIF.",
    )
    parser.add_argument("file", help="a replay file (JSON)")
    parser.add_argument("--gif", metavar="OUT.gif", help="write the game as an animated GIF")
    parser.add_argument("--fps", type=float, default=2.0, help="GIF frames (moves) per second (default 2)")
    parser.add_argument("--size", type=int, default=640, help="GIF width and height in pixels (default 640)")
    args = parser.parse_args(argv)
    if not 0.1 <= args.fps <= 50:
        parser.error(f"--fps must be between 0.1 and 50, got {args.fps}")
    if args.size < 160:
        parser.error(f"--size must be at least 160, got {args.size}")
    if args.gif is not None:
        out = pathlib.Path(args.gif)
        if out.suffix.lower() != ".gif":
            parser.error(f"--gif {args.gif}: the file name must end in .gif")
        if not out.parent.is_dir():
            parser.error(f"--gif {args.gif}: directory {out.parent} does not exist")
    try:
        rep = replay(load(args.file))
    except ReplayError as error:
        print(f"sorry-replay: {args.file}: {error}", file=sys.stderr)
        return 1
    print("\n".join(move_list(rep)))
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
