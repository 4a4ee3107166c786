"""A demo game in the terminal: random legal moves, the board drawn before the first move
and every K moves after it, and at the end. Run: python -m sorry_env.board.demo [--players N]
[--seed S] [--every K]"""

import argparse

import numpy as np

from . import env as make_env


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--players", type=int, default=4, choices=(2, 3, 4))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--every", type=int, default=40, help="draw the board every K moves")
    args = p.parse_args(argv)
    if args.seed < 0 or args.every < 1:
        p.error("--seed must be >= 0 and --every >= 1")
    e = make_env(num_players=args.players, render_mode="ansi")
    e.reset(seed=args.seed)
    rng = np.random.default_rng(args.seed)
    moves = 0
    final = {}
    for agent in e.agent_iter():
        obs, reward, term, trunc, _ = e.last()
        if term or trunc:
            final[agent] = reward
            e.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        action = int(rng.choice(legal))
        if moves % args.every == 0:
            print(e.render(), "\n", f"{agent} plays: {e.unwrapped.describe_action(action)}\n", sep="")
        e.step(action)
        moves += 1
    print(e.render())
    print(f"game over after {moves} moves; rewards {final}")


if __name__ == "__main__":
    main()
