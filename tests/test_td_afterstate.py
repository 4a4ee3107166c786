"""TD(lambda) self-play on afterstate values (training/td_afterstate.py)."""

import numpy as np
import pytest
import torch

from sorry_env.agent import Turn
from sorry_env.agents.policy import PolicyAgent, read_metadata
from sorry_env.board import game
from sorry_env.board.policy_input import sparse_afterstates
from sorry_env.training import td_afterstate as td
from sorry_env.training.sb3_policy import sparse_mlp


def test_lambda_returns_mix_the_next_value_back_towards_the_outcome():
    values = np.array([0.2, -0.4, 0.6], dtype=np.float32)
    g3 = 1.0
    g2 = (1 - 0.5) * 0.6 + 0.5 * g3
    g1 = (1 - 0.5) * -0.4 + 0.5 * g2
    assert td.lambda_returns(values, 1.0, 0.5) == pytest.approx([g1, g2, g3])
    assert td.lambda_returns(values, -1.0, 1.0) == pytest.approx([-1, -1, -1])  # lambda 1: the outcome
    assert td.lambda_returns(values, 0.0, 0.0) == pytest.approx([-0.4, 0.6, 0.0])  # lambda 0: TD(0)


def test_a_finished_game_scores_every_seat_of_the_winning_side_as_a_win():
    for rules, winners in [("hasbro2003_teams", [1.0, -1.0, 1.0, -1.0]), ("hasbro2003", [1.0, -1.0, -1.0, -1.0])]:
        trajectories = td.Trajectories(1, 0.7, game.rules_array(rules))
        for seat in range(4):
            trajectories.add(0, seat, np.zeros(1, np.int16), np.ones(1, np.float32), 0.0)
        trajectories.finish(0, 0)  # seat 0 made the winning move
        assert [target for *_, target in trajectories.take()] == winners, rules
    trajectories = td.Trajectories(1, 0.7, game.rules_array("hasbro2003"))
    trajectories.add(0, 0, np.zeros(1, np.int16), np.ones(1, np.float32), 0.5)
    trajectories.finish(0, -2)  # the turn limit: no winner
    assert [target for *_, target in trajectories.take()] == [0.0]


def test_choose_takes_each_games_best_move_or_explores_within_the_game():
    scores = np.array([0.1, 0.5, 0.5, -1.0, 2.0, 0.3], dtype=np.float32)
    rows = np.array([0, 0, 0, 1, 1, 2])
    rng = np.random.default_rng(0)
    assert td.choose(scores, rows, 3, 0.0, rng).tolist() == [1, 4, 5]  # ties: the lowest index
    for _ in range(20):
        picked = td.choose(scores, rows, 3, 1.0, rng)
        assert rows[picked].tolist() == [0, 1, 2]


def test_a_short_run_writes_a_policy_that_plays_and_says_how_it_was_made(tmp_path):
    out = tmp_path / "td.safetensors"
    args = td.parse_args(
        [
            "--decisions",
            "3000",
            "--games",
            "16",
            "--update-samples",
            "512",
            "--hidden",
            "32",
            "--eval-every",
            "100000",
            "--eval-games",
            "4",
            "--eval-opponents",
            "random",
            "--lr",
            "0.001",
            "--lr-final",
            "0.0001",
            "--out",
            str(out),
        ]
    )
    result = td.train(args)
    assert result["decisions"] >= 3000 and result["games"] > 0
    assert 1e-4 <= result["last_lr"] < 1e-3  # the rate fell towards lr_final as the decisions went by
    meta = read_metadata(out)
    assert meta["training"]["settings"]["lr_final"] == 1e-4
    assert meta["training"]["algorithm"] == td.ALGORITHM and meta["training"]["from"] == "random weights"
    assert meta["training"]["decisions"] == result["decisions"] and meta["training"]["cpu_seconds"] > 0
    assert [row["decisions"] for row in meta["training"]["curve"]] == [0, result["decisions"]]
    assert (tmp_path / "td-learning-curve.png").stat().st_size > 0
    # The file plays the trainer's greedy move (compared only where the best two scores differ
    # by more than float noise between the trainer's sparse and the agent's dense products).
    agent = PolicyAgent(out)
    rules = game.rules_array("hasbro2003")
    rng = np.random.default_rng(1)
    compared = 0
    for seed in range(30):
        state = game.new_state("hasbro2003", 2, seed=seed)
        for _ in range(40 + seed):  # into the middle of a game, where moves differ
            legal = game.legal_actions(state, "hasbro2003")
            if game.winner(state) is not None:
                break
            state = game.step(state, "hasbro2003", int(rng.choice(legal)))
        if game.winner(state) is not None or len(game.legal_actions(state, "hasbro2003")) < 2:
            continue
        (columns, values, offsets), _, actions = sparse_afterstates(state[None], rules)
        with torch.no_grad():
            scores = sparse_mlp(agent.actor.net, (columns, values, offsets))[:, 0].numpy()
        move = agent.act(Turn.from_state(state, "hasbro2003", rng))
        assert move in actions
        top = np.sort(scores)[::-1]
        if len(top) > 1 and top[0] - top[1] > 1e-3:
            assert move == actions[np.argmax(scores)]
            compared += 1
    assert compared >= 10


def test_sorry_train_runs_a_td_config_and_refuses_mistakes_before_any_work(tmp_path, capsys):
    from sorry_env.training.train import main as sorry_train

    config = tmp_path / "td.yaml"
    config.write_text(
        "algorithm: td_lambda\nname: tiny\ndecisions: 2000\nhidden: [16]\ngames: 8\nupdate_samples: 256\n"
        "eval_every: 100000\neval_games: 2\neval_opponents: [random]\n"
    )
    sorry_train([str(config), "--runs-dir", str(tmp_path / "runs"), "--timesteps", "1000"])
    meta = read_metadata(tmp_path / "runs" / "tiny" / "policy.safetensors")
    assert 1000 <= meta["training"]["decisions"] < 2000 and meta["network"]["hidden"] == [16]
    assert meta["name"].startswith("tiny@") and (tmp_path / "runs" / "tiny" / "policy-learning-curve.png").is_file()
    with pytest.raises(SystemExit) as exit_info:  # the same run again would overwrite its file
        sorry_train([str(config), "--runs-dir", str(tmp_path / "runs")])
    assert exit_info.value.code == 2 and "exists" in capsys.readouterr().err
    for line, message in [
        ("lam: 1.5", "td.yaml: lam must be in [0, 1], got 1.5"),
        ("seed: 4294967296", "td.yaml: seed must be in [0, 2147483647]"),
        ("lam: fast", "td.yaml: lam must be a number, got 'fast'"),
        ("hidden: [0]", "td.yaml: hidden must be a list of at most 16 layers"),
        ("lamda: 0.5", "td.yaml: unknown key 'lamda'"),
        ("eval_opponents: [heurstic]", "unknown agent 'heurstic'"),
        ("name: ../outside", "td.yaml: name must be a plain directory name"),
    ]:
        name = "" if line.startswith("name:") else "name: bad\n"
        config.write_text(f"algorithm: td_lambda\n{name}{line}\n")
        with pytest.raises(SystemExit) as exit_info:
            sorry_train([str(config), "--runs-dir", str(tmp_path / "runs")])
        err = capsys.readouterr().err
        assert exit_info.value.code == 2 and message in err and "Traceback" not in err, line
        assert not (tmp_path / "runs" / "bad").exists() and not (tmp_path / "outside").exists()
