"""Policy files and the policy agent: legal play, and clear refusals of files that do not fit."""

import json
import pathlib

import numpy as np
import pytest
import torch
from float_margins import near_tie  # tests/ is on sys.path (pytest rootdir import mode)
from safetensors.torch import save_file

from sorry_env.agents import Turn, make_agent
from sorry_env.agents.policy import Actor, PolicyAgent, masked_logits, save_policy
from sorry_env.board import engine as E
from sorry_env.board import game
from sorry_env.board.policy_input import INPUT_SIZE, policy_input


def write_policy(path, num_players=2, rules="hasbro2003", kind="afterstate", seed=0):
    """An untrained policy file."""
    torch.manual_seed(seed)
    network = {"kind": kind, "hidden": [32], "activation": "relu"}
    actor = Actor(kind, [32], "relu", rules)
    save_policy(path, actor, rules=rules, num_players=num_players, network=network, name="test")
    return path


def play_game(agents_by_seat, rules, num_players, seed):
    """One game; asserts every move is legal. Returns the number of moves."""
    state = game.new_state(rules, num_players, seed=seed)
    rng = np.random.default_rng(seed)
    moves = 0
    while E.is_running(state, 2000):
        seat = int(E.to_move(state))
        legal = game.legal_actions(state, rules)
        action = agents_by_seat[seat].act(Turn.from_state(state, rules, rng, legal))
        assert action in legal
        state = game.step(state, rules, action)
        moves += 1
    return moves


@pytest.mark.parametrize(
    "num_players,sample,kind", [(2, False, "afterstate"), (4, True, "afterstate"), (3, False, "mlp"), (2, True, "mlp")]
)
def test_policy_agent_plays_only_legal_moves(tmp_path, num_players, sample, kind):
    path = write_policy(tmp_path / "p.safetensors", num_players, kind=kind)
    seats = game.seats_for(num_players)
    agents = {s: PolicyAgent(path, seed=s, sample=sample) for s in seats}
    for g in range(3):
        assert play_game(agents, "hasbro2003", num_players, seed=g) > 0


def test_make_agent_loads_a_policy_file(tmp_path):
    path = write_policy(tmp_path / "p.safetensors")
    agent = make_agent(str(path), seed=1)
    assert isinstance(agent, PolicyAgent) and agent.num_players == 2


@pytest.mark.parametrize("kind", ["afterstate", "mlp"])
def test_argmax_is_the_best_legal_logit(tmp_path, kind):
    agent = PolicyAgent(write_policy(tmp_path / "p.safetensors", kind=kind))
    rules = game.rules_array("hasbro2003")
    inputs, masks = [], []
    rng = np.random.default_rng(0)
    for seed in range(20):
        state = game.new_state("hasbro2003", 2, seed=seed)
        for _ in range(seed * 3):  # a few random moves into the game
            state = game.step(state, "hasbro2003", rng.choice(game.legal_actions(state, "hasbro2003")))
        inputs.append(policy_input(state, rules, game.to_move(state)))
        masks.append(game.legal_mask(state, "hasbro2003").astype(bool))
    inputs, masks = np.array(inputs), np.array(masks)
    assert inputs.shape[1] == INPUT_SIZE
    with torch.no_grad():
        logits = masked_logits(agent.actor(torch.as_tensor(inputs)), masks).numpy()
    chosen = agent.act_batch(inputs, masks)
    assert masks[np.arange(len(masks)), chosen].all()
    np.testing.assert_array_equal(chosen, logits.argmax(axis=1))


@torch.no_grad()
def test_afterstate_logits_score_the_resulting_positions(tmp_path):
    """The logit of each legal move is the scorer's value of the position after that move."""
    agent = PolicyAgent(write_policy(tmp_path / "p.safetensors"))
    state = game.new_state("hasbro2003", 2, seed=5)
    while len(game.legal_actions(state, "hasbro2003")) < 2:
        state = game.step(state, "hasbro2003", game.legal_actions(state, "hasbro2003")[0])
    rules = game.rules_array("hasbro2003")
    me = game.to_move(state)
    logits = agent.actor(torch.as_tensor(policy_input(state, rules, me)[None]))[0]
    for action in game.legal_actions(state, "hasbro2003"):
        after = game.after_move(state, "hasbro2003", action)
        obs = policy_input(after, rules, me)[None, : agent.actor.net.layers[0].in_features]
        assert float(agent.actor.net(torch.as_tensor(obs))[0, 0]) == pytest.approx(float(logits[action]), abs=1e-5)


