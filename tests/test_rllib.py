"""The Ray RLlib backend (training/rllib_backend.py): config checks, the MultiAgentEnv adapter,
an unreachable cluster address, a tiny local run with resume and export, and a two-node run
on one machine (ray.cluster_utils.Cluster)."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

pytest.importorskip("ray.rllib")

from sorry_env.agents import make_agent
from sorry_env.training import rllib_backend as rb
from sorry_env.training.export import export_actor
from sorry_env.training.match import match

SMOKE = Path(__file__).resolve().parents[1] / "configs" / "rllib-smoke.yaml"


def write_config(tmp_path, **changes) -> Path:
    cfg = yaml.safe_load(SMOKE.read_text())
    cfg.update(changes)
    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"ppo": {"lr": -1}}, "ppo.lr"),
        ({"ppo": {"learning_rate": 1e-3}}, "unknown key ppo.'learning_rate'"),
        ({"opponents": {"mix": {"nobody": 1}}}, "opponents.mix"),
        ({"opponents": {"mix": {"self": 0}}}, "positive sum"),
        ({"game": {"num_players": 5}}, "game.num_players"),
        ({"game": {"rules": "monopoly"}}, "game.rules"),
        ({"env_runners": {"num_env_runners": -1}}, "num_env_runners"),
        ({"ppo": {"minibatch_size": 10_000}}, "minibatch_size"),
        ({"colour": "red"}, "unknown key 'colour'"),
        # read, merged and type-checked by training.config's functions, as sorry-train's configs are
        ({"ppo": 3}, "cfg.yaml: ppo must be a mapping"),
        ({"ppo": {"entropy_coeff": float("inf")}}, "ppo.entropy_coeff must be a number"),
        ({"game": {"rules": "hasbro2003_teams", "num_players": 2}}, "cfg.yaml: game:"),
        ({"network": {"hidden": []}}, "network.hidden must be a non-empty list"),
        ({"env_runners": {"num_cpus_per_env_runner": "one"}}, "num_cpus_per_env_runner must be a number"),
    ],
)
def test_bad_config_is_refused_naming_the_key(tmp_path, changes, message):
    with pytest.raises(ValueError, match=message.replace(".", r"\.").replace("'", "'")):
        rb.load_config(write_config(tmp_path, **changes))


def test_a_shipped_config_loads_by_name_and_fractional_cpus_are_kept(tmp_path):
    assert rb.load_config("rllib-smoke")["name"] == "rllib-smoke"  # configs/rllib-smoke.yaml, from any folder
    cfg = rb.load_config(write_config(tmp_path, env_runners={"num_cpus_per_env_runner": 0.5}))
    assert cfg["env_runners"]["num_cpus_per_env_runner"] == 0.5
    assert cfg["env_runners"]["rollout_fragment_length"] == rb.RLLIB.defaults["env_runners"]["rollout_fragment_length"]


@pytest.mark.parametrize("players, mix", [(2, {"self": 1.0}), (4, {"heuristic": 1.0}), (3, {"self": 1, "random": 1})])
def test_env_adapter_exposes_only_learning_seats_and_ends_with_rewards(players, mix):
    env = rb.SorryMultiAgentEnv({"num_players": players, "mix": mix, "seed": 3})
    rng = np.random.default_rng(0)
    for _game_index in range(3):
        obs, _ = env.reset()
        learners = set(env.agents)
        if "heuristic" in mix:
            assert len(learners) == 1  # every other seat is scripted
        elif mix == {"self": 1.0}:
            assert learners == set(env.possible_agents)
        seen = set()
        while True:
            assert len(obs) == 1
            ((agent, o),) = obs.items()
            assert agent in learners and o["action_mask"].sum() > 0
            seen.add(agent)
            action = int(rng.choice(np.flatnonzero(o["action_mask"])))
            obs, rewards, terminated, truncated, _ = env.step({agent: action})
            if terminated["__all__"] or truncated["__all__"]:
                break
        assert set(rewards) == seen and obs == {}
        if terminated["__all__"]:
            assert all(r in (1.0, -1.0) for r in rewards.values())
            # a seat the learner did not play may have won: then every learning seat got -1
            assert sum(r == 1.0 for r in rewards.values()) <= 1 or players == 4


def test_unreachable_address_fails_within_seconds(tmp_path):
    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    start = time.perf_counter()
    with pytest.raises(SystemExit):
        rb.main([str(write_config(tmp_path)), "--address", f"127.0.0.1:{port}", "--runs-dir", str(tmp_path / "runs")])
    assert time.perf_counter() - start < 10
    assert not (tmp_path / "runs").exists()  # nothing half-written
    with pytest.raises(ValueError, match="HOST:PORT"):
        rb.check_address("no-port-here")


def test_resume_refuses_a_directory_without_the_marker(tmp_path):
    cfg = rb.load_config(write_config(tmp_path))
    (tmp_path / "runs" / cfg["name"] / "checkpoint").mkdir(parents=True)
    with pytest.raises(ValueError, match="not an RLlib run directory"):
        rb.open_run(cfg, tmp_path / "runs", resume=True, trust_run_dir=True)


def plant_marker(tmp_path, cfg, snapshots):
    run_dir = tmp_path / "runs" / cfg["name"]
    (run_dir / "checkpoint").mkdir(parents=True)
    (run_dir / "checkpoint" / "rllib_checkpoint.json").write_text("{}")
    (run_dir / "pool").mkdir()
    (run_dir / "pool" / "snapshot_1.safetensors").write_bytes(b"")
    state = {"config": cfg, "iteration": 1, "env_steps": 200, "snapshots": snapshots, "wall_seconds": 1.0}
    (run_dir / rb.MARKER).write_text(json.dumps({**state, "iterations": []}))


def test_resume_needs_trust_run_dir(tmp_path):
    """RLlib checkpoints are pickles: --resume without --trust-run-dir refuses, saying why."""
    cfg = rb.load_config(write_config(tmp_path))
    plant_marker(tmp_path, cfg, ["pool/snapshot_1.safetensors"])
    with pytest.raises(ValueError, match="runs code"):
        rb.open_run(cfg, tmp_path / "runs", resume=True)
    assert rb.open_run(cfg, tmp_path / "runs", resume=True, trust_run_dir=True).state["iteration"] == 1
    result = subprocess.run(
        [sys.executable, "-m", "sorry_env.training.rllib_backend", write_config(tmp_path), "--resume"]
        + ["--runs-dir", tmp_path / "runs"],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert result.returncode == 2 and "--trust-run-dir" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("snapshot", ["../../elsewhere.safetensors", "/etc/passwd", "pool/../rllib_run.json", 3])
def test_the_markers_snapshots_stay_in_the_pool(tmp_path, snapshot):
    cfg = rb.load_config(write_config(tmp_path))
    plant_marker(tmp_path, cfg, ["pool/snapshot_1.safetensors", snapshot])
    with pytest.raises(ValueError, match="not a file in"):
        rb.open_run(cfg, tmp_path / "runs", resume=True, trust_run_dir=True)


@pytest.fixture
def local_ray():
    import ray

    ray.init(  # "local": a Ray of this test's own, never a cluster another process started on this machine
        address="local",
        num_cpus=2,
        include_dashboard=False,
        logging_level="ERROR",
        runtime_env={"env_vars": {"OMP_NUM_THREADS": "1"}},
    )
    yield
    ray.shutdown()


@pytest.mark.ci_slow  # over 10 s: CI runs it after the README's test command
def test_train_resume_export_and_play(tmp_path, local_ray):
    cfg = rb.load_config(write_config(tmp_path))
    run = rb.train(cfg, rb.open_run(cfg, tmp_path / "runs", resume=False))
    assert run.state["iteration"] == 1 and run.state["env_steps"] >= 200
    assert len(run.state["snapshots"]) == 1
    # the "kill": a new session resumes from the directory and the counter continues
    cfg["budget"]["iterations"] = 2
    resumed = rb.open_run(cfg, tmp_path / "runs", resume=True, trust_run_dir=True)
    assert resumed.state["iteration"] == 1
    rb.train(cfg, resumed, resume=True)
    state = json.loads((run.dir / rb.MARKER).read_text())
    assert state["iteration"] == 2 and [i["iteration"] for i in state["iterations"]] == [1, 2]
    agent = make_agent(str(run.policy_path), seed=0)
    assert agent.metadata["network"]["kind"] == "mlp" and agent.metadata["training"]["iteration"] == 2
    assert 0 <= match(run.policy_path, "random", 2, cfg["game"]["rules"], games=2, seed=0)["win_rate"] <= 1
    snapshot = make_agent(str(run.dir / state["snapshots"][0]))
    assert snapshot.metadata["name"].endswith("@it1")


@pytest.mark.slow  # ~65 s on the shared 2-core machine (two Ray nodes start); run with -m slow
def test_two_node_cluster_runs_env_runners_on_both_nodes(tmp_path):
    import ray
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    try:
        cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        ray.shutdown()  # whatever Ray this process had: the test connects to its own cluster
        ray.init(address=cluster.address, logging_level="ERROR")
        cfg = rb.load_config(write_config(tmp_path))
        cfg["env_runners"]["num_env_runners"] = 2  # one CPU each: one runner per node
        algo = rb.build_algorithm(cfg)
        try:
            nodes = rb.runner_node_ids(algo)
            assert len(nodes) == 2 and len(set(nodes)) == 2
            result = algo.train()
            assert result["env_runners"]["num_env_steps_sampled"] >= 200
            out = tmp_path / "two-node.safetensors"
            export_actor(rb.module_actor(algo.get_module(rb.MODULE_ID), cfg), out, cfg, "two-node", {})
            # the export is the module's actor, tensor for tensor: same logits on a real observation
            import torch

            env = rb.SorryMultiAgentEnv({"num_players": 2, "mix": {"self": 1}})
            obs, _ = env.reset(seed=0)
            observation = next(iter(obs.values()))["observation"][None]
            with torch.no_grad():
                module_logits = algo.get_module(rb.MODULE_ID).pi(torch.as_tensor(observation))
                file_logits = make_agent(str(out)).actor(torch.as_tensor(observation))
            assert torch.allclose(module_logits, file_logits)
        finally:
            algo.stop()
    finally:
        ray.shutdown()
        cluster.shutdown()
    shutil.rmtree(tmp_path, ignore_errors=True)


def test_snapshot_opponents_come_from_policy_file_bytes(tmp_path):
    from sorry_env.agents.policy import Actor

    cfg = rb.load_config(write_config(tmp_path))
    actor = Actor("mlp", cfg["network"]["hidden"], "relu", cfg["game"]["rules"])
    path = tmp_path / "snap.safetensors"
    export_actor(actor, path, cfg, "snap", {})
    env = rb.SorryMultiAgentEnv({"num_players": 2, "mix": {"snapshots": 1.0}, "seed": 1})
    env.reset()
    assert len(env.agents) == 2  # no snapshot yet: the learner plays both seats
    env.set_snapshots([("snap", path.read_bytes())])
    obs, _ = env.reset()
    assert len(env.agents) == 1 and list(obs) == env.agents
    (frozen,) = env.frozen.values()
    assert frozen.metadata["name"] == "snap" and frozen.sample
