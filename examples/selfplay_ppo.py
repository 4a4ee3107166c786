"""Masked PPO self-play for Sorry! in one file of plain torch (CleanRL style).

    python examples/selfplay_ppo.py --total-timesteps 500000 --save runs/mine.safetensors
    sorry-eval "sorry_env.training.bench.selfplay_ppo:agent:path=runs/mine.safetensors" heuristic --games 2000

The trainer itself is one readable file, `training/bench/selfplay_ppo.py` (installed as
`sorry_env.training.bench.selfplay_ppo`), so that sorry-bench runs the very same loop as its
`selfplay_ppo` baseline (`sorry-bench run selfplay_ppo 2p-selfplay --seed 0`). Read it there
or copy it; this script runs it with your arguments (`--help` lists them). `--save` keeps the
network, with the game it was trained for, as a file that plays again wherever an agent spec
goes (as above; it refuses another game or player count).
"""

from sorry_env.training.bench.selfplay_ppo import main

if __name__ == "__main__":
    main()
