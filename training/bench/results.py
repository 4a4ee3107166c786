"""sorry-bench result files: written by ``score`` and ``run``, read back by ``report``.

Files read back are data only: JSON parsed with :mod:`json`, CSV with :mod:`csv`, each
checked to be a regular file under :data:`MAX_FILE_BYTES` before it is opened
(:mod:`sorry_env.files`), and every field checked before use; nothing in them is imported,
unpickled or executed. A record's task id becomes part of a file name only after
:func:`check_name` (one plain name: no ``/``, ``..``, newline or ``$``), and every file the
report writes is checked to be directly in its output folder. Numbers of any size, nesting of
any depth and CSV fields of any length are one-line ValueErrors, never tracebacks.

A record (a result.json or a scores.json row) may carry ``reconstructed``: text saying it was
rebuilt from a published table after its run directory was lost, and which fields could not
be recovered (they are absent). The report marks such rows.
"""

from __future__ import annotations

import csv
import io
import json
import math
import pathlib
import re

from sorry_env import files
from sorry_env.checks import excerpt

MAX_FILE_BYTES = 2_000_000  # a result.json or curve.csv is a few kB; anything bigger is not one
MAX_NOTE_CHARS = 1_000  # a reconstructed record's note: a sentence or two
SCORE_FIELDS = ("task", "agent", "wins", "games", "win_rate", "ci_low", "ci_high", "normalized", "seed", "standard")
MAX_SEED = 2**63 - 1  # a run's seed and any count (numpy's and torch's integers fit in 64 bits)
# A task id or algorithm name as sorry-bench writes them ("2p-heuristic-v1", "maskable_ppo"):
# safe in a file name and in a plot's label.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
CURVE_FIELDS = ("steps", "wall_seconds", "wins", "games", "win_rate", "ci_low", "ci_high", "normalized")


def write_csv(path: pathlib.Path, rows: list[dict], fields) -> pathlib.Path:
    """`rows` as CSV file `path` with these columns (other keys left out); `path`."""
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(fields), extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return path


def write_scores(rows: list[dict], out: pathlib.Path) -> list[pathlib.Path]:
    out.mkdir(parents=True, exist_ok=True)
    json_path = out / "scores.json"
    json_path.write_text(json.dumps(rows, indent=1))
    return [json_path, write_csv(out / "scores.csv", rows, SCORE_FIELDS + ("seconds",))]


def check_name(value, where: str) -> str:
    """`value` if it is a plain name (:data:`NAME`: letters, digits, ``_``, ``.``, ``-``, not
    ``..``); ValueError quoting an excerpt otherwise."""
    if not isinstance(value, str) or not NAME.fullmatch(value) or ".." in value:
        raise ValueError(f"{where} must be a plain name (letters, digits, _ . -), got {excerpt(value)}")
    return value


def _number(value, where: str, low: float = -math.inf, high: float = math.inf, integer: bool = False):
    # An int is compared as an int (math.isfinite would overflow on 400 digits); a float must be
    # finite; a whole number (a count, a seed) fits in 64 bits.
    high = min(high, MAX_SEED) if integer else high
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        ok = False
    else:
        ok = (isinstance(value, int) or math.isfinite(value)) and low <= value <= high
        ok = ok and (not integer or value == int(value))
    if not ok:
        raise ValueError(f"{where}: {excerpt(value)} is not a {'whole ' if integer else ''}number in [{low}, {high}]")
    return int(value) if integer else float(value)


def _check_reconstructed(record: dict, where: str) -> None:
    note = record.get("reconstructed")
    if note is not None and (not isinstance(note, str) or not 0 < len(note) <= MAX_NOTE_CHARS):
        raise ValueError(f"{where}: 'reconstructed' must be text of 1 to {MAX_NOTE_CHARS} characters")


def _read_json(path: pathlib.Path):
    """The JSON value of a bounded regular file (ValueError naming the file otherwise)."""
    return files.read_json(path, MAX_FILE_BYTES, "sorry-bench result file")


