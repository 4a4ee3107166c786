"""sb3-contrib MaskablePPO against fixed opponents through `gymnasium.make`, then `sorry-eval`.

    python examples/sb3_maskable_ppo.py --timesteps 100000 --opponents heuristic

The learner plays one seat (a random one each game) of `sorry_env/Sorry-v1`; the other
seats are played by the opponents given. MaskablePPO reads the legal actions from the env's
`action_masks()`. The saved `.zip` is an agent for `sorry-eval` and every other place that
takes an agent spec (it records which game it was trained for).
"""

import argparse
import os
import time

import gymnasium
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback

import sorry_env  # noqa: F401  (registers sorry_env/Sorry-v1)
from sorry_env.agents.arena.cli import main as sorry_eval


class ProgressLine(BaseCallback):
    """A line every `every` learner steps: steps done, speed, and the learner's wins among the
    games it finished lately (sb3's Monitor keeps the last 100 games' rewards: +1 a win)."""

    def __init__(self, every: int, total: int):
        super().__init__()
        self.every, self.total, self.next_line = every, total, every
        self.start = time.perf_counter()

    def _on_step(self) -> bool:
        if self.num_timesteps >= self.next_line:
            self.next_line += self.every
            rewards = [info["r"] for info in self.model.ep_info_buffer]
            wins = f", won {sum(r > 0 for r in rewards)} of the last {len(rewards)} games" if rewards else ""
            speed = self.num_timesteps / (time.perf_counter() - self.start)
            print(f"{self.num_timesteps:>8} / {self.total} steps ({speed:.0f} steps/s){wins}", flush=True)
        return True


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
    parser.add_argument("--progress-every", type=int, default=10_000, help="learner steps between progress lines")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.progress_every < 1:
        parser.error(f"--progress-every must be at least 1, got {args.progress_every}")

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
    model.learn(args.timesteps, callback=ProgressLine(args.progress_every, args.timesteps))
    seconds = time.perf_counter() - start
    print(f"trained {model.num_timesteps} steps in {seconds:.0f} s ({model.num_timesteps / seconds:.0f} steps/s)")
    os.makedirs(args.out, exist_ok=True)  # (sb3 would warn that it creates it)
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
