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

from pathlib import Path

import torch

from sorry_env.agents.arena.tournament import run_tournament
from sorry_env.agents.base import Agent
from sorry_env.rules import DEFAULT_MAX_TURNS, Rules


def play_win_rate(
    policy: str | Path | Agent,
    opponent: str,
    num_players: int,
    rules: Rules | str,
    games: int,
    seed: int,
    max_turns: int = DEFAULT_MAX_TURNS,
) -> float:
    """Play `games` games of the policy (a file, or an agent in memory) against `opponent` and
    return the fraction its side won (a plain number; agents.arena.stats.win_rate_with_interval
    summarises a tally instead). The caller's torch thread count is kept."""
    lineup = [str(policy) if isinstance(policy, Path) else policy] + [opponent] * (num_players - 1)
    result = run_tournament(
        lineup, num_players, games, seed, rules, workers=1, max_turns=max_turns, torch_threads=torch.get_num_threads()
    )
    return result["agents"][0]["win_rate"]
