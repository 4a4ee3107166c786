"""Rebuild sorry-bench record files from a published report, once its run directories are lost.

The baselines published in docs/baselines/ (results.csv, curves.csv, results.md) were made by
``sorry-bench report`` from run directories that no longer exist. This writes, for every run in
results.csv, the record ``sorry-bench report --runs-dir`` reads (TASK/ALGORITHM/seed-S/result.json
and curve.csv) and, for the agents named with ``--agent``, the scripted references of results.md
(score/AGENT-published/scores.json). Every value is copied from the published files, never
guessed: a field they do not hold (the algorithm's settings, evaluation and scoring times, the
final score's seed) stays absent, and each record says so in its ``reconstructed`` field. A
reference's wins come from its rounded percentage only when exactly one count of its games
rounds to it, and its interval, recomputed from that count, must round to the published one.

    mkdir -p /tmp/published && for f in results.csv curves.csv results.md; do
        git show eea8e42:docs/baselines/$f > /tmp/published/$f; done
    python experiments/bench_reconstruct_records.py --published /tmp/published \\
        --out results/baselines/common-budget --source "docs/baselines at commit eea8e42" [--agent expectimax ...]

A record already under --out is kept: a run whose directory exists is skipped, and so is a
reference whose task and agent a measured record (any other score/ folder) already holds. Only
an agent's own rebuilt folder (score/AGENT-published) is rewritten.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import pathlib
import re
import shutil
import sys

from sorry_env import files
from sorry_env.agents.arena.stats import wilson_interval
from sorry_env.training.bench import results

INTEGER_FIELDS = ("seed", "steps", "budget")
NUMBER_FIELDS = ("train_seconds", "train_cpu_seconds")
SCORE_INTEGER_FIELDS = ("wins", "games")
SCORE_NUMBER_FIELDS = ("win_rate", "ci_low", "ci_high", "normalized")
REFERENCE_ROW = re.compile(
    r"^\| (?P<task>[\w.-]+) \| `(?P<agent>[^`]+)` \| (?P<rate>[\d.]+)% \[(?P<low>[\d.]+), (?P<high>[\d.]+)\] "
    r"\| (?P<games>\d+) \| [-\d.]+ \| (?P<standard>yes|no) \|$"
)


def read_csv_rows(path: pathlib.Path) -> list[dict]:
    text = files.read_text(path, results.MAX_FILE_BYTES, "published table")
    return list(csv.DictReader(io.StringIO(text, newline="")))


def result_record(row: dict, note: str) -> dict:
    """A result.json from one results.csv row; empty fields stay absent."""
    record: dict = {key: row[key] for key in ("task", "algorithm", "cpu", "command")}
    for key in INTEGER_FIELDS:
        record[key] = int(row[key])
    for key in NUMBER_FIELDS:
        if row[key] != "":
            record[key] = float(row[key])
    score: dict = {"task": row["task"], "agent": row["algorithm"]}
    for key in SCORE_INTEGER_FIELDS:
        score[key] = int(row[key])
    for key in SCORE_NUMBER_FIELDS:
        if row[key] != "":
            score[key] = float(row[key])
    if row["standard"] not in ("True", "False"):
        raise ValueError(f"standard {row['standard']!r} is not True or False")
    score["standard"] = row["standard"] == "True"
    record["score"] = score
    record["reconstructed"] = note
    return record


def write_runs(published: pathlib.Path, out: pathlib.Path, note: str) -> int:
    curves: dict[tuple[str, str, str], list[dict]] = {}
    for point in read_csv_rows(published / "curves.csv"):
        curves.setdefault((point["task"], point["algorithm"], point["seed"]), []).append(point)
    written = 0
    for row in read_csv_rows(published / "results.csv"):
        run_dir = out / row["task"].rpartition("-v")[0] / row["algorithm"] / f"seed-{int(row['seed'])}"
        if run_dir.exists():
            continue  # a record is never overwritten
        run_dir.mkdir(parents=True)
        (run_dir / "result.json").write_text(json.dumps(result_record(row, note), indent=1) + "\n")
        points = curves.get((row["task"], row["algorithm"], row["seed"]), [])
        if points:
            results.write_csv(run_dir / "curve.csv", points, results.CURVE_FIELDS)
            results.read_curve(run_dir / "curve.csv")  # the rebuilt file reads back as a valid curve
        results.read_result(run_dir / "result.json")
        written += 1
    return written


def wins_from_percent(percent: float, games: int) -> int:
    """The one win count of `games` whose percentage rounds to `percent` (1 decimal)."""
    counts = [w for w in range(games + 1) if f"{100 * w / games:.1f}" == f"{percent:.1f}"]
    if len(counts) != 1:
        raise ValueError(f"{percent}% of {games} games: {len(counts)} win counts round to it, not exactly one")
    return counts[0]


def reference_row(match: re.Match, note: str) -> dict:
    games = int(match["games"])
    wins = wins_from_percent(float(match["rate"]), games)
    low, high = wilson_interval(wins, games)
    if (f"{100 * low:.1f}", f"{100 * high:.1f}") != (match["low"], match["high"]):
        raise ValueError(f"{match[0]}: the interval of {wins}/{games} does not round to the published one")
    return {
        "task": match["task"],
        "agent": match["agent"],
        "wins": wins,
        "games": games,
        "win_rate": wins / games,
        "ci_low": low,
        "ci_high": high,
        "standard": match["standard"] == "yes",
        "reconstructed": note,
    }


def write_references(published: pathlib.Path, out: pathlib.Path, agents: list[str], note: str) -> int:
    lines = files.read_text(published / "results.md", results.MAX_FILE_BYTES, "published table").splitlines()
    written = 0
    for agent in agents:
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in agent)
        agent_dir = out / "score" / f"{safe}-published"
        if agent_dir.exists():  # rebuilt before: rebuilt again from the same files
            shutil.rmtree(agent_dir)
        measured = {(row["task"], row["agent"]) for row in results.find_scores(out)}
        rows = [reference_row(m, note) for m in map(REFERENCE_ROW.match, lines) if m and m["agent"] == agent]
        if not rows:
            raise ValueError(f"{published / 'results.md'} has no scripted reference {agent!r}")
        rows = [row for row in rows if (row["task"], row["agent"]) not in measured]
        if rows:
            agent_dir.mkdir(parents=True)
            results.write_scores(rows, agent_dir)
            written += len(rows)
    results.find_scores(out)  # every rebuilt file reads back as valid scores
    return written


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--published", required=True, help="the folder of results.csv, curves.csv and results.md")
    parser.add_argument("--out", required=True, help="the records folder (sorry-bench report --runs-dir reads it)")
    parser.add_argument("--source", required=True, help="where the published files come from, e.g. a commit")
    parser.add_argument("--agent", action="append", default=[], help="a scripted reference of results.md to rebuild")
    args = parser.parse_args(argv)
    published, out = pathlib.Path(args.published), pathlib.Path(args.out)
    note = (
        f"rebuilt from the published results.csv, curves.csv and results.md ({args.source}) after the run "
        "directory was lost; absent because not published: the algorithm's settings, the evaluation and scoring "
        "times, the score's seed."
    )
    try:
        runs = write_runs(published, out, note)
        references = write_references(published, out, args.agent, note)
    except (ValueError, KeyError) as error:
        sys.exit(f"bench_reconstruct_records: {error}")
    print(f"wrote {runs} run records and {references} scripted-reference rows under {out}")


if __name__ == "__main__":
    main()
