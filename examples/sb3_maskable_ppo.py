"""sb3-contrib MaskablePPO against fixed opponents through `gymnasium.make`, then `sorry-eval`.

    python examples/sb3_maskable_ppo.py --timesteps 100000 --opponents heuristic

The learner plays one seat (a random one each game) of `sorry_env/Sorry-v1`; the other
seats are played by the opponents given. MaskablePPO reads the legal actions from the env's
`action_masks()`. The saved `.zip` is an agent for `sorry-eval` and every other place that
takes an agent spec (it records which game it was trained for).
"""

import argparse
import time

import gymnasium
from sb3_contrib import MaskablePPO

import sorry_env  # noqa: F401  (registers sorry_env/Sorry-v1)
from sorry_env.agents.arena.cli import main as sorry_eval


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--timesteps", type=int, default=100_000, help="learner steps")
    parser.add_argument(
        "--opponents", nargs="+", default=["heuristic"], help="agent specs, one for all seats or one each"
    )
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--n-steps", type=int, default=2048, help="MaskablePPO steps per rollout")
    parser.add_argument("--eval-games", type=int, default=400, help="games per sorry-eval run (0: skip)")
    parser.add_argument("--out", default="runs/sb3-example", help="directory for model.zip and the evaluations")
    parser.add_argument("--workers", type=int, default=None, help="sorry-eval processes (default: all cores)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    env = gymnasium.make("sorry_env/Sorry-v1", num_players=args.players, opponents=args.opponents)
    model = MaskablePPO(
        "MultiInputPolicy",
        env,
        n_steps=args.n_steps,
        batch_size=min(256, args.n_steps),
        seed=args.seed,
        device="cpu",
        verbose=0,
    )
    start = time.perf_counter()
    model.learn(args.timesteps)
    seconds = time.perf_counter() - start
    print(f"trained {model.num_timesteps} steps in {seconds:.0f} s ({model.num_timesteps / seconds:.0f} steps/s)")
    path = f"{args.out}/model.zip"
    model.save(path)
    print(f"saved {path}")

    if args.eval_games:  # the same as: sorry-eval runs/sb3-example/model.zip random --games 400
        for opponent in ("random", "heuristic"):
            sorry_eval(
                [
                    path,
                    *[opponent] * (args.players - 1),
                    "--games",
                    str(args.eval_games),
                    "--seed",
                    str(args.seed),
                    "--out",
                    f"{args.out}/eval-{opponent}",
                    "--no-progress",
                    *(["--workers", str(args.workers)] if args.workers else []),
                ]
            )


if __name__ == "__main__":
    main()
