"""sorry-bench: the task definitions (golden file), the commands at tiny budgets, refusals."""

import dataclasses
import json
import pathlib
import re
import sys

import numpy as np
import pytest
import torch

from sorry_env.examples import selfplay_ppo as single_file
from sorry_env.training.bench import (
    algorithms,
    cli,
    dqn,
    expert_iteration,
    maskable_ppo,
    native_ppo,
    results,
    rllib_ppo,
    selfplay_ppo,
)
from sorry_env.training.bench.tasks import ANCHORS, TASKS, get_task, normalized_score

GOLDEN = pathlib.Path(__file__).with_name("bench_tasks_golden.json")
BUMP_RULE = (
    "a sorry-bench task definition changed: bump that task's version in training/bench/tasks.py "
    "(results of the old version are not comparable), re-measure its anchors, add a CHANGELOG line, "
    "then record: python tests/test_bench.py --record"
)


def definitions() -> dict:
    return {name: task.definition() for name, task in TASKS.items()}


def test_task_definitions_match_the_golden_file():
    recorded = json.loads(GOLDEN.read_text())
    current = definitions()
    assert set(recorded) <= set(current), f"tasks removed: {sorted(set(recorded) - set(current))}; {BUMP_RULE}"
    for name, definition in current.items():
        if name not in recorded:
            pytest.fail(f"task {name!r} is new: record it (python tests/test_bench.py --record)")
        if definition != recorded[name]:
            changed = sorted(k for k in definition if definition[k] != recorded[name].get(k))
            same_version = definition["version"] == recorded[name]["version"]
            pytest.fail(f"task {name}: {changed} changed" + (f"; {BUMP_RULE}" if same_version else "; record it"))


def test_required_kinds_of_task_exist():
    kinds = {(t.game, t.players, t.learner, t.rules) for t in TASKS.values()}
    assert ("board", 2, "one_seat", "hasbro2003") in kinds
    assert ("board", 2, "self_play", "hasbro2003") in kinds
    assert ("board", 4, "one_seat", "hasbro2003") in kinds
    assert ("board", 4, "one_seat", "hasbro2003_teams") in kinds
    assert ("express", 2, "one_seat", None) in kinds
    for task in TASKS.values():  # seats and first mover exactly balanced in the score
        assert task.eval_games % task.players**2 == 0


def test_normalized_score_maps_the_anchors_to_0_and_1():
    for name, task in TASKS.items():
        random_wins, games = ANCHORS[name]["random"]
        heuristic_wins, games_h = ANCHORS[name]["heuristic"]
        assert normalized_score(task, random_wins / games) == pytest.approx(0)
        assert normalized_score(task, heuristic_wins / games_h) == pytest.approx(1)


def test_get_task_accepts_the_versioned_id_and_refuses_others():
    assert get_task("2p-heuristic-v1") is TASKS["2p-heuristic"]
    with pytest.raises(ValueError, match="version 1, not 7"):
        get_task("2p-heuristic-v7")
    with pytest.raises(ValueError, match="2p-selfplay"):
        get_task("3p-heuristic")


def run_cli(argv, capsys):
    cli.main(argv)
    return capsys.readouterr().out


def refused(argv, capsys) -> str:
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    assert exit_info.value.code == 2
    return capsys.readouterr().err


def test_list_shows_every_task(capsys):
    out = run_cli(["list"], capsys)
    for task in TASKS.values():
        assert task.id in out
    assert json.loads(run_cli(["list", "--json"], capsys)) == definitions()


def test_unknown_names_are_refused_with_what_exists(capsys, tmp_path):
    err = refused(["run", "ppo", "nope", "--seed", "0", "--runs-dir", str(tmp_path)], capsys)
    assert "unknown task 'nope'" in err and "2p-heuristic" in err
    err = refused(["run", "a2c", "2p-heuristic", "--seed", "0", "--runs-dir", str(tmp_path)], capsys)
    assert "unknown algorithm 'a2c'" in err and "maskable_ppo" in err
    err = refused(["run", "expert_iteration", "2p-heuristic", "--seed", "0", "--runs-dir", str(tmp_path)], capsys)
    assert "does not fit task 2p-heuristic" in err and "fixed opponents" in err
    err = refused(["run", "dqn", "express-2p-heuristic", "--seed", "0", "--runs-dir", str(tmp_path)], capsys)
    assert "does not fit task express-2p-heuristic" in err and "game_ppo" in err
    err = refused(["run", "ppo", "express-2p-heuristic", "--seed", "0", "--runs-dir", str(tmp_path)], capsys)
    assert "does not fit" in err
    err = refused(["score", "random", "--task", "nope", "--out", str(tmp_path)], capsys)
    assert "unknown task" in err
    assert not any(tmp_path.iterdir())  # nothing was written


