"""The environment alone needs only the base install (`pip install sorry-env` / `pip install -e .`:
numpy, numba, gymnasium, pettingzoo, pillow): none of the extras' packages is imported."""

import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
# The extras' packages (train, eval, serve, test, rllib) and the layers above sorry_env.
NOT_IN_THE_BASE_INSTALL = [
    "torch",
    "stable_baselines3",
    "sb3_contrib",
    "tensorboard",
    "yaml",
    "safetensors",
    "tqdm",
    "matplotlib",
    "openskill",
    "starlette",
    "uvicorn",
    "pygame",
    "ray",
    "agents",
    "training",
]

SCRIPT = f"""
import sys
for name in {NOT_IN_THE_BASE_INSTALL!r}:
    sys.modules[name] = None  # importing it now raises ImportError, as if not installed
import numpy as np
import pettingzoo
import sorry_env
from sorry_env import game

e = sorry_env.env(num_players=2, render_mode="rgb_array")
e.reset(seed=0)
rng = np.random.default_rng(0)
for agent in e.agent_iter():
    obs, reward, terminated, truncated, info = e.last()
    e.step(None if terminated or truncated else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
assert e.render().shape == (640, 640, 3)
aec = pettingzoo.utils.env.AECEnv
assert isinstance(sorry_env.raw_env(num_players=4), aec)
print("env alone ok")
"""


def test_the_env_runs_with_only_the_base_dependencies():
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=ROOT.parent, env=env, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "env alone ok"
