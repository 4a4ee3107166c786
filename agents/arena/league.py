"""A league: every lineup of a list of agents plays a tournament, and the results are pooled.

    sorry-eval --league heuristic greedy random checkpoints/sorry-2p.safetensors --games 400

With two players every pair plays ``games`` games (seats and first moves rotated as in
:mod:`sorry_env.agents.arena.tournament`); with three or four, every set of that many distinct agents does.
Every lineup uses the same seed, so the lineups meet the same packs (common random numbers).

Results
-------
- ``matrix[i][j]``: the share of the games in which agents i and j both played that agent i
  won (two players: i's win rate against j). Its 95% Wilson interval is in the JSON and CSV.
- per agent: games, wins and win rate over all its games, and an openskill Plackett-Luce
  rating from every game of the league (winner first, the others tied; truncated games tie
  everyone), rated lineup by lineup in the order listed.
- the printed agent table is ordered by win rate, with a note for every pair whose own games
  went against that order (:func:`head_to_head_notes`).

Written to ``--out``: ``league.json``, ``league_matrix.csv`` (rows: agent, columns: the
opponent), ``league_agents.csv`` and ``league.png`` (a heatmap of the matrix). Team rules are
not supported (partners would need pairs of lineup entries).
"""

from __future__ import annotations

import itertools
import math
import pathlib

import numpy as np
from matplotlib.figure import Figure

from sorry_env.board.rules import DEFAULT_PRESET, get_rules

from .output import percent, rating_header, rating_row, write_files
from .stats import agent_labels, skill_ratings, win_rate_with_interval
from .tournament import run_tournament


def lineups(n_agents: int, players: int) -> list[tuple[int, ...]]:
    """Indices of the agents of every lineup: each set of `players` distinct agents."""
    if n_agents < max(2, players):
        raise ValueError(f"a league of {players}-player games needs at least {max(2, players)} agents, got {n_agents}")
    return list(itertools.combinations(range(n_agents), players))


def run_league(
    agent_specs,
    players: int = 2,
    games: int = 400,
    seed: int = 0,
    rules=DEFAULT_PRESET,
    workers=None,
    max_turns=None,
    progress=False,
    torch_threads=None,
    log=print,
) -> dict:
    """Play every lineup (see the module doc) and return the league results dict."""
    agent_specs = list(agent_specs)
    if get_rules(rules).teams != "none":
        raise ValueError("a league with team rules is not supported; run sorry-eval for each lineup")
    labels = agent_labels(agent_specs)
    if len(set(labels)) != len(labels):
        raise ValueError(f"league agents must differ; got {labels}")
    all_lineups = lineups(len(agent_specs), players)
    n = len(agent_specs)
    wins, met = np.zeros((n, n), dtype=np.int64), np.zeros((n, n), dtype=np.int64)
    rated_games = []  # every game of the league, lineup by lineup, for the ratings
    tournaments = []
    for k, lineup in enumerate(all_lineups):
        log(f"lineup {k + 1}/{len(all_lineups)}: {' vs '.join(labels[i] for i in lineup)}")
        results = run_tournament(
            [agent_specs[i] for i in lineup],
            players,
            games,
            seed,
            rules,
            workers,
            max_turns,  # None: the game's own limit
            progress,
            torch_threads,
        )
        tournaments.append(
            {
                "lineup": [labels[i] for i in lineup],
                "win_rates": [row["win_rate"] for row in results["agents"]],
                "truncated": results["truncated"],
            }
        )
        for record in results["games"]:
            winners = {lineup[e] for e in record["winners"]}
            for a, b in itertools.permutations(lineup, 2):
                met[a, b] += 1
                wins[a, b] += a in winners
            rated_games.append(([[a] for a in lineup], winners))
    ratings = skill_ratings(n, rated_games)
    # each of an agent's games and wins is counted once per opponent in it
    played, won = met.sum(axis=1) // (players - 1), wins.sum(axis=1) // (players - 1)
    rows = []
    for i in range(n):
        rows.append(
            {
                "agent": labels[i],
                "spec": agent_specs[i] if isinstance(agent_specs[i], str) else labels[i],
                "games": int(played[i]),  # before the wins (the CSV's column order)
                **win_rate_with_interval(int(won[i]), int(played[i])),
                **ratings[i],
            }
        )
    matrix = [
        [None if met[i, j] == 0 else win_rate_with_interval(int(wins[i, j]), int(met[i, j])) for j in range(n)]
        for i in range(n)
    ]
    return {
        "config": {
            "agents": [row["spec"] for row in rows],
            "players": players,
            "games_per_lineup": games,
            "lineups": len(all_lineups),
            "seed": seed,
            "rules": get_rules(rules).name,
        },
        "agents": rows,
        "matrix": matrix,
        "tournaments": tournaments,
    }


