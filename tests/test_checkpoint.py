"""Run directories hold data only: resuming and exporting never execute anything from them."""

import base64
import json
import pickle
import subprocess
import sys
import zipfile

import pytest

from sorry_env.training.config import load_config

SMOKE = "configs/smoke.yaml"


class _Payload:
    """Unpickling this creates the marker file: the stand-in for arbitrary code."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return open, (self.marker, "w")


def plant_pickle_checkpoint(run_dir, marker):
    """A run directory as an older sorry-train left it, whose checkpoint.zip carries a
    serialized payload where SB3 keeps cloudpickled parameters."""
    run_dir.mkdir(parents=True)
    cfg = load_config(SMOKE)
    state = {
        "config": cfg,
        "timesteps": 1024,
        "snapshots": [],
        "evaluations": [],
        "imitation": {},
        "last": {"snapshot": -1, "evaluation": -1, "checkpoint": 1024},
        "wall_seconds": 1.0,
    }
    (run_dir / "run_state.json").write_text(json.dumps(state))
    blob = base64.b64encode(pickle.dumps(_Payload(marker))).decode()
    data = {
        "policy_class": {":type:": "<class 'type'>", ":serialized:": blob},
        "learning_rate": {":type:": "<class 'function'>", ":serialized:": blob},
    }
    with zipfile.ZipFile(run_dir / "checkpoint.zip", "w") as z:
        z.writestr("data", json.dumps(data))
        z.writestr("_stable_baselines3_version", "2.9.2")


def run_cli(module, *args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", module, *map(str, args)], capture_output=True, text=True, check=False, timeout=300
    )


@pytest.mark.parametrize("command", ["export", "resume"])
def test_a_pickled_checkpoint_never_runs(tmp_path, command):
    marker = tmp_path / "owned"
    plant_pickle_checkpoint(tmp_path / "runs" / "smoke", marker)
    if command == "export":
        result = run_cli("sorry_env.training.export", tmp_path / "runs" / "smoke", tmp_path / "out.safetensors")
    else:
        result = run_cli(
            "sorry_env.training.train", SMOKE, "--resume", "--runs-dir", tmp_path / "runs", "--timesteps", 2048
        )
    assert not marker.exists(), "the run directory executed code"
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert "checkpoint.zip" in result.stderr and "pickle" in result.stderr


@pytest.fixture(scope="module")
def trained_model(tmp_path_factory):
    """A smoke-config MaskablePPO after one update (so the optimizer has state)."""
    from sorry_env.training.opponents import OpponentPool
    from sorry_env.training.train import make_envs, make_model

    cfg = load_config(SMOKE)
    tb = tmp_path_factory.mktemp("tb")
    model = make_model(cfg, make_envs(cfg, OpponentPool({"random": 1.0}), seed=0), tb)
    model.learn(512)
    return cfg, model


def rebuilt(cfg, tmp_path):
    from sorry_env.training.opponents import OpponentPool
    from sorry_env.training.train import make_envs, make_model

    return make_model(cfg, make_envs(cfg, OpponentPool({"random": 1.0}), seed=5), tmp_path / "tb")


def test_restore_brings_back_weights_optimizer_counters_and_generators(trained_model, tmp_path):
    import random

    import numpy as np
    import torch

    from sorry_env.training import checkpoint

    cfg, model = trained_model
    path = tmp_path / checkpoint.FILE
    checkpoint.save(model, path)
    expected_draws = (np.random.random(3).tolist(), random.random(), torch.rand(3).tolist())
    fresh = rebuilt(cfg, tmp_path)
    checkpoint.restore(fresh, path)
    assert (np.random.random(3).tolist(), random.random(), torch.rand(3).tolist()) == expected_draws
    assert fresh.num_timesteps == model.num_timesteps > 0 and fresh._n_updates == model._n_updates > 0
    for (name, a), b in zip(model.policy.state_dict().items(), fresh.policy.state_dict().values()):
        assert torch.equal(a, b), name
    old, new = model.policy.optimizer.state_dict()["state"], fresh.policy.optimizer.state_dict()["state"]
    assert old.keys() == new.keys() and len(old) > 0
    for index in old:
        for key in old[index]:
            assert torch.equal(torch.as_tensor(old[index][key]), torch.as_tensor(new[index][key])), (index, key)
    actor, steps = checkpoint.load_actor(path, cfg)
    assert steps == model.num_timesteps
    for a, b in zip(actor.state_dict().values(), model.policy.mlp_extractor.actor.state_dict().values()):
        assert torch.equal(a, b)


def test_a_checkpoint_for_another_network_or_with_broken_weights_is_refused(trained_model, tmp_path):
    import torch
    from safetensors.torch import load_file, save_file

    from sorry_env.agents.tensor_file import read_header
    from sorry_env.training import checkpoint

    cfg, model = trained_model
    path = tmp_path / checkpoint.FILE
    checkpoint.save(model, path)
    tensors, (meta, _) = load_file(path), read_header(path)
    bigger = dict(cfg, network={**cfg["network"], "hidden": [128]})
    with pytest.raises(ValueError, match="policy/mlp_extractor.actor.net.layers.0.weight is F32 .*needs F32"):
        checkpoint.restore(rebuilt(bigger, tmp_path), path)
    with pytest.raises(ValueError, match="actor.net.layers.0.weight is F32"):
        checkpoint.load_actor(path, bigger)
    name = "policy/mlp_extractor.actor.net.layers.1.bias"
    broken = dict(tensors, **{name: torch.full_like(tensors[name], float("nan"))})
    save_file(broken, tmp_path / "nan.safetensors", metadata=meta)
    with pytest.raises(ValueError, match=f"{name} holds 1 non-finite"):
        checkpoint.load_actor(tmp_path / "nan.safetensors", cfg)
    (tmp_path / "cut.safetensors").write_bytes(path.read_bytes()[:5000])
    with pytest.raises(ValueError, match="damaged"):
        checkpoint.restore(rebuilt(cfg, tmp_path), tmp_path / "cut.safetensors")


def test_resume_refuses_snapshots_outside_the_pool(tmp_path):
    from sorry_env.training.train import open_run

    cfg = load_config(SMOKE)
    plant_pickle_checkpoint(tmp_path / "smoke", tmp_path / "owned")
    (tmp_path / "smoke" / "checkpoint.zip").unlink()
    (tmp_path / "smoke" / "checkpoint.safetensors").write_bytes(b"")  # never read: the state is checked first
    state = json.loads((tmp_path / "smoke" / "run_state.json").read_text())
    state["snapshots"] = ["../../elsewhere.safetensors"]
    (tmp_path / "smoke" / "run_state.json").write_text(json.dumps(state))
    with pytest.raises(ValueError, match="not a file in"):
        open_run(cfg, tmp_path, resume=True)
