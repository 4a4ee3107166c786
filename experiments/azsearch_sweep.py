"""Quick strength sweep of agent specs against the heuristic (2 players, seed 0, one process):
each spec's win rate over GAMES games and the wall time (the 300-400 game sweep of
docs/research/2026-11-25-expert-iteration.md).

    python experiments/azsearch_sweep.py GAMES SPEC [SPEC ...]
"""

import sys
import time

from sorry_env.agents.arena.tournament import run_tournament


def main() -> None:
    if len(sys.argv) < 3 or not sys.argv[1].isdigit():
        sys.exit("usage: python experiments/azsearch_sweep.py GAMES SPEC [SPEC ...]")
    games = int(sys.argv[1])
    for spec in sys.argv[2:]:
        start = time.perf_counter()
        entry = run_tournament([spec, "heuristic"], games=games, workers=1, seed=0)["agents"][0]
        print(
            f"{spec}: {entry['win_rate']:.3f} [{entry['ci_low']:.3f}, {entry['ci_high']:.3f}] "
            f"{time.perf_counter() - start:.1f}s",
            flush=True,
        )


if __name__ == "__main__":
    main()