def _check_score(score: dict, where: str) -> None:
    """The fields of one score (a result's final score, a scores.json row), checked."""
    games = _number(score.get("games"), f"{where}games", 1, integer=True)
    _number(score.get("wins"), f"{where}wins", 0, games, integer=True)
    for key in ("win_rate", "ci_low", "ci_high"):
        _number(score.get(key), f"{where}{key}", 0, 1)
    if score.get("normalized") is not None:
        _number(score["normalized"], f"{where}normalized")
    if score.get("command") is not None and not isinstance(score["command"], str):
        raise ValueError(f"{where}command must be text")


def read_result(path: pathlib.Path) -> dict:
    """A run's result.json, checked field by field (ValueError naming the file and field)."""
    data = _read_json(path)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a result is a JSON object")
    for key in ("task", "algorithm"):
        check_name(data.get(key), f"{path}: {key!r}")
    if not isinstance(data.get("cpu"), str):
        raise ValueError(f"{path}: 'cpu' must be text")
    for key, low in (("seed", 0), ("steps", 0), ("budget", 1)):  # whole numbers up to MAX_SEED
        _number(data.get(key), f"{path}: {key}", low, integer=True)
    _number(data.get("train_seconds"), f"{path}: train_seconds", 0)
    if data.get("train_cpu_seconds") is not None:
        _number(data["train_cpu_seconds"], f"{path}: train_cpu_seconds", 0)
    score = data.get("score")
    if not isinstance(score, dict):
        raise ValueError(f"{path}: 'score' must be an object")
    _check_score(score, f"{path}: score.")
    if not isinstance(score.get("standard"), bool):
        raise ValueError(f"{path}: score.standard must be true or false")
    if data.get("command") is not None and not isinstance(data["command"], str):
        raise ValueError(f"{path}: 'command' must be text")
    _check_reconstructed(data, str(path))
    return data


def read_curve(path: pathlib.Path) -> list[dict]:
    """A run's curve.csv as rows of numbers (ValueError naming the file, row and field)."""
    rows = []
    text = files.read_text(path, MAX_FILE_BYTES, "sorry-bench curve file")
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        if reader.fieldnames is None or not set(CURVE_FIELDS) <= set(reader.fieldnames):
            raise ValueError(f"{path}: needs the columns {', '.join(CURVE_FIELDS)}")
        for i, raw in enumerate(reader, start=2):
            row: dict[str, float | None] = {}
            for key in CURVE_FIELDS:
                text = raw[key]
                if key == "normalized" and text == "":
                    row[key] = None
                    continue
                try:
                    value = float(text)
                except (TypeError, ValueError):
                    raise ValueError(f"{path} line {i}: {key} {excerpt(text)} is not a number") from None
                low: float
                low, high = (0, 1) if key in ("win_rate", "ci_low", "ci_high") else (0, math.inf)
                if key == "normalized":
                    low = -math.inf
                row[key] = _number(value, f"{path} line {i}: {key}", low, high)
            rows.append(row)
    except csv.Error as error:  # a field over csv's limit (128 KB), a NUL byte, ...
        raise ValueError(f"{path} is not a curve file: {str(error)[:100]}") from None
    return rows


MAX_RESULT_FILES = 2000  # result files a report reads at most


def find_results(runs: pathlib.Path) -> list[tuple[dict, list[dict]]]:
    """(result, curve rows) of every run under runs/TASK/ALGORITHM/seed-S/; a damaged file is
    a ValueError naming it."""
    paths = sorted(runs.glob("*/*/seed-*/result.json"))
    if len(paths) > MAX_RESULT_FILES:
        raise ValueError(f"{runs} holds {len(paths)} result files; a report reads at most {MAX_RESULT_FILES}")
    found = []
    for path in paths:
        result = read_result(path)
        curve_path = path.with_name("curve.csv")
        found.append((result, read_curve(curve_path) if curve_path.exists() else []))
    return found


def read_scores(path: pathlib.Path) -> list[dict]:
    """The rows of one scores.json (sorry-bench score), checked."""
    data = _read_json(path)
    if not isinstance(data, list):
        raise ValueError(f"{path}: scores are a JSON list")
    for i, row in enumerate(data):
        where = f"{path} row {i}"
        if not isinstance(row, dict) or not isinstance(row.get("agent"), str):
            raise ValueError(f"{where}: needs text 'task' and 'agent'")
        check_name(row.get("task"), f"{where}: 'task'")
        _check_score(row, f"{where}: ")
        _check_reconstructed(row, where)
    return data


