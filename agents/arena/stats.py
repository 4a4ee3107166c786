"""Tournament statistics: win rates with 95% Wilson intervals, turn order, openskill ratings,
scores, and the results dict (:func:`summarize`)."""

from __future__ import annotations

import math

import numpy as np
import openskill.models

import sorry_env.agents as agents  # mypy: see pyproject [tool.mypy]
from sorry_env.board import game
from sorry_env.board.rules import Rules, get_rules

Z_95 = 1.959963984540054  # two-sided 95% quantile of the standard normal


# ---- statistics -----------------------------------------------------------------------------
def wilson_interval(successes: int, trials: int, z: float = Z_95) -> tuple[float, float]:
    """Wilson score interval (low, high) for a binomial proportion successes/trials."""
    p = successes / trials
    shrink = 1 + z**2 / trials
    centre = (p + z**2 / (2 * trials)) / shrink
    half_width = z / shrink * math.sqrt(p * (1 - p) / trials + z**2 / (4 * trials**2))
    # At 0 or all successes one end is p itself, which rounding can put just past p (60 of 60
    # gave 0.9999999999999998): the interval always holds p.
    return min(centre - half_width, p), max(centre + half_width, p)


def win_rate_with_interval(wins: int, games: int) -> dict:
    """A tally as {wins, games, win_rate, ci_low, ci_high}: the rate with its Wilson interval
    (no games are played here; training.match.match plays them)."""
    low, high = wilson_interval(wins, games)
    return {"wins": wins, "games": games, "win_rate": wins / games, "ci_low": low, "ci_high": high}


def sides(players: int, rules: Rules | str | None) -> list[list[int]]:
    """The groups of lineup entries that win together: under team rules partners sit
    opposite, and the rotation keeps entries i and i + 2 opposite; otherwise (and for a game
    without rule presets, `rules` None: a registered game's table) everyone alone."""
    if rules is None:
        return [[i] for i in range(players)]
    groups: list[list[int]] = []
    for i in range(players):
        if not any(i in group for group in groups):
            groups.append([j for j in range(players) if game.same_side(rules, i, j)])
    return groups


def skill_ratings(entries: int, rated_games) -> list[dict]:
    """openskill Plackett-Luce ratings of `entries` lineup entries after rating the games in
    order, each of `rated_games` a (groups, winners) pair: the groups of entry indices that
    played it, each a team (partners win together), the group holding the `winners` ranked
    first and the others tied second; a truncated game (no winners) ties everyone. Each
    entry's rating as the results' fields: rating_mu, rating_sigma, rating_ordinal."""
    model = openskill.models.PlackettLuce()
    ratings = [model.rating() for _ in range(entries)]
    for groups, winners in rated_games:
        teams = [[ratings[i] for i in group] for group in groups]
        ranks = [1.0 if not winners or group[0] in winners else 2.0 for group in groups]
        for group, team in zip(groups, model.rate(teams, ranks=ranks)):
            for i, rating in zip(group, team):
                ratings[i] = rating
    return [{"rating_mu": r.mu, "rating_sigma": r.sigma, "rating_ordinal": r.ordinal()} for r in ratings]


def entry_at_turn_position(record: dict, seats: tuple[int, ...], position: int) -> int:
    """The lineup entry that moved `position`-th (0: first) in the game of `record`."""
    seat = seats[(seats.index(record["first_seat"]) + position) % len(seats)]
    return record["seats"].index(seat)


def mean_score(records: list[dict], entry: int) -> float | None:
    """Mean points of a lineup entry over the games that were scored, or None."""
    points = [record["scores"][entry] for record in records if record["scores"] is not None]
    return float(np.mean(points)) if points else None


def agent_labels(agent_specs: list[str]) -> list[str]:
    """Display names: a policy file's name, a registered agent's spec with any file paths in
    its settings shortened to file names, an agent object's name; '#k' on the k-th repeat."""
    names = [agents.agent_label(spec) for spec in agent_specs]
    return [
        name if names[:i].count(name) == 0 else f"{name}#{names[:i].count(name) + 1}" for i, name in enumerate(names)
    ]


def summarize(
    records: list[dict],
    agent_specs: list[str],
    seed: int,
    rules: Rules | str | None,
    max_turns: int,
    seats: tuple[int, ...] | None = None,
    rules_name: str | None = None,
) -> dict:
    """The results dict (JSON-able) of a finished tournament. `seats` defaults to the
    engine's default seats; `rules` None with a `rules_name` is a game without rule presets
    (another registered game: its seats, rules_name its id)."""
    players = len(agent_specs)
    seats = game.DEFAULT_SEATS[players] if seats is None else tuple(seats)
    games = len(records)
    groups = sides(players, rules)  # partners as one team
    ratings = skill_ratings(players, [(groups, record["winners"]) for record in records])
    expected = len(groups[0]) / players  # an entry's share of the wins at equal strength
    agent_rows = []
    for i, (spec, label) in enumerate(zip(agent_specs, agent_labels(agent_specs))):
        agent_rows.append(
            {
                "agent": label,
                "spec": spec if isinstance(spec, str) else label,
                **win_rate_with_interval(sum(i in record["winners"] for record in records), games),
                "expected": expected,
                **ratings[i],
                "mean_score": mean_score(records, i),
                "moved_first": sum(record["seats"][i] == record["first_seat"] for record in records),
                "games_at_seat": {str(seat): sum(record["seats"][i] == seat for record in records) for seat in seats},
            }
        )
    turn_order = []
    for position in range(players):
        wins = sum(entry_at_turn_position(record, seats, position) in record["winners"] for record in records)
        turn_order.append({"position": position, **win_rate_with_interval(wins, games), "expected": expected})
    return {
        "config": {
            "agents": [row["spec"] for row in agent_rows],
            "players": players,
            "seats": list(seats),
            "games": games,
            "seed": seed,
            "rules": get_rules(rules).name if rules is not None else rules_name,
            "max_turns": max_turns,
        },
        "seating_balanced": games % players**2 == 0,
        "agents": agent_rows,
        "turn_order": turn_order,
        "first_mover_advantage": turn_order[0]["win_rate"] - expected,
        "mean_turns": float(np.mean([record["turns"] for record in records])),
        "truncated": sum(not record["winners"] for record in records),
        "games": records,
    }
