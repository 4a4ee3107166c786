"""Your own agent against a shipped policy, in a plain PettingZoo loop.

    python examples/pettingzoo_vs_policy.py --games 100

`agents.action_for(env, opponent)` is the one call that turns any agent (a policy file, a
search agent, your own Agent or function) into a move for the player to move: the opponent
sees only what that player may see. Here "your agent" plays uniformly random legal moves;
put your own decision where it says so.
"""

import argparse

import numpy as np

import sorry_env
from sorry_env import agents
from sorry_env.agents.arena.stats import wilson_interval


def my_move(observation: dict, rng: np.random.Generator) -> int:
    """Your agent: the PettingZoo observation dict in, an action out (here: random legal)."""
    return int(rng.choice(np.flatnonzero(observation["action_mask"])))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument(
        "--opponent", default="hasbro2003-2p", help="any agent spec (default: the shipped 2-player policy, by name)"
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    rng = np.random.default_rng(args.seed)
    opponent = agents.as_agent(args.opponent)  # load once, reuse for every game
    env = sorry_env.env(num_players=2)  # seats 0 and 2: you are player_0
    wins = 0
    for game in range(args.games):
        env.reset(seed=args.seed + game)
        opponent.reset(seed=args.seed + game)
        for name in env.agent_iter():
            observation, reward, terminated, truncated, _ = env.last()
            if terminated or truncated:
                wins += name == "player_0" and reward > 0
                action = None
            elif name == "player_0":
                action = my_move(observation, rng)
            else:
                action = agents.action_for(env, opponent, rng)
            env.step(action)
    low, high = wilson_interval(wins, args.games)  # a win rate is reported with its 95% interval
    print(
        f"you won {wins} of {args.games} games against {agents.agent_label(args.opponent)}: "
        f"{wins / args.games:.1%} [{low:.1%}, {high:.1%}]"
    )


if __name__ == "__main__":
    main()
