"""The environment alone needs only the base install (`pip install sorry-env` / `pip install -e .`:
numpy, numba, gymnasium, pettingzoo, pillow): none of the extras' packages is imported."""

import importlib
import json
import os
import pathlib
import re
import subprocess
import sys

import tomllib

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
from sorry_env.board import game

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


# Every console script, with arguments that reach the part needing an extra.
COMMAND_ARGS = {
    "sorry-eval": ["heuristic", "random", "--games", "2"],
    "sorry-train": ["configs/quick.yaml"],
    "sorry-export": ["runs/none", "none.safetensors"],
    "sorry-play": ["--opponents", "hasbro2003-2p"],
    "sorry-train-rllib": ["configs/rllib-2p.yaml"],
    "sorry-serve": ["--port", "18123"],
    "sorry-expit": ["configs/expit-smoke.yaml"],
    "sorry-bench": ["score", "heuristic", "--task", "2p-heuristic"],
}

COMMANDS_SCRIPT = f"""
import contextlib, io, json, sys
for name in {[m for m in NOT_IN_THE_BASE_INSTALL if m not in ("agents", "training")]!r}:
    sys.modules[name] = None  # importing it now raises ImportError, as if not installed
from sorry_env import commands
results = {{}}
for command, args in {COMMAND_ARGS!r}.items():
    err = io.StringIO()
    sys.argv = [command, *args]
    with contextlib.redirect_stderr(err):
        try:
            code = getattr(commands, command.replace("-", "_"))()
        except SystemExit as exit:
            code = exit.code
        except BaseException as error:  # a traceback: the test names it
            code = repr(error)
    results[command] = [code, err.getvalue()]
print(json.dumps(results))
"""


def test_without_the_extras_every_command_ends_with_one_line_naming_the_extra():
    """`pip install -e .` alone: each command that needs an extra exits 2 with one line that
    names it (sorry_env.extras), no traceback."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    result = subprocess.run(
        [sys.executable, "-c", COMMANDS_SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr[-3000:]
    results = json.loads(result.stdout.splitlines()[-1])
    assert results.keys() == COMMAND_ARGS.keys()
    for command, (code, err) in results.items():
        lines = [line for line in err.splitlines() if "compiling machine code" not in line]  # numba's notice
        assert code == 2 and len(lines) == 1, (command, code, err)
        line = rf'{command}: needs the (train|eval|serve) extra \(\w+ is not installed\): pip install "sorry-env\[\1\]"'
        assert re.match(line, lines[0]), lines[0]


def test_every_console_script_goes_through_the_launcher():
    from sorry_env import commands

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {name: f"sorry_env.commands:{name.replace('-', '_')}" for name in commands.COMMANDS}
    for target in commands.COMMANDS.values():  # each names a real main
        module, function = target.split(":")
        assert callable(getattr(importlib.import_module(module), function))


# `python -m` runs of the same commands (the module, then arguments that reach the extra).
MODULE_RUNS = {
    "sorry_env.agents.arena.cli": COMMAND_ARGS["sorry-eval"],
    "sorry_env.training.train": COMMAND_ARGS["sorry-train"],
    "sorry_env.training.bench": COMMAND_ARGS["sorry-bench"],
    "sorry_env.agents.play.serve": COMMAND_ARGS["sorry-serve"],
}


def test_without_the_extras_a_module_run_ends_with_one_line_naming_the_extra(tmp_path):
    """`python -m sorry_env.X` goes through the same guard as the console scripts
    (sorry_env.extras.guard_module_run): exit code 2, one line naming the extra. The extras are
    hidden from the interpreter by a sitecustomize module, which runs before anything else."""
    hidden = [m for m in NOT_IN_THE_BASE_INSTALL if m not in ("agents", "training")]
    (tmp_path / "sitecustomize.py").write_text(f"import sys\nfor name in {hidden!r}:\n    sys.modules[name] = None\n")
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}", "OMP_NUM_THREADS": "1"}
    for module, args in MODULE_RUNS.items():
        result = subprocess.run(
            [sys.executable, "-m", module, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
        )
        lines = [line for line in result.stderr.splitlines() if "compiling machine code" not in line]
        assert result.returncode == 2 and len(lines) == 1, (module, result.returncode, result.stderr[-2000:])
        names_the_extra = r'needs the (train|eval|serve) extra \(\w+ is not installed\): pip install "sorry-env\[\1\]"'
        assert re.match(rf"python -m {re.escape(module)}: {names_the_extra}", lines[0]), lines[0]


def test_module_run_reads_the_interpreter_command_line():
    from sorry_env.extras import module_run

    assert module_run(["python", "-m", "sorry_env.training.train", "x.yaml"]) == "sorry_env.training.train"
    assert module_run(["python", "-X", "importtime", "-O", "-m", "sorry_env.replay"]) == "sorry_env.replay"
    assert module_run(["python", "script.py", "-m", "sorry_env.replay"]) is None
    assert module_run(["python", "-c", "pass", "-m", "sorry_env.replay"]) is None
    assert module_run(["python"]) is None
