"""Modules that moved from sorry_env.agents into sorry_env (issue 26): the core modules import
nothing from the agents package, and the old import paths still work, give the same objects
and warn once with the new path."""

import json
import subprocess
import sys

import sorry_env
from sorry_env import agent, agents
from sorry_env.agents import base

MOVED = ("gym_env", "vector_opponents", "policy_input", "gym_space", "evaluation", "simulate")


def test_the_board_games_turn_and_callable_agent_are_one_object_each():
    assert agents.Turn is base.Turn is agent.Turn
    assert agents.CallableAgent is base.CallableAgent is agent.CallableAgent
    assert agents.public_view is agent.public_view and agents.agent_label is agent.agent_label
    assert agents.heuristic.heuristic_choice is sorry_env.scripted_choices.heuristic_choice
    assert agents.greedy.greedy_choice is sorry_env.scripted_choices.greedy_choice


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)


def test_core_envs_import_nothing_from_agents():
    result = _run(
        "import sys\n"
        "import sorry_env.gym_env, sorry_env.vector_opponents, sorry_env.scripted_choices, sorry_env.agent\n"
        "print(sorted(m for m in sys.modules if m.startswith(('sorry_env.agents', 'sorry_env.training'))))\n"
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "[]"


def test_old_paths_warn_once_with_the_new_path_and_give_the_same_objects():
    checks = "\n".join(
        f"import sorry_env.agents.{name} as old_{name}\nimport sorry_env.{name} as new_{name}" for name in MOVED
    )
    result = _run(
        "import json, warnings\n"
        "warnings.simplefilter('always')\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        + "".join(f"    {line}\n" for line in checks.splitlines())
        + "    import sorry_env.agents.gym_env\n"  # a second import warns no more
        "print(json.dumps([str(w.message) for w in caught if w.category is DeprecationWarning]))\n"
        "assert old_vector_opponents.VectorOpponentEnv is new_vector_opponents.VectorOpponentEnv\n"
        "assert old_evaluation.Weights is new_evaluation.Weights\n"
        "assert old_policy_input.policy_input is new_policy_input.policy_input\n"
        "assert old_gym_env.PolicyInputWrapper is new_gym_env.PolicyInputWrapper\n"
        "env = old_gym_env.SorryGymEnv(2, 'random')\n"  # the old class still takes specs
        "assert isinstance(env, new_gym_env.SorryGymEnv)\n"
        "env.reset(seed=0)\n"
    )
    assert result.returncode == 0, result.stderr[-3000:]
    messages = json.loads(result.stdout.strip().splitlines()[-1])
    assert len(messages) == len(MOVED)
    for name, message in zip(MOVED, messages):
        assert message.startswith(f"sorry_env.agents.{name} moved to sorry_env.{name}")
