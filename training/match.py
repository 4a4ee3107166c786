"""Win rate of a policy file against one scripted opponent (a win of the policy's side:
under team rules, its partner finishing counts): the trainer's in-training measurement.

The policy takes one seat and every other seat is the opponent, so a 4-player evaluation is
one policy seat against three copies of the opponent; the seats rotate game by game. The
games are the tournament evaluator's (:func:`sorry_env.agents.arena.tournament.run_tournament`, in this
process), where a policy plays all its games in lockstep batches: 2,000 games of the
2-player policy against the heuristic take about 15 s, where the per-game Gymnasium env
this used before took 22 s for 200.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import torch

from sorry_env.agents.arena.stats import wilson_interval
from sorry_env.agents.arena.tournament import run_tournament
from sorry_env.agents.base import Agent
from sorry_env.board.rules import DEFAULT_MAX_TURNS, Rules


def match(
    policy: str | Path | Agent,
    opponent: str,
    num_players: int,
    rules: Rules | str,
    games: int,
    seed: int,
    max_turns: int = DEFAULT_MAX_TURNS,
) -> dict:
    """Play `games` games of the policy (a file, an agent spec, or an agent in memory) against
    `opponent`: {"win_rate": the fraction its side won, "low", "high": its 95% Wilson
    interval, "games"}. The caller's torch thread count is kept."""
    lineup = [str(policy) if isinstance(policy, Path) else policy] + [opponent] * (num_players - 1)
    result = run_tournament(
        lineup, num_players, games, seed, rules, workers=1, max_turns=max_turns, torch_threads=torch.get_num_threads()
    )
    entry = result["agents"][0]
    return {"win_rate": entry["win_rate"], "low": entry["ci_low"], "high": entry["ci_high"], "games": games}


def win_rates(policy, opponents: Iterable[str], num_players: int, rules, games: int, seed: int, max_turns: int) -> dict:
    """{opponent: the policy's win rate against it} (:func:`match`'s fractions): an in-run check."""
    return {name: match(policy, name, num_players, rules, games, seed, max_turns)["win_rate"] for name in opponents}


def with_interval(rate: float, games: int) -> str:
    """A win rate of `games` games as people read it, with its 95% interval: "40.0% [33.5%, 46.9%]"
    (a few hundred games move by several points from noise alone)."""
    low, high = wilson_interval(round(rate * games), games)
    return f"{rate:.1%} [{low:.1%}, {high:.1%}]"