def test_an_agent_that_does_not_fit_is_refused_before_any_game(capsys, tmp_path):
    four_player = str(pathlib.Path(__file__).parents[1] / "checkpoints" / "sorry-4p.safetensors")
    err = refused(["score", four_player, "--task", "2p-heuristic", "--out", str(tmp_path / "s")], capsys)
    assert "cannot play task 2p-heuristic" in err
    err = refused(["score", "missing.safetensors", "--task", "2p-heuristic", "--out", str(tmp_path / "s")], capsys)
    assert "cannot play task 2p-heuristic" in err and "missing.safetensors does not exist" in err
    (tmp_path / "run").mkdir()  # a folder, on every task: the reason reaches the user
    err = refused(["score", str(tmp_path / "run"), "--out", str(tmp_path / "s")], capsys)
    assert "fits none of the tasks" in err and "is a folder, not an agent" in err
    err = refused(["score", "no_such_agent", "--out", str(tmp_path / "s")], capsys)
    assert "fits none of the tasks" in err
    assert not (tmp_path / "s").exists()


def test_score_plays_the_tasks_evaluation_and_writes_json_and_csv(capsys, tmp_path):
    out = run_cli(
        ["score", "greedy", "--task", "2p-heuristic", "--task", "2p-selfplay", "--games", "8", "--workers", "1"]
        + ["--out", str(tmp_path), "--no-progress"],
        capsys,
    )
    rows = json.loads((tmp_path / "scores.json").read_text())
    assert [row["task"] for row in rows] == ["2p-heuristic-v1", "2p-selfplay-v1"]
    row = rows[0]
    assert row["games"] == 8 and 0 <= row["wins"] <= 8 and row["standard"] is False
    assert row["win_rate"] == row["wins"] / 8 and row["ci_low"] <= row["win_rate"] <= row["ci_high"]
    assert row["normalized"] == pytest.approx(normalized_score(TASKS["2p-heuristic"], row["win_rate"]))
    assert (tmp_path / "scores.csv").read_text().startswith("task,agent,wins,games")
    assert row["command"].startswith("sorry-bench score greedy --task 2p-heuristic --task 2p-selfplay --games 8")
    assert "greedy" in out
    assert out.count("2p-heuristic-v1") == 1 and out.count("win rate") == 1  # each row once, one header


def test_scoring_again_keeps_the_other_tasks_and_another_agent_cannot_overwrite(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    common = ["--games", "4", "--workers", "1", "--no-progress"]
    out = run_cli(["score", "greedy", "--task", "2p-heuristic"] + common, capsys)
    assert "(not standard: games or seed)" in out
    run_cli(["score", "greedy", "--task", "4p-heuristic"] + common, capsys)
    scores = tmp_path / "runs" / "bench" / "score" / "greedy" / "scores.json"
    assert [row["task"] for row in json.loads(scores.read_text())] == ["2p-heuristic-v1", "4p-heuristic-v1"]
    err = refused(["score", "random", "--task", "2p-heuristic", "--out", str(scores.parent)] + common, capsys)
    assert "holds the scores of 'greedy', not 'random'" in err
    assert len(json.loads(scores.read_text())) == 2
    # Two folders' files of one name score into two directories (the default names the whole spec).
    shipped = pathlib.Path(__file__).parents[1] / "checkpoints" / "sorry-2p.safetensors"
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "policy.safetensors").write_bytes(shipped.read_bytes())
        run_cli(["score", f"{folder}/policy.safetensors", "--task", "2p-heuristic"] + common, capsys)
    names = sorted(p.name for p in (tmp_path / "runs" / "bench" / "score").iterdir())
    assert names == ["a_policy.safetensors", "b_policy.safetensors", "greedy"]