def test_other_player_count_is_refused_before_play(tmp_path):
    agent = PolicyAgent(write_policy(tmp_path / "p4.safetensors", num_players=4))
    with pytest.raises(ValueError, match="trained for 4 players, not 2"):
        agent.check_game(game.get_rules("hasbro2003"), 2)


def test_other_rules_are_refused(tmp_path):
    agent = PolicyAgent(write_policy(tmp_path / "p.safetensors", rules="parker1958"))
    with pytest.raises(ValueError, match="trained for rules 'parker1958'"):
        agent.check_game(game.get_rules("hasbro2003"), 2)


def test_other_layout_is_refused_at_load(tmp_path):
    path = write_policy(tmp_path / "p.safetensors")
    from safetensors import safe_open
    from safetensors.torch import load_file

    with safe_open(str(path), framework="pt") as f:
        meta = json.loads(f.metadata()["sorry_policy"])
    meta["layout"]["version"] = "sorry_v9"
    save_file(load_file(str(path)), str(tmp_path / "old.safetensors"), metadata={"sorry_policy": json.dumps(meta)})
    with pytest.raises(ValueError, match="made for input/action layout .*'sorry_v9'"):
        PolicyAgent(tmp_path / "old.safetensors")


def test_files_that_are_not_policies_are_refused(tmp_path):
    (tmp_path / "junk.safetensors").write_bytes(b"not a safetensors file at all")
    with pytest.raises(ValueError, match="not a safetensors policy file"):
        PolicyAgent(tmp_path / "junk.safetensors")
    save_file({"w": torch.zeros(2)}, str(tmp_path / "plain.safetensors"))
    with pytest.raises(ValueError, match="without sorry_policy metadata"):
        PolicyAgent(tmp_path / "plain.safetensors")
    with pytest.raises(ValueError, match="does not exist"):
        PolicyAgent(tmp_path / "missing.safetensors")


def test_save_policy_is_the_atomic_shareable_writer(tmp_path, monkeypatch):
    """One writer for policy and value files: readable by all, no temporary file left, and a
    failed write leaves the old file untouched (export, value_fit, the migration and Express
    policy files all go through sorry_env.agents.tensor_file.save_atomic)."""
    import os

    import sorry_env.agents.policy
    import sorry_env.agents.tensor_file

    path = write_policy(tmp_path / "p.safetensors")
    assert os.stat(path).st_mode & 0o777 == 0o644 and os.listdir(tmp_path) == ["p.safetensors"]
    before = path.read_bytes()

    def broken(tensors, filename, metadata):
        with open(filename, "wb") as f:
            f.write(b"half a file")
        raise OSError("disk full")

    monkeypatch.setattr(sorry_env.agents.tensor_file, "save_file", broken)
    with pytest.raises(OSError, match="disk full"):
        write_policy(path, seed=1)
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["p.safetensors"]
    import sorry_env.training.export
    import sorry_env.training.game_ppo
    import sorry_env.training.migrate_policy
    import sorry_env.training.value_fit

    for module in (
        sorry_env.training.export,
        sorry_env.training.value_fit,
        sorry_env.training.migrate_policy,
        sorry_env.training.game_ppo,
        sorry_env.agents.policy,
    ):
        assert "os.replace" not in pathlib.Path(module.__file__).read_text()  # they go through save_atomic


@pytest.mark.float_kernels
def test_single_decisions_choose_what_the_batch_chooses(batch_gaps):
    """act (the afterstate fast path) picks act_batch's argmax, exact ties included, on positions
    of games the shipped policy plays against itself, where the choice does not hang on float
    rounding (tests/float_margins.py: the two paths round differently on some CPUs)."""
    agent = PolicyAgent("checkpoints/sorry-2p.safetensors")
    rules = game.rules_array("hasbro2003")
    rng = np.random.default_rng(0)
    checked = 0
    for seed in range(6):
        state = game.new_state("hasbro2003", 2, seed=seed)
        while game.winner(state) is None:
            legal = game.legal_actions(state, "hasbro2003")
            turn = Turn.from_state(state, "hasbro2003", rng, legal)
            mask = np.zeros(agent.actor.n_actions, dtype=bool)
            mask[legal] = True
            batch = agent.act_batch(policy_input(state, rules, game.to_move(state))[None], mask[None])[0]
            action = agent.act(turn)
            if not near_tie(batch_gaps[-1]):
                assert action == batch
                checked += 1
            state = game.step(state, "hasbro2003", action)
    assert checked > 500