def find_scores(runs: pathlib.Path) -> list[dict]:
    """The rows of every runs/score/*/scores.json (sorry-bench score), checked."""
    rows = []
    for path in sorted((runs / "score").glob("*/scores.json"))[:MAX_RESULT_FILES]:
        rows += read_scores(path)
    return rows


def first_step_reaching(curve: list[dict], rate: float) -> int | None:
    """The first in-run evaluation's step whose win rate is at least `rate`, or None."""
    return next((int(row["steps"]) for row in curve if row["win_rate"] >= rate), None)


def _task_or_none(task_id: str):
    """The task `task_id` names (a name, or a name and version) if it is defined now, else None."""
    from .tasks import get_task

    try:
        return get_task(task_id)
    except ValueError:
        return None


def _normalized_now(task_id: str, win_rate: float) -> float | None:
    """The normalized score with the current anchors, if `task_id` is a current task's id."""
    from .tasks import normalized_score

    task = _task_or_none(task_id)
    return normalized_score(task, win_rate) if task and task.id == task_id else None


def format_rate(row: dict) -> str:
    """A score's win rate and its 95% interval, in percent."""
    return f"{100 * row['win_rate']:.1f}% [{100 * row['ci_low']:.1f}, {100 * row['ci_high']:.1f}]"


def _fmt_norm(value) -> str:
    return "-" if value is None else f"{value:.2f}"


RECONSTRUCTED_MARK = "†"


def _mark(record: dict) -> str:
    return RECONSTRUCTED_MARK if record.get("reconstructed") else ""


def _score_lines(scores: list[dict]) -> list[str]:
    lines = [
        "## Scripted references",
        "",
        "| task | agent | win rate [95% CI] | games | normalized | standard |",
        "|---|---|---|---|---|---|",
    ]
    for row in scores:
        if row.get("normalized") is None:  # scored before the task's anchors were measured
            row = {**row, "normalized": _normalized_now(row["task"], row["win_rate"])}
        lines.append(
            f"| {row['task']} | `{row['agent']}`{_mark(row)} | {format_rate(row)} | {row['games']} | "
            f"{_fmt_norm(row.get('normalized'))} | {'yes' if row.get('standard') else 'no'} |"
        )
    return lines + [""]


def _run_row(result: dict, curve: list[dict]) -> dict:
    """One results.csv row: the run's result with the first in-run step at the heuristic's rate."""
    from .tasks import anchor_rates

    score = result["score"]
    heuristic = anchor_rates(result["task"].rpartition("-v")[0]).get("heuristic")
    return {
        **{key: result[key] for key in ("task", "algorithm", "seed", "steps", "budget")},
        **{key: score.get(key) for key in ("wins", "games", "win_rate", "ci_low", "ci_high", "normalized", "standard")},
        "first_step_at_heuristic_rate": None if heuristic is None else first_step_reaching(curve, heuristic),
        "train_seconds": result["train_seconds"],
        "train_cpu_seconds": result.get("train_cpu_seconds"),
        "cpu": result["cpu"],
        "command": result.get("command") or "",
        "reconstructed": bool(result.get("reconstructed")),
    }


