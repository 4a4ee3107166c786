"""Masked PPO self-play for Sorry! in one file of plain torch (CleanRL style).

    python examples/selfplay_ppo.py --total-timesteps 500000

The trainer itself is one readable file, `training/bench/selfplay_ppo.py` (installed as
`sorry_env.training.bench.selfplay_ppo`), so that sorry-bench runs the very same loop as its
`selfplay_ppo` baseline (`sorry-bench run selfplay_ppo 2p-selfplay --seed 0`). Read it there
or copy it; this script runs it with your arguments (`--help` lists them).
"""

from sorry_env.training.bench.selfplay_ppo import main

if __name__ == "__main__":
    main()
