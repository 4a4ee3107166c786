"""Time of one search move at the browser server's caps (agents.play.serve.opponents.SETTING_CAPS).

Plays random 4-player games of three presets and times the agent's move every third
position that has more than one legal move (the first move of each spec also compiles or
loads its numba code, so it is left out of the figures).

    python benchmarks/serve_caps.py "expectimax:depth=4" "montecarlo:iterations=2000,rollout_plies=20"

Prints per spec and preset: moves timed, mean and max milliseconds.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from sorry_env.agents import Turn, make_agent
from sorry_env.board import game
from sorry_env.board.rules import get_rules

PRESETS = (("hasbro2003", 4), ("hasbro2003_points", 4), ("hasbro2003_teams", 4))


def time_moves(spec: str, rules_name: str, players: int, moves: int) -> tuple[int, float, float]:
    """(moves timed, mean ms, max ms) of `spec` over one random game of up to 3 * `moves` plies."""
    rules = get_rules(rules_name)
    agent = make_agent(spec, seed=0)
    rng = np.random.default_rng(0)
    state = game.new_state(rules, players, seed=1)
    agent.act(Turn.from_state(state, rules, rng))  # compile / load first: not timed
    times = []
    for ply in range(3 * moves):
        if game.winner(state) is not None:
            break
        legal = game.legal_actions(state, rules)
        if len(legal) > 1 and ply % 3 == 0:
            start = time.perf_counter()
            agent.act(Turn.from_state(state, rules, rng, legal))
            times.append(time.perf_counter() - start)
        state = game.step(state, rules, int(rng.choice(legal)))
    return len(times), 1000 * float(np.mean(times)), 1000 * max(times)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("specs", nargs="+", help="agent specs (registered agents with settings)")
    p.add_argument("--moves", type=int, default=30, help="moves timed per game (at most)")
    args = p.parse_args()
    for spec in args.specs:
        for rules_name, players in PRESETS:
            n, mean, worst = time_moves(spec, rules_name, players, args.moves)
            print(f"{spec:45s} {rules_name}/{players}: {n} moves, mean {mean:.1f} ms, max {worst:.1f} ms", flush=True)


if __name__ == "__main__":
    main()
