"""Runs every code block of docs/integrations.md (each in a temporary directory, in its own
process), or skips it with the reason when its library is not installed."""

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "integrations.md"

# section heading -> (module the block needs, why it may be missing, slow?)
SECTIONS = {
    "Gymnasium and Stable-Baselines3 by id": ("stable_baselines3", "stable-baselines3 is not installed", False),
    "PettingZoo's Parallel API": ("pettingzoo", "pettingzoo is not installed", False),
    "SuperSuit": ("supersuit", "supersuit is not installed (in no extra: docs/integrations.md)", False),
    "OpenSpiel": ("pyspiel", "open_spiel is not installed (the test extra installs it)", False),
    "Shimmy (OpenSpiel as PettingZoo)": (
        "shimmy",
        "shimmy is not installed (in no extra: docs/integrations.md)",
        False,
    ),
    "RLlib's own OpenSpielEnv": ("ray", "ray[rllib] is not installed (the rllib extra)", True),
    "RLlib's own PettingZooEnv": ("ray", "ray[rllib] is not installed (the rllib extra)", True),
    "Stable-Baselines3 (PettingZoo's action-mask tutorial)": (
        "sb3_contrib",
        "sb3-contrib is not installed (train extra)",
        False,
    ),
    "sb3-contrib's MaskablePPO on the Gymnasium env": (
        "sb3_contrib",
        "sb3-contrib is not installed (train extra)",
        False,
    ),
    "TorchRL": ("torchrl", "torchrl is not installed (in no extra: docs/integrations.md says why)", False),
    "Tianshou": ("tianshou", "tianshou is not installed (in no extra: docs/integrations.md says why)", False),
    "AgileRL": (
        "agilerl",
        "agilerl is not installed (pettingzoo<1.27: its own environment, docs/integrations.md)",
        False,
    ),
}


def blocks() -> dict:
    """{section heading: its python code blocks joined}."""
    found, section = {}, None
    for part in re.split(r"(^## [^\n]*$|^```python\n.*?^```$)", PAGE.read_text(), flags=re.M | re.S):
        if part.startswith("## "):
            section = part[3:].strip()
        elif part.startswith("```python"):
            found[section] = found.get(section, "") + part[len("```python\n") : -3]
    return found


def test_every_block_has_a_runner():
    assert set(blocks()) == set(SECTIONS)


@pytest.mark.parametrize(
    "section",
    [pytest.param(s, marks=pytest.mark.slow) if SECTIONS[s][2] else s for s in SECTIONS],
)
def test_block_runs(section, tmp_path):
    module, reason, _ = SECTIONS[section]
    if importlib.util.find_spec(module) is None:
        pytest.skip(reason)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    env.setdefault("OMP_NUM_THREADS", "1")
    run = subprocess.run(
        [sys.executable, "-c", blocks()[section]], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, f"{section} block failed:\n{run.stderr[-3000:]}"
