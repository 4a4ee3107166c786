"""Tournament results as a terminal table, CSV files, a JSON file and a PNG chart."""

from __future__ import annotations

import csv
import json
import pathlib

from matplotlib.figure import Figure

from .tournament import _game_type_of


# ---- output ---------------------------------------------------------------------------------
def percent(x: float) -> str:
    return f"{100 * x:.1f}%"


def rating_header(width: int) -> str:
    """The heading of :func:`rating_row`'s columns, the agent column `width` wide."""
    return f"{'agent':<{width}} {'win rate':>8}  {'95% CI':<15} {'wins':>11}  {'rating mu ± sigma':>17}"


def rating_row(row: dict, width: int) -> str:
    """An agent's win rate, interval, wins and rating, as the tables print them."""
    return (
        f"{row['agent']:<{width}} {percent(row['win_rate']):>8}  "
        f"{'[' + percent(row['ci_low']) + ', ' + percent(row['ci_high']) + ']':<15} "
        f"{str(row['wins']) + '/' + str(row['games']):>11}  "
        f"{row['rating_mu']:>8.2f} ± {row['rating_sigma']:<6.2f}"
    )


def format_table(results: dict) -> str:
    """The results as text for the terminal."""
    config = results["config"]
    rows = results["agents"]
    scored = rows[0]["mean_score"] is not None
    width = max(20, *(len(row["agent"]) for row in rows))  # a long spec widens the column
    lines = [
        f"{config['players']} players (seats {', '.join(map(str, config['seats']))}), rules "
        f"{config['rules']}, {config['games']} games, seed {config['seed']}",
        "",
        rating_header(width) + f"  {'ordinal':>7}" + (f"  {'mean score':>10}" if scored else ""),
    ]
    for row in rows:
        lines.append(
            rating_row(row, width)
            + f"  {row['rating_ordinal']:>7.2f}"
            + (f"  {row['mean_score']:>10.1f}" if scored else "")
        )
    first = results["turn_order"][0]
    lines += [
        "",
        f"equal strength: {percent(rows[0]['expected'])} each"
        + (
            f" (partners win together: {rows[0]['agent']} + {rows[2]['agent']}, "
            f"{rows[1]['agent']} + {rows[3]['agent']})"
            if rows[0]["expected"] > 1 / config["players"]
            else ""
        ),
        f"first mover won {percent(first['win_rate'])} [{percent(first['ci_low'])}, {percent(first['ci_high'])}] "
        f"(expected {percent(first['expected'])}; advantage {100 * results['first_mover_advantage']:+.1f} points)",
        "win rate by turn position: "
        + ", ".join(f"{row['position'] + 1}. {percent(row['win_rate'])}" for row in results["turn_order"]),
        f"mean game length {results['mean_turns']:.1f} turns "
        f"({_game_type_of(config).turn_unit}); "
        f"{results['truncated']} games truncated at {config['max_turns']} turns (draws)",
    ]
    if not results["seating_balanced"]:
        lines.append(
            f"note: {config['games']} games is not a multiple of {config['players'] ** 2}: "
            "seats and first moves are balanced only approximately"
        )
    return "\n".join(lines)


def write_csv(path: str | pathlib.Path, rows: list[dict]) -> None:
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def agent_csv_rows(results: dict) -> list[dict]:
    """Agent rows with `games_at_seat` spread over one column per seat."""
    rows = []
    for row in results["agents"]:
        flat = {key: value for key, value in row.items() if key != "games_at_seat"}
        flat.update({f"games_at_seat_{seat}": n for seat, n in row["games_at_seat"].items()})
        rows.append(flat)
    return rows


def game_csv_rows(results: dict) -> list[dict]:
    """One row per game: who won (empty: truncated), its length, every agent's seat and,
    under play-for-points rules, points (empty: truncated)."""
    labels = [row["agent"] for row in results["agents"]]
    scored = results["agents"][0]["mean_score"] is not None
    rows = []
    for record in results["games"]:
        row = {
            "game": record["game"],
            "first_seat": record["first_seat"],
            "winners": " ".join(labels[i] for i in record["winners"]),
            "turns": record["turns"],
            **{f"seat_{label}": seat for label, seat in zip(labels, record["seats"])},
        }
        if scored:
            row.update(
                {
                    f"score_{label}": "" if record["scores"] is None else record["scores"][i]
                    for i, label in enumerate(labels)
                }
            )
        rows.append(row)
    return rows


def plot_win_rates(results: dict, path: str | pathlib.Path) -> None:
    """Bar chart of the win rates with their 95% intervals and the equal-strength line."""
    rows = results["agents"]
    config = results["config"]
    rates = [row["win_rate"] for row in rows]
    errors = [[row["win_rate"] - row["ci_low"] for row in rows], [row["ci_high"] - row["win_rate"] for row in rows]]
    fig = Figure(figsize=(1.6 * len(rows) + 2.5, 4.5), layout="constrained")
    ax = fig.subplots()
    bars = ax.bar([row["agent"] for row in rows], rates, yerr=errors, capsize=6, color="tab:blue")
    ax.bar_label(bars, labels=[percent(rate) for rate in rates], label_type="center", color="white")
    ax.axhline(rows[0]["expected"], color="gray", linestyle="--", label="equal strength")
    ax.set_ylim(0, 1)
    ax.set_ylabel("win rate (95% Wilson interval)")
    ax.set_title(f"{config['players']} players, {config['rules']}, {config['games']} games, seed {config['seed']}")
    ax.legend(loc="upper right")
    fig.savefig(path, dpi=120)


def write_files(out_dir, names: list[str], summary: dict, tables: list[list[dict]], plot) -> list[pathlib.Path]:
    """In `out_dir` (made if needed): `summary` as JSON (the first of `names`), each of `tables`
    as a CSV file (the next names) and `plot(summary, path)`'s chart (the last); their paths."""
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / name for name in names]
    paths[0].write_text(json.dumps(summary, indent=2) + "\n")
    for path, rows in zip(paths[1:], tables):
        write_csv(path, rows)
    plot(summary, paths[-1])
    return paths


def write_outputs(results: dict, out_dir: str | pathlib.Path) -> list[pathlib.Path]:
    """results.json (all but the per-game records), agents.csv, turn_order.csv, games.csv and
    win_rates.png in `out_dir`; returns their paths."""
    names = ["results.json", "agents.csv", "turn_order.csv", "games.csv", "win_rates.png"]
    tables = [agent_csv_rows(results), results["turn_order"], game_csv_rows(results)]
    summary = {key: value for key, value in results.items() if key != "games"}
    return write_files(out_dir, names, summary, tables, plot_win_rates)