def format_league(league: dict) -> str:
    """The matrix and the agent table as text."""
    labels = [row["agent"] for row in league["agents"]]
    width = max(8, *(len(label) for label in labels))
    config = league["config"]
    lines = [
        (
            f"league: {len(labels)} agents, {config['players']} players, {config['lineups']} lineups x "
            f"{config['games_per_lineup']} games, rules {config['rules']}, seed {config['seed']}"
        ),
        "",
        "row's win share in games with column's agent:",
        " " * (width + 1) + " ".join(f"{label[:width]:>{width}}" for label in labels),
    ]
    for label, cells in zip(labels, league["matrix"]):
        lines.append(
            f"{label:<{width}} " + " ".join(f"{'-' if c is None else percent(c['win_rate']):>{width}}" for c in cells)
        )
    order = sorted(range(len(labels)), key=lambda i: -league["agents"][i]["win_rate"])
    lines += ["", "by win rate over all the agent's games:", rating_header(width)]
    lines += [rating_row(league["agents"][i], width) for i in order]
    lines += head_to_head_notes(league, order)
    return "\n".join(lines)


def head_to_head_notes(league: dict, order: list[int]) -> list[str]:
    """One line for every pair that the table's order (`order`: agent indices, top first) puts
    against their own games: the lower agent won the larger share of the games the two played.
    A win rate pools every opponent (and a rating rates the games in the order listed), so a
    non-transitive league cannot be ordered without such a pair; it is shown, not hidden."""
    labels, matrix = [row["agent"] for row in league["agents"]], league["matrix"]
    notes = []
    for rank, high in enumerate(order):
        for low in order[rank + 1 :]:
            theirs, ours = matrix[low][high], matrix[high][low]
            if theirs is not None and ours is not None and theirs["win_rate"] > ours["win_rate"]:
                notes.append(
                    f"note: {labels[low]} won {percent(theirs['win_rate'])} "
                    f"[{percent(theirs['ci_low'])}, {percent(theirs['ci_high'])}] of its games with "
                    f"{labels[high]} (listed above it: its win rate over all its games is higher)"
                )
    return ["", *notes] if notes else []


def plot_league(league: dict, path) -> None:
    labels = [row["agent"] for row in league["agents"]]
    values = np.array([[math.nan if c is None else c["win_rate"] for c in cells] for cells in league["matrix"]])
    size = 1.1 * len(labels) + 2.5
    fig = Figure(figsize=(size + 1, size), layout="constrained")
    ax = fig.subplots()
    image = ax.imshow(values, vmin=0, vmax=1, cmap="RdBu")
    for i, j in itertools.product(range(len(labels)), repeat=2):
        if not math.isnan(values[i, j]):
            ax.text(j, i, percent(values[i, j]), ha="center", va="center", fontsize=9)
    ax.set_xticks(range(len(labels)), labels, rotation=30, ha="right")
    ax.set_yticks(range(len(labels)), labels)
    ax.set_xlabel("opponent")
    ax.set_ylabel("agent")
    config = league["config"]
    ax.set_title(f"win share, {config['players']} players, {config['games_per_lineup']} games per lineup")
    fig.colorbar(image, ax=ax, shrink=0.8)
    fig.savefig(path, dpi=120)


def write_league(results: dict, out_dir: str | pathlib.Path) -> list[pathlib.Path]:
    """The league `results` as league.json, league_matrix.csv, league_agents.csv and league.png in
    `out_dir`; returns their paths."""
    labels = [row["agent"] for row in results["agents"]]
    matrix_rows = [
        {"agent": label, **{other: "" if c is None else f"{c['win_rate']:.4f}" for other, c in zip(labels, cells)}}
        for label, cells in zip(labels, results["matrix"])
    ]
    names = ["league.json", "league_matrix.csv", "league_agents.csv", "league.png"]
    return write_files(out_dir, names, results, [matrix_rows, results["agents"]], plot_league)