def test_an_agent_that_answers_illegally_fails_the_score_without_a_traceback(capsys, tmp_path, monkeypatch):
    (tmp_path / "bad_agents.py").write_text(
        "from sorry_env.agents import Agent\n\nclass Off(Agent):\n    def act(self, turn):\n        return -1\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["score", "bad_agents:Off", "--task", "2p-heuristic", "--games", "2", "--out", str(tmp_path / "s")])
    err = capsys.readouterr().err
    assert exit_info.value.code == 1 and "usage:" not in err
    assert "chose illegal action -1 in game 0" in err and "no score written for 2p-heuristic-v1" in err


def test_score_skips_tasks_the_agent_does_not_fit(capsys, tmp_path):
    express_policy = str(pathlib.Path(__file__).parents[1] / "checkpoints" / "express-2p.safetensors")
    out = run_cli(["score", express_policy, "--games", "4", "--workers", "1", "--out", str(tmp_path)], capsys)
    rows = json.loads((tmp_path / "scores.json").read_text())
    assert [row["task"] for row in rows] == ["express-2p-heuristic-v1"]
    assert "skipped 2p-heuristic" in out


@pytest.fixture
def tiny_settings(monkeypatch):
    """The baselines' settings shrunk so a run takes seconds."""
    monkeypatch.setitem(dqn.SETTINGS, "envs", 8)
    monkeypatch.setitem(dqn.SETTINGS, "hidden", [32])
    monkeypatch.setitem(dqn.SETTINGS, "learning_starts", 64)
    monkeypatch.setitem(dqn.SETTINGS, "batch_size", 32)
    monkeypatch.setitem(dqn.SETTINGS, "target_every", 64)
    monkeypatch.setitem(maskable_ppo.SETTINGS, "envs", 8)
    monkeypatch.setitem(maskable_ppo.SETTINGS, "n_steps", 16)
    monkeypatch.setitem(maskable_ppo.SETTINGS, "batch_size", 64)
    monkeypatch.setitem(maskable_ppo.SETTINGS, "self_play_snapshot_every", 128)  # self-play: the copy refreshed
    monkeypatch.setitem(dqn.SETTINGS, "self_play_snapshot_every", 128)
    monkeypatch.setitem(native_ppo.SETTINGS, "envs", 8)
    monkeypatch.setitem(native_ppo.SETTINGS, "network", {**native_ppo.SETTINGS["network"], "hidden": [32]})
    monkeypatch.setitem(native_ppo.SETTINGS, "ppo", {**native_ppo.SETTINGS["ppo"], "n_steps": 16, "batch_size": 64})
    monkeypatch.setitem(native_ppo.SETTINGS, "snapshot_every", 128)
    monkeypatch.setitem(selfplay_ppo.SETTINGS, "num_envs", 2)
    monkeypatch.setitem(selfplay_ppo.SETTINGS, "num_steps", 64)
    monkeypatch.setitem(selfplay_ppo.SETTINGS, "hidden", 32)
    monkeypatch.setitem(selfplay_ppo.SETTINGS, "snapshot_every", 1)
    monkeypatch.setitem(expert_iteration.SETTINGS, "hidden", [32])
    monkeypatch.setitem(expert_iteration.SETTINGS, "games", 2)
    monkeypatch.setitem(expert_iteration.SETTINGS, "simulations", 4)


TINY_RUN = ["--budget", "256", "--curve-every", "128", "--curve-games", "4", "--final-games", "4"]


@pytest.mark.parametrize(
    ("algorithm", "task"),
    [
        ("dqn", "2p-heuristic"),
        ("dqn", "2p-selfplay"),
        ("maskable_ppo", "4p-teams-heuristic"),
        ("maskable_ppo", "2p-selfplay"),
        ("ppo", "2p-selfplay"),
        ("selfplay_ppo", "2p-selfplay"),
        ("selfplay_ppo", "4p-heuristic"),
        ("expert_iteration", "2p-selfplay"),
    ],
)
def test_run_trains_writes_its_curve_and_result_then_report_rebuilds_them(
    algorithm, task, tiny_settings, capsys, tmp_path
):
    run_cli(["run", algorithm, task, "--seed", "3", "--runs-dir", str(tmp_path), *TINY_RUN], capsys)
    run_dir, task_rules = tmp_path / task / algorithm / "seed-3", get_task(task).rules
    result = results.read_result(run_dir / "result.json")
    curve = results.read_curve(run_dir / "curve.csv")
    assert result["algorithm"] == algorithm and result["task"] == get_task(task).id and result["seed"] == 3
    assert result["train_cpu_seconds"] > 0
    assert result["steps"] >= 256 and result["score"]["games"] == 4 and result["score"]["standard"] is False
    assert result["command"].startswith(f"sorry-bench run {algorithm} {task} --seed 3 --budget 256")
    assert [row["steps"] for row in curve][0] == 0 and curve[-1]["steps"] == result["steps"]
    assert all(row["games"] == 4 for row in curve)
    # the same run again is refused rather than overwritten
    assert "already holds a run" in refused(
        ["run", algorithm, task, "--seed", "3", "--runs-dir", str(tmp_path), *TINY_RUN], capsys
    )
    saved = {
        "dqn": f"sorry_env.training.bench.dqn:agent:path={run_dir / 'q_network.safetensors'}",
        "selfplay_ppo": f"sorry_env.training.bench.selfplay_ppo:agent:path={run_dir / 'network.safetensors'}",
        "maskable_ppo": str(run_dir / "model.zip"),
    }
    if algorithm in saved:  # the run's network plays again as an agent spec, in its own game only
        from sorry_env.agents import make_agent
        from sorry_env.agents.arena.tournament import run_tournament

        spec, players = saved[algorithm], get_task(task).players
        played = run_tournament([spec, *["random"] * (players - 1)], games=2, seed=0, workers=1, rules=task_rules)
        assert played["agents"][0]["games"] == 2
        with pytest.raises(ValueError, match=f"trained for .*{players} players"):
            make_agent(spec).check_game(task_rules, 3)
    out = run_cli(["report", "--runs-dir", str(tmp_path)], capsys)
    table = (tmp_path / "report" / "results.md").read_text()
    assert f"| {get_task(task).id} | {algorithm} | 3 | {result['steps']:,} |" in table
    assert (tmp_path / "report" / f"curve-{get_task(task).id}.png").stat().st_size > 0
    assert "curves.csv" in out


def spec_of(saved) -> str:
    return re.escape(f"sorry_env.training.bench.selfplay_ppo:agent:path={saved}")


def test_the_single_file_ppo_saves_a_network_that_plays_as_an_agent(tiny_settings, capsys, tmp_path):
    from sorry_env.agents import make_agent

    saved = tmp_path / "mine.safetensors"
    selfplay_ppo.main(["--total-timesteps", "128", "--eval-games", "2", "--save", str(saved)])
    assert f"wrote {saved}" in capsys.readouterr().out
    agent = make_agent(f"sorry_env.training.bench.selfplay_ppo:agent:path={saved}")
    agent.check_game("hasbro2003", 2)
    with pytest.raises(SystemExit, match="must end in .safetensors"):
        selfplay_ppo.main(["--total-timesteps", "128", "--save", str(tmp_path / "mine.pt")])
    (tmp_path / "plain.safetensors").write_bytes(b"\x02\x00\x00\x00\x00\x00\x00\x00{}")
    from sorry_env.agents import tensor_file
    from sorry_env.training.bench.network_agent import GAME_KEY

    wide = {"algorithm": "selfplay_ppo", "rules": "hasbro2003", "players": 2, "hidden": 10**6}
    tensor_file.save_atomic(tmp_path / "wide.safetensors", {}, GAME_KEY, wide)  # a header asking for a huge network
    (tmp_path / "a_file").write_text("")
    with pytest.raises(SystemExit, match="cannot write in"):  # before any training
        selfplay_ppo.main(["--total-timesteps", "128", "--save", str(tmp_path / "a_file" / "mine.safetensors")])
    with pytest.raises(  # sorry-eval FILE: not a policy file, and the spec that plays it
        ValueError, match=rf"sorry-bench network, not a policy file; play it as the agent spec {spec_of(saved)}"
    ):
        make_agent(str(saved))
    assert selfplay_ppo.SETTINGS is single_file.SETTINGS and selfplay_ppo.main is single_file.main
    for spec, message in [
        ("sorry_env.training.bench.selfplay_ppo:agent", "give its network file, path=FILE"),
        (f"sorry_env.training.bench.dqn:agent:path={saved}", "its metadata does not name the dqn game"),
        (f"sorry_env.training.bench.dqn:agent:path={tmp_path / 'plain.safetensors'}", "does not name the dqn game"),
        (f"sorry_env.training.bench.dqn:agent:path={tmp_path / 'none.safetensors'}", "does not exist"),
        (f"sorry_env.training.bench.selfplay_ppo:agent:path={tmp_path / 'wide.safetensors'}", "no network width"),
    ]:
        with pytest.raises(ValueError, match=message):
            make_agent(spec)


def test_self_play_env_shows_the_learner_the_envs_observation_and_the_copy_plays_the_rest():
    from sorry_env.board.observation import OBS_SIZE
    from sorry_env.training.bench.network_agent import NetworkAgent
    from sorry_env.training.bench.selfplay_env import selfplay_env

    rows = []

    def scores(obs):
        assert obs.shape[1] == OBS_SIZE  # the copy reads the env's observation, as the learner does
        rows.append(obs.shape[0])
        return torch.zeros(obs.shape[0], n_actions)

    task = TASKS["2p-selfplay"]
    copy = NetworkAgent(scores, "copy", sample=True)
    env = selfplay_env(task, 8, 0, copy)
    n_actions = env.action_space.n
    obs = env.reset()
    assert obs.shape == (8, OBS_SIZE) and env.observation_space.shape == (OBS_SIZE,)
    rng, ended, rewards = np.random.default_rng(0), 0, []
    for _ in range(400):
        masks = env.action_masks()
        obs, reward, dones, infos = env.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
        assert obs.shape == (8, OBS_SIZE)
        for b in np.flatnonzero(dones):
            assert infos[b]["terminal_observation"].shape == (OBS_SIZE,)
            ended += 1
            rewards.append(reward[b])
    assert ended > 0 and set(rewards) <= {-1.0, 0.0, 1.0}
    assert sum(rows) == env.venv.external_moves > len(rows)  # every opponent move, several games a call


@pytest.mark.parametrize(
    ("algorithm", "every", "versions"),
    [("maskable_ppo", 128, 2), ("dqn", 128, 2), ("maskable_ppo", 10**6, 1), ("dqn", 10**6, 1)],
)
def test_the_self_play_copy_stays_frozen_between_refreshes(
    algorithm, every, versions, tiny_settings, monkeypatch, capsys, tmp_path
):
    """The opponents' network, probed at every move they make, changes only when refreshed:
    once in a 256-step run refreshed every 128 steps (both learners update several times in
    between), never without a refresh."""
    from sorry_env.board.observation import OBS_SIZE
    from sorry_env.training.bench import selfplay_env as module

    monkeypatch.setitem(
        {"maskable_ppo": maskable_ppo, "dqn": dqn}[algorithm].SETTINGS, "self_play_snapshot_every", every
    )
    probe, seen, real = torch.rand(4, OBS_SIZE, generator=torch.Generator().manual_seed(0)), [], module.selfplay_env

    def spying(task, envs, seed, opponent):
        act_turns = opponent.act_turns

        def probed(turns):
            with torch.no_grad():
                seen.append(opponent.scores(probe).numpy().tobytes())
            return act_turns(turns)

        opponent.act_turns = probed
        return real(task, envs, seed, opponent)

    monkeypatch.setattr(module, "selfplay_env", spying)
    run_cli(["run", algorithm, "2p-selfplay", "--seed", "0", "--runs-dir", str(tmp_path), *TINY_RUN], capsys)
    changes = sum(a != b for a, b in zip(seen, seen[1:]))
    assert len(seen) > 10 and changes + 1 == versions


@pytest.mark.slow  # Ray starts and trains 2 iterations: about a minute on the shared 2 cores
def test_rllib_ppo_evaluates_its_policy_at_each_checkpoint(monkeypatch, capsys, tmp_path):
    pytest.importorskip("ray")
    monkeypatch.setitem(rllib_ppo.SETTINGS, "network", {"hidden": [32], "value_hidden": [32], "activation": "relu"})
    monkeypatch.setitem(rllib_ppo.SETTINGS, "ppo", {"train_batch_size": 200, "minibatch_size": 100, "num_epochs": 1})
    monkeypatch.setitem(
        rllib_ppo.SETTINGS, "env_runners", {**rllib_ppo.SETTINGS["env_runners"], "rollout_fragment_length": 100}
    )
    argv = ["run", "rllib_ppo", "2p-heuristic", "--seed", "0", "--runs-dir", str(tmp_path)]
    run_cli(argv + ["--budget", "400", "--curve-every", "200", "--curve-games", "4", "--final-games", "4"], capsys)
    run_dir = tmp_path / "2p-heuristic" / "rllib_ppo" / "seed-0"
    curve = results.read_curve(run_dir / "curve.csv")
    assert len(curve) == 2 and 0 < curve[0]["steps"] < curve[1]["steps"]
    assert results.read_result(run_dir / "result.json")["score"]["games"] == 4


def write_result(tmp_path, **changes) -> pathlib.Path:
    path = tmp_path / "2p-heuristic" / "dqn" / "seed-0" / "result.json"
    path.parent.mkdir(parents=True)
    score = {"wins": 3, "games": 4, "win_rate": 0.75, "ci_low": 0.3, "ci_high": 0.95, "normalized": 1.2}
    data = {
        "task": "2p-heuristic-v1",
        "algorithm": "dqn",
        "seed": 0,
        "budget": 10,
        "steps": 10,
        "train_seconds": 1.0,
        "cpu": "x",
        "score": {**score, "standard": False},
    }
    data.update(changes)
    path.write_text(json.dumps(data))
    return path


def test_report_refuses_damaged_or_oversized_result_files(capsys, tmp_path):
    write_result(tmp_path, steps="many")
    assert "steps" in refused(["report", "--runs-dir", str(tmp_path)], capsys)
    path = write_result(tmp_path / "b", score={"wins": 9, "games": 4})
    assert "score.wins" in refused(["report", "--runs-dir", str(tmp_path / "b")], capsys)
    path.write_text(" " * (results.MAX_FILE_BYTES + 1))
    assert "more than the" in refused(["report", "--runs-dir", str(tmp_path / "b")], capsys)
    assert "no sorry-bench results" in refused(["report", "--runs-dir", str(tmp_path / "b" / "2p-heuristic")], capsys)


def test_report_reads_a_valid_result_without_a_curve(capsys, tmp_path):
    write_result(tmp_path)
    run_cli(["report", "--runs-dir", str(tmp_path)], capsys)
    table = (tmp_path / "report" / "results.md").read_text()
    row = "| 2p-heuristic-v1 | dqn | 0 | 10 | 75.0% [30.0, 95.0] | 4 (not standard) | 1.20 | not reached | 1 | - | x |"
    assert row in table


def test_report_marks_reconstructed_records_and_checks_their_note(capsys, tmp_path):
    write_result(tmp_path, reconstructed="rebuilt from a published table")
    run_cli(["report", "--runs-dir", str(tmp_path)], capsys)
    table = (tmp_path / "report" / "results.md").read_text()
    assert "| 2p-heuristic-v1 | dqn | 0† | 10 |" in table
    assert "† Reconstructed record (1 rows): rebuilt from a published table" in table
    assert "True" in (tmp_path / "report" / "results.csv").read_text().splitlines()[1].split(",")
    write_result(tmp_path / "b", reconstructed=["not", "text"])
    assert "'reconstructed'" in refused(["report", "--runs-dir", str(tmp_path / "b")], capsys)
    write_result(tmp_path / "c", command=7)
    assert "'command'" in refused(["report", "--runs-dir", str(tmp_path / "c")], capsys)


ROOT = pathlib.Path(__file__).parent.parent
PUBLISHED = {  # the records (results/) and the report built from them (docs/)
    "common-budget": (ROOT / "results" / "baselines" / "common-budget", ROOT / "docs" / "baselines"),
    "full-budget": (ROOT / "results" / "baselines" / "full-budget", ROOT / "docs" / "baselines" / "full-budget"),
}


@pytest.mark.parametrize("budget", PUBLISHED)
def test_the_published_report_is_rebuilt_exactly_from_its_committed_records(budget, capsys, tmp_path):
    # docs/baselines.md's tables come from these records: a record added, lost or edited
    # without rebuilding the report makes the two differ.
    records, published = PUBLISHED[budget]
    assert any(records.glob("*/*/seed-*/result.json")), records  # the folder moved: say so, not an empty report
    run_cli(["report", "--runs-dir", str(records), "--out", str(tmp_path)], capsys)
    for name in ("results.md", "results.csv", "curves.csv"):
        assert (tmp_path / name).read_text() == (published / name).read_text(), name
    for path in published.glob("curve-*.png"):
        assert (tmp_path / path.name).exists()


def load_reconstruct():
    import importlib.util

    path = pathlib.Path(__file__).parent.parent / "experiments" / "bench_reconstruct_records.py"
    spec = importlib.util.spec_from_file_location("bench_reconstruct_records", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_reconstructed_records_rebuild_the_published_table(capsys, tmp_path):
    write_result(tmp_path / "runs", train_cpu_seconds=0.5, command="sorry-bench run dqn 2p-heuristic --seed 0")
    (tmp_path / "runs" / "score" / "x").mkdir(parents=True)
    score_row = {"task": "2p-heuristic-v1", "agent": "expectimax", "wins": 107, "games": 400, "standard": False}
    score_row.update(win_rate=107 / 400, ci_low=0.226, ci_high=0.313)
    (tmp_path / "runs" / "score" / "x" / "scores.json").write_text(json.dumps([score_row]))
    curve = "steps,wall_seconds,wins,games,win_rate,ci_low,ci_high,normalized\n0,1.5,1,4,0.25,0.05,0.7,-0.1\n"
    (tmp_path / "runs" / "2p-heuristic" / "dqn" / "seed-0" / "curve.csv").write_text(curve)
    run_cli(["report", "--runs-dir", str(tmp_path / "runs"), "--out", str(tmp_path / "published")], capsys)
    reconstruct = load_reconstruct()
    argv = ["--published", str(tmp_path / "published"), "--out", str(tmp_path / "records"), "--source", "test"]
    reconstruct.main(argv + ["--agent", "expectimax"])
    record = results.read_result(tmp_path / "records" / "2p-heuristic" / "dqn" / "seed-0" / "result.json")
    assert "settings" not in record and "seed" not in record["score"] and "(test)" in record["reconstructed"]
    rows = results.find_scores(tmp_path / "records")
    assert rows[0]["wins"] == 107 and rows[0]["games"] == 400 and "seed" not in rows[0]  # 26.8% of 400: only 107
    run_cli(["report", "--runs-dir", str(tmp_path / "records"), "--out", str(tmp_path / "again")], capsys)
    before = (tmp_path / "published" / "results.csv").read_text().splitlines()
    after = (tmp_path / "again" / "results.csv").read_text().splitlines()
    assert before[0] == after[0] and before[1].removesuffix(",False") == after[1].removesuffix(",True")
    assert (tmp_path / "again" / "curves.csv").read_text() == (tmp_path / "published" / "curves.csv").read_text()
    # a measured record is never replaced by a rebuilt one: an edited run and a measured
    # reference stay as they are when the records are rebuilt again
    path = tmp_path / "records" / "2p-heuristic" / "dqn" / "seed-0" / "result.json"
    path.write_text(path.read_text().replace('"wins": 3', '"wins": 2'))
    (tmp_path / "records" / "score" / "expectimax").mkdir()
    results.write_scores([{**score_row, "wins": 500, "games": 2000}], tmp_path / "records" / "score" / "expectimax")
    reconstruct.main(argv + ["--agent", "expectimax"])
    assert results.read_result(path)["score"]["wins"] == 2
    assert [row["games"] for row in results.find_scores(tmp_path / "records")] == [2000]
    assert reconstruct.wins_from_percent(26.8, 400) == 107
    with pytest.raises(ValueError, match="not exactly one"):  # 28.8% of 2,000 is 575, 576 or 577 wins
        reconstruct.wins_from_percent(28.8, 2000)


def test_every_algorithm_names_the_tasks_it_fits():
    for algorithm in algorithms.ALGORITHMS.values():
        fitting = [task.name for task in TASKS.values() if algorithm.fits(task) is None]
        assert {"2p-heuristic", "2p-selfplay", "express-2p-heuristic"} & set(fitting), algorithm.name
    assert algorithms.ALGORITHMS["ppo"].fits(TASKS["2p-selfplay"]) is None
    expit = algorithms.ALGORITHMS["expert_iteration"]
    assert [t.name for t in TASKS.values() if expit.fits(t) is None] == ["2p-selfplay"]
    assert "fixed opponents" in expit.fits(TASKS["2p-heuristic"])
    points = dataclasses.replace(TASKS["2p-selfplay"], rules="hasbro2003_points")
    assert "hidden hands" in expit.fits(points)
    # The task of another registered game is declared by its id and trained by the generic PPO.
    assert TASKS["express-2p-heuristic"].game_id == "express"
    assert algorithms.ALGORITHMS["game_ppo"].fits(TASKS["express-2p-heuristic"]) is None
    assert "board game" in algorithms.ALGORITHMS["game_ppo"].fits(TASKS["2p-heuristic"])


def test_game_ppo_runs_on_the_task_of_another_registered_game(tmp_path, capsys, monkeypatch):
    """A tiny sorry-bench run of the generic PPO: it trains, writes its curve and a policy
    file of that game, and scores it with the task's evaluation."""
    from sorry_env.agents.policy import read_metadata
    from sorry_env.training.bench import game_ppo

    monkeypatch.setitem(game_ppo.SETTINGS, "games", 8)
    monkeypatch.setitem(game_ppo.SETTINGS, "hidden", [8])
    argv = ["run", "game_ppo", "express-2p-heuristic", "--seed", "0", "--budget", "40", "--runs-dir", str(tmp_path)]
    out = run_cli([*argv, "--curve-every", "20", "--curve-games", "4", "--final-games", "4"], capsys)
    run_dir = tmp_path / "express-2p-heuristic" / "game_ppo" / "seed-0"
    result = json.loads((run_dir / "result.json").read_text())
    assert result["algorithm"] == "game_ppo" and result["score"]["games"] == 4
    assert result["steps"] >= 40
    meta = read_metadata(run_dir / "policy.safetensors", "express")
    assert meta["num_players"] == 2 and meta["network"]["hidden"] == [8]
    curve = (run_dir / "curve.csv").read_text().splitlines()
    assert len(curve) >= 2 and "game_ppo on express-2p-heuristic-v1" in out


class RecordingCurve:
    """Stands in for algorithms.Curve: records what would be evaluated, plays no game."""

    def __init__(self):
        self.points: list[tuple[int, str]] = []

    def evaluate(self, steps: int, agent: str) -> None:
        self.points.append((steps, agent))


def test_expert_iteration_trains_from_a_fresh_network_with_4_players(tiny_settings, tmp_path):
    """A 4-player self-play task (none is standard yet) fits and trains: generations of
    search self-play until the budget of decisions is spent, the search with the last network scored."""
    from sorry_env.agents.policy import load_policy, read_metadata
    from sorry_env.training.bench.scoring import score

    task = dataclasses.replace(TASKS["2p-selfplay"], name="4p-selfplay", players=4, eval_opponents=("heuristic",) * 3)
    assert expert_iteration.fits(task) is None
    curve = RecordingCurve()
    agent = expert_iteration.train(task, 1, 600, tmp_path, curve, 300)
    steps = [s for s, _ in curve.points]
    assert steps[0] == 0 and steps[-1] >= 600 and steps == sorted(steps)
    assert agent == curve.points[-1][1] and agent.startswith("azsearch:net=") and "simulations=4" in agent
    net = agent.split("net=")[1].split(",")[0]
    meta = read_metadata(net)
    assert meta["num_players"] == 4 and meta["network"]["hidden"] == [32]
    assert meta["training"]["expert_iteration"]["selfplay_decisions"] == steps[-1]
    fresh, _ = load_policy(tmp_path / "net-0.safetensors")
    trained, _ = load_policy(net)
    first = "net.layers.0.weight"
    assert not fresh.state_dict()[first].equal(trained.state_dict()[first])  # the fit moved the network
    # the search plays the 4-player evaluation (4p-heuristic's: three heuristics)
    assert score(agent, TASKS["4p-heuristic"], games=4, workers=1)["games"] == 4


if __name__ == "__main__":
    if sys.argv[1:] == ["--record"]:
        GOLDEN.write_text(json.dumps(definitions(), indent=1) + "\n")
        print(f"recorded {GOLDEN}")
    else:
        sys.exit("usage: python tests/test_bench.py --record")
