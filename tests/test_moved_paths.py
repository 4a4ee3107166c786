"""Modules that moved from sorry_env.agents into sorry_env (issue 26): the core modules import
nothing from the agents package, and the old import paths, deprecated aliases until issue 38,
are gone."""

import importlib
import importlib.machinery
import pathlib
import subprocess
import sys

import sorry_env
from sorry_env import agent, agents
from sorry_env.agents import base

ROOT = pathlib.Path(__file__).parent.parent
# The removed aliases (CHANGELOG, Removed): modules moved into sorry_env, the old name of the
# flat Monte Carlo agent's module, and the old home of the tournament code.
MOVED = ("gym_env", "vector_opponents", "policy_input", "gym_space", "evaluation", "simulate")
REMOVED = [f"sorry_env.agents.{name}" for name in (*MOVED, "mcts", "_moved")] + ["sorry_env.training.evaluate"]


def test_the_board_games_turn_and_callable_agent_are_one_object_each():
    assert agents.Turn is base.Turn is agent.Turn
    assert agents.CallableAgent is base.CallableAgent is agent.CallableAgent
    assert agents.public_view is agent.public_view and agents.agent_label is agent.agent_label
    assert agents.heuristic.heuristic_choice is sorry_env.board.scripted_choices.heuristic_choice
    assert agents.greedy.greedy_choice is sorry_env.board.scripted_choices.greedy_choice


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)


def test_core_envs_import_nothing_from_agents():
    result = _run(
        "import sys\n"
        "import sorry_env.gym_env, sorry_env.vector_opponents, sorry_env.board.scripted_choices, sorry_env.agent\n"
        "print(sorted(m for m in sys.modules if m.startswith(('sorry_env.agents', 'sorry_env.training'))))\n"
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "[]"


def test_the_old_paths_are_gone_and_nothing_of_ours_warns_deprecation():
    # Issue 38: the aliases of issue 26 (and the other deprecated shims) were removed; a name
    # brought back as a shim would warn again, which is what this keeps out.
    for name in REMOVED:
        parent, _, leaf = name.rpartition(".")
        # searched in the imported package's own folders only (an editable install of another
        # checkout adds a finder that would answer from that checkout)
        assert importlib.machinery.PathFinder.find_spec(leaf, importlib.import_module(parent).__path__) is None, name
    product = [ROOT / "sorry_env", ROOT / "agents", ROOT / "training"]
    offenders = [
        f"{path.relative_to(ROOT)}:{number}"
        for folder in product
        for path in sorted(folder.rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if "DeprecationWarning" in line
    ]
    assert not offenders, offenders
    result = subprocess.run(
        [
            sys.executable,
            "-W",
            "error::DeprecationWarning",
            "-c",
            "import sorry_env, sorry_env.agents, sorry_env.training",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