def _run_lines(run_rows: list[dict]) -> list[str]:
    lines = [
        "## Baselines from scratch",
        "",
        "| task | algorithm | seed | steps | final win rate [95% CI] | games | normalized | "
        "first in-run step at the heuristic's rate | training wall s | training CPU s | CPU |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in run_rows:
        reach = row["first_step_at_heuristic_rate"]
        reached = "not reached" if reach is None else f"{reach:,}"
        cpu_seconds = "-" if row["train_cpu_seconds"] is None else f"{row['train_cpu_seconds']:.0f}"
        seed = f"{row['seed']}{RECONSTRUCTED_MARK if row['reconstructed'] else ''}"
        lines.append(
            f"| {row['task']} | {row['algorithm']} | {seed} | {row['steps']:,} | {format_rate(row)} | "
            f"{row['games']}{'' if row['standard'] else ' (not standard)'} | {_fmt_norm(row['normalized'])} | "
            f"{reached} | {row['train_seconds']:.0f} | {cpu_seconds} | {row['cpu']} |"
        )
    lines.append("")
    return lines + ["Commands:", ""] + [f"- `{row['command']}`" for row in run_rows if row["command"]] + [""]


def _reconstructed_lines(records: list[dict]) -> list[str]:
    """A footnote with each distinct note of the reconstructed records, if any."""
    notes = list(dict.fromkeys(r["reconstructed"] for r in records if r.get("reconstructed")))
    if not notes:
        return []
    count = sum(1 for r in records if r.get("reconstructed"))
    return [f"{RECONSTRUCTED_MARK} Reconstructed record ({count} rows): " + " ".join(notes), ""]


def build_report(runs: pathlib.Path, out: pathlib.Path) -> list[pathlib.Path]:
    """results.md (tables), results.csv (one row per run), curves.csv and one learning-curve
    PNG per task, from the result files under `runs`."""

    found = find_results(runs)
    scores = find_scores(runs)
    if not found and not scores:
        raise ValueError(f"no sorry-bench results under {runs} (sorry-bench run and score write them)")
    out.mkdir(parents=True, exist_ok=True)
    written = []
    lines = ["# sorry-bench results", ""]
    if scores:
        lines += _score_lines(scores)
    if found:
        run_rows = [_run_row(result, curve) for result, curve in found]
        lines += _run_lines(run_rows)
        written.append(write_csv(out / "results.csv", run_rows, list(run_rows[0])))
        curve_rows = [
            {"task": r["task"], "algorithm": r["algorithm"], "seed": r["seed"], **point}
            for r, curve in found
            for point in curve
        ]
        if curve_rows:
            written.append(write_csv(out / "curves.csv", curve_rows, ["task", "algorithm", "seed", *CURVE_FIELDS]))
        for task_id in sorted({r["task"] for r, _ in found}):
            task = _task_or_none(task_id)  # None: a task of another version, plotted without anchors
            path = _inside(out, f"curve-{check_name(task_id, 'task')}.png")
            if _plot_task(task_id, task, [(r, c) for r, c in found if r["task"] == task_id and c], path):
                written.append(path)
    lines += _reconstructed_lines(scores + [result for result, _ in found])
    md_path = out / "results.md"
    md_path.write_text("\n".join(lines))
    written.insert(0, md_path)
    return written


def _inside(out: pathlib.Path, name: str) -> pathlib.Path:
    """out/name, refused unless it is a file directly in `out` (names from records were
    checked; this keeps any other path from leaving the folder)."""
    path = out / name
    if path.parent != out or path.name != name:
        raise ValueError(f"the report would write {excerpt(name)} outside {out}")
    return path


def _plot_task(task_id: str, task, runs: list[tuple[dict, list[dict]]], path: pathlib.Path) -> bool:
    """Win rate against the task's opponents over learner steps: each algorithm's mean over
    seeds (seeds evaluated at the same steps) with the range of its seeds as an error bar,
    and the task's anchors (training/curve.py draws it)."""
    from sorry_env.training.curve import plot_win_rates

    from .tasks import anchor_rates

    if not runs:
        return False
    series = {}
    for algorithm in sorted({r["algorithm"] for r, _ in runs}):
        curves = [c for r, c in runs if r["algorithm"] == algorithm]
        by_step: dict[int, list[float]] = {}
        for point in (p for c in curves for p in c):
            by_step.setdefault(int(point["steps"]), []).append(point["win_rate"])
        label = f"{algorithm} ({len(curves)} seed{'s' * (len(curves) > 1)})"
        series[label] = [
            (step, sum(rates) / len(rates), min(rates), max(rates)) for step, rates in sorted(by_step.items())
        ]
    anchors = anchor_rates(task.name) if task else {}
    lines = [(f"{name} ({100 * anchors[name]:.1f}%)", anchors[name], style) for name, style in ANCHOR_LINES if anchors]
    top = 1 if task is None or task.players == 2 or task.rules.endswith("teams") else 0.5
    title = f"{task_id}: in-run evaluations (mean, range over seeds)"
    plot_win_rates(series, path, title, None, "learner env steps", lines, top)
    return True


ANCHOR_LINES = (("heuristic", "--"), ("random", ":"))  # the anchors drawn on a task's curve, and their style
