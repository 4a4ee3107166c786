"""sorry-bench result files: written by ``score`` and ``run``, read back by ``report``.

Files read back are data only: JSON parsed with :mod:`json`, CSV with :mod:`csv`, each
checked to be a regular file under :data:`MAX_FILE_BYTES` before it is opened, and every
field checked before use; nothing in them is imported, unpickled or executed.
"""

from __future__ import annotations

import csv
import json
import math
import pathlib

MAX_FILE_BYTES = 2_000_000  # a result.json or curve.csv is a few kB; anything bigger is not one
SCORE_FIELDS = ("task", "agent", "wins", "games", "win_rate", "ci_low", "ci_high", "normalized", "seed", "standard")
CURVE_FIELDS = ("steps", "wall_seconds", "wins", "games", "win_rate", "ci_low", "ci_high", "normalized")


def write_csv(path: pathlib.Path, rows: list[dict], fields) -> None:
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(fields), extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)


def write_scores(rows: list[dict], out: pathlib.Path) -> list[pathlib.Path]:
    out.mkdir(parents=True, exist_ok=True)
    json_path, csv_path = out / "scores.json", out / "scores.csv"
    json_path.write_text(json.dumps(rows, indent=1))
    write_csv(csv_path, rows, SCORE_FIELDS + ("seconds",))
    return [json_path, csv_path]


def _bounded(path: pathlib.Path) -> pathlib.Path:
    if not path.is_file():
        raise ValueError(f"{path} is not a regular file")
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise ValueError(f"{path} is {size:,} bytes; a sorry-bench result file is under {MAX_FILE_BYTES:,}")
    return path


def _number(value, where: str, low: float = -math.inf, high: float = math.inf, integer: bool = False):
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or not low <= value <= high or (integer and value != int(value)):
        raise ValueError(f"{where}: {value!r} is not a {'whole ' if integer else ''}number in [{low}, {high}]")
    return int(value) if integer else float(value)


def read_result(path: pathlib.Path) -> dict:
    """A run's result.json, checked field by field (ValueError naming the file and field)."""
    try:
        data = json.loads(_bounded(path).read_text())
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path} is not JSON: {error}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a result is a JSON object")
    for key in ("task", "algorithm", "cpu"):
        if not isinstance(data.get(key), str):
            raise ValueError(f"{path}: {key!r} must be text")
    _number(data.get("seed"), f"{path}: seed", 0, integer=True)
    _number(data.get("steps"), f"{path}: steps", 0, integer=True)
    _number(data.get("budget"), f"{path}: budget", 1, integer=True)
    _number(data.get("train_seconds"), f"{path}: train_seconds", 0)
    score = data.get("score")
    if not isinstance(score, dict):
        raise ValueError(f"{path}: 'score' must be an object")
    games = _number(score.get("games"), f"{path}: score.games", 1, integer=True)
    _number(score.get("wins"), f"{path}: score.wins", 0, games, integer=True)
    for key in ("win_rate", "ci_low", "ci_high"):
        _number(score.get(key), f"{path}: score.{key}", 0, 1)
    if score.get("normalized") is not None:
        _number(score["normalized"], f"{path}: score.normalized")
    if not isinstance(score.get("standard"), bool):
        raise ValueError(f"{path}: score.standard must be true or false")
    return data


def read_curve(path: pathlib.Path) -> list[dict]:
    """A run's curve.csv as rows of numbers (ValueError naming the file, row and field)."""
    rows = []
    try:
        with open(_bounded(path), newline="") as f:
            reader = csv.DictReader(f)
            if reader.fieldnames is None or not set(CURVE_FIELDS) <= set(reader.fieldnames):
                raise ValueError(f"{path}: needs the columns {', '.join(CURVE_FIELDS)}")
            for i, raw in enumerate(reader, start=2):
                row = {}
                for key in CURVE_FIELDS:
                    text = raw[key]
                    if key == "normalized" and text == "":
                        row[key] = None
                        continue
                    try:
                        value = float(text)
                    except (TypeError, ValueError):
                        raise ValueError(f"{path} line {i}: {key} {text!r} is not a number") from None
                    low, high = (0, 1) if key in ("win_rate", "ci_low", "ci_high") else (0, math.inf)
                    if key == "normalized":
                        low = -math.inf
                    row[key] = _number(value, f"{path} line {i}: {key}", low, high)
                rows.append(row)
    except UnicodeDecodeError as error:
        raise ValueError(f"{path} is not text: {error}") from None
    return rows
