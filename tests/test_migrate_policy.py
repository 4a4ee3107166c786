"""sorry_env.training.migrate_policy: v0 policy files carried over to this layout compute exactly the
same outputs. tests/data/v0_policy_outputs.json was recorded with the v0 code (commit fe37363)
and the shipped v0 files: real positions (random games) as state dicts, and each network's
logits of the legal actions there."""

import json
import pathlib

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

from sorry_env.agents.policy import Actor, PolicyAgent, load_policy, read_metadata, save_policy
from sorry_env.board import game
from sorry_env.board.observation import OBS_SIZE
from sorry_env.board.policy_input import policy_input
from sorry_env.board.state_io import state_from_dict
from sorry_env.training import migrate_policy
from sorry_env.version import LAYOUT_VERSION

DATA = json.loads((pathlib.Path(__file__).parent / "data" / "v0_policy_outputs.json").read_text())
V0_OBS = 1151


@pytest.mark.parametrize("name", sorted(DATA))
def test_migrated_shipped_files_compute_the_v0_outputs(name):
    actor, meta = load_policy(f"checkpoints/{name}.safetensors")
    assert meta["layout"]["version"] == LAYOUT_VERSION and meta["migrated"]["from"] == "sorry_v0"
    rules = game.get_rules(DATA[name]["rules"])
    r = game.rules_array(rules)
    assert len(DATA[name]["cases"]) >= 10
    for case in DATA[name]["cases"]:
        state = state_from_dict(case["state"], rules, 3)
        legal = game.legal_actions(state, rules)
        assert legal.tolist() == case["legal"]
        x = policy_input(state, r, game.to_move(state))
        with torch.no_grad():
            logits = actor(torch.from_numpy(x[None]))[0].numpy()
        np.testing.assert_allclose(logits[legal], case["logits"], rtol=0, atol=1e-5)


def test_the_added_inputs_have_zero_weights_and_the_rest_is_kept():
    weight = load_file("checkpoints/sorry-2p.safetensors")["net.layers.0.weight"]
    assert weight.shape[1] == OBS_SIZE
    assert torch.count_nonzero(weight[:, V0_OBS:]) == 0
    assert torch.count_nonzero(weight[:, :V0_OBS]) > 0.5 * weight[:, :V0_OBS].numel()


def _v0_file(path, kind):
    """A v0 policy file of any shape: a fresh actor written as the v0 code wrote it."""
    torch.manual_seed(0)
    actor = Actor(kind, [16], "relu", "hasbro2003")
    save_policy(
        path,
        actor,
        rules="hasbro2003",
        num_players=2,
        network={"kind": kind, "hidden": [16], "activation": "relu"},
        name="t",
    )
    tensors = load_file(str(path))
    tensors["net.layers.0.weight"] = tensors["net.layers.0.weight"][:, :V0_OBS].contiguous()
    meta = read_metadata(path)
    meta["layout"] = {"version": "sorry_v0", "obs_size": V0_OBS, "state_size": 139, "n_actions": 142}
    del meta["rules"]["fire_ice"]  # v0 Rules had no such field
    from safetensors.torch import save_file

    save_file(tensors, str(path), metadata={"sorry_policy": json.dumps(meta)})
    return tensors


@pytest.mark.parametrize("kind", ["mlp", "afterstate"])
def test_any_v0_file_migrates_and_plays(tmp_path, kind):
    old = tmp_path / "old.safetensors"
    tensors = _v0_file(old, kind)
    with pytest.raises(ValueError, match="layout"):
        PolicyAgent(old)
    migrate_policy.main([str(old), str(tmp_path / "new.safetensors")])
    agent = PolicyAgent(tmp_path / "new.safetensors")
    agent.check_game("hasbro2003", 2)
    state = game.new_state("hasbro2003", 2, seed=4)
    x = policy_input(state, game.rules_array("hasbro2003"), game.to_move(state))
    first = tensors["net.layers.0.weight"]
    with torch.no_grad():
        hidden_old = torch.relu(torch.from_numpy(x[None, :V0_OBS]) @ first.T + tensors["net.layers.0.bias"])
        hidden_new = torch.relu(agent.actor.net.layers[0](torch.from_numpy(x[None, :OBS_SIZE])))
    assert torch.equal(hidden_old, hidden_new)


def test_refusals(tmp_path, capsys):
    with pytest.raises(SystemExit):
        migrate_policy.main(["checkpoints/sorry-2p.safetensors", str(tmp_path / "x.safetensors")])
    assert "already on layout" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        migrate_policy.main([str(tmp_path / "missing.safetensors"), str(tmp_path / "x.safetensors")])
    assert "does not exist" in capsys.readouterr().err
    with pytest.raises(ValueError, match="first layer reads 7 inputs"):
        migrate_policy.input_index("sorry_v0", 7)
    with pytest.raises(ValueError, match="no migration from layout 'sorry_v9'"):
        migrate_policy.input_index("sorry_v9", V0_OBS)
