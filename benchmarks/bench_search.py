"""Time per move of the search agents: mean and 99th percentile of the seconds an agent's
``act`` takes, over all its moves and over its decisions with more than one legal move (a lone
legal move is played at once, without search).

The agent plays the heuristic in two-player games (seats and first player alternating); every
agent spec is timed over the same games. The first game of each agent is played untimed, so
compiling and loading numba code is not counted.

    python benchmarks/bench_search.py [--games 20] [--rules hasbro2003]
        [--agents expectimax:depth=3 expectimax:depth=2 mcts]
"""

import argparse
import sys
import time

import numpy as np

from sorry_env.agents import Turn, make_agent
from sorry_env.board import engine as E
from sorry_env.board import game
from sorry_env.board.rules import DEFAULT_MAX_TURNS, DEFAULT_PRESET, get_rules


def decision_times(spec: str, rules, games: int, seed: int) -> tuple[list[float], list[float]]:
    """Seconds per move of agent `spec` over `games` games against the heuristic: every move,
    and the moves with a choice."""
    agent, opponent = make_agent(spec), make_agent("heuristic")
    agent.check_game(rules, 2)
    every, chosen = [], []
    for g in range(-1, games):  # game -1 warms the compiled code up, untimed
        state = game.new_state(rules, num_players=2, seed=seed + g + 1)
        seats = game.seats(state)
        mine = seats[g % 2]
        agent.reset(seed + g + 1)
        opponent.reset(seed + g + 1)
        rng = np.random.default_rng([seed, g + 1])
        while game.winner(state) is None and state[E.TURN] < DEFAULT_MAX_TURNS:
            legal = game.legal_actions(state, rules)
            turn = Turn.from_state(state, rules, rng, legal)
            player = agent if game.to_move(state) == mine else opponent
            start = time.perf_counter()
            action = player.act(turn)
            seconds = time.perf_counter() - start
            if player is agent and g >= 0:
                every.append(seconds)
                if len(legal) > 1:
                    chosen.append(seconds)
            state = game.step(state, rules, action)
    return every, chosen


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--games", type=int, default=20, help="timed games per agent (default 20)")
    p.add_argument("--rules", default=DEFAULT_PRESET, help=f"rules preset (default {DEFAULT_PRESET})")
    p.add_argument(
        "--agents", nargs="+", default=["expectimax:depth=3", "expectimax:depth=2", "mcts"], help="agent specs to time"
    )
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    if args.games < 1:
        p.error("--games must be >= 1")
    try:
        rules = get_rules(args.rules)
        game.seats_for(2, rules=rules)
        game.check_seed(args.seed)
        for spec in args.agents:
            make_agent(spec).check_game(rules, 2)
    except (ValueError, KeyError) as e:
        p.error(str(e))
    for spec in args.agents:
        every, chosen = decision_times(spec, rules, args.games, args.seed)
        for label, times in (("every move", every), ("moves with a choice", chosen)):
            if not times:
                print(f"{spec}: no {label} in {args.games} games", file=sys.stderr)
                continue
            times = np.array(times)
            print(
                f"{args.rules}, 2 players, {spec}, {label}: {len(times)} moves, mean {times.mean() * 1e3:.2f} ms, "
                f"p99 {np.percentile(times, 99) * 1e3:.1f} ms"
            )


if __name__ == "__main__":
    main()
