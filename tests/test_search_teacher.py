"""Distillation of a search teacher: the teacher's data is what the engine and mcts say, the
student moves towards the teacher's choices, and saved teacher data is reused only for the
settings that made it."""

import copy

import numpy as np
import pytest
import torch

from sorry_env.agents.montecarlo import monte_carlo_choice, monte_carlo_values
from sorry_env.agents.policy import Actor
from sorry_env.agents.value_net import NO_NET
from sorry_env.board import engine as E
from sorry_env.board import game
from sorry_env.board.evaluation import DEFAULT_WEIGHTS
from sorry_env.training import search_teacher
from sorry_env.training.config import DEFAULTS


def test_teacher_rows_hold_values_of_the_legal_moves_and_the_mcts_choice_is_their_best():
    states, values, counts, games = search_teacher.collect(
        "hasbro2003", 2, 40, iterations=30, rollout_plies=4, value=None, seed=3
    )
    rules = game.rules_array("hasbro2003")
    buf = np.empty(game.num_actions("hasbro2003"), dtype=np.int64)
    assert games >= 1 and (counts > 1).all()  # only real choices are kept
    for k in range(len(counts)):
        state = states[k]
        assert E.card_index(state) >= 0 and E.winner(state) < 0
        assert (state[E.DECK : E.DECK + 11] == 0).all()  # public: no draw-pile order
        assert E.legal_actions(state, rules, buf) == counts[k]
        assert ((values[k, : counts[k]] >= 0) & (values[k, : counts[k]] <= 1)).all()
        assert (values[k, counts[k] :] == 0).all()
    # The mcts agent's choice is the move with the best of these values.
    k = int(np.argmax(counts))
    n = E.legal_actions(states[k], rules, buf)
    row = np.empty(n)
    monte_carlo_values(states[k], rules, DEFAULT_WEIGHTS.array(), buf[:n], n, 123, 30, 4, 0.0, *NO_NET, row)
    choice = monte_carlo_choice(states[k], rules, DEFAULT_WEIGHTS.array(), buf[:n], n, 123, 30, 4, 0.0, *NO_NET)
    assert choice == buf[np.argmax(row)]


def test_distillation_moves_the_student_towards_the_teacher():
    states, values, counts, _ = search_teacher.collect(
        "hasbro2003", 2, 300, iterations=30, rollout_plies=4, value=None, seed=5
    )
    torch.manual_seed(0)
    actor = Actor("afterstate", [32], "relu", "hasbro2003")
    rules = game.rules_array("hasbro2003")
    first = search_teacher.distil(
        actor,
        rules,
        states,
        values,
        counts,
        epochs=1,
        batch_size=64,
        lr=1e-3,
        temperature=0.01,
        seed=0,
        log=lambda *_: None,
    )
    last = search_teacher.distil(
        actor,
        rules,
        states,
        values,
        counts,
        epochs=6,
        batch_size=64,
        lr=1e-3,
        temperature=0.01,
        seed=0,
        log=lambda *_: None,
    )
    assert last["loss"] < first["loss"] and last["agreement"] > first["agreement"]


def test_saved_teacher_data_is_reused_only_for_the_same_settings(tmp_path):
    cfg = copy.deepcopy(DEFAULTS)
    cfg["distillation"].update(decisions=20, iterations=10, rollout_plies=2, workers=1)
    path = tmp_path / "teacher.npz"
    said = []
    first = search_teacher.teacher_data(cfg, path, log=said.append)
    again = search_teacher.teacher_data(cfg, path, log=said.append)
    np.testing.assert_array_equal(first["states"], again["states"])
    assert "teacher decisions from" in said[-1]
    cfg["distillation"]["epochs"] = 9  # training settings do not change the games
    search_teacher.teacher_data(cfg, path, log=said.append)
    assert "teacher decisions from" in said[-1]
    cfg["distillation"]["iterations"] = 12
    search_teacher.teacher_data(cfg, path, log=said.append)
    assert any("made with other settings" in line for line in said)


def small_teacher(monkeypatch, decisions):
    """A config of a cheap teacher in chunks of 10 decisions."""
    monkeypatch.setattr(search_teacher, "CHUNK", 10)
    cfg = copy.deepcopy(DEFAULTS)
    cfg["distillation"].update(decisions=decisions, iterations=10, rollout_plies=2, workers=1)
    return cfg


@pytest.mark.ci_slow  # over 10 s: CI runs it after the README's test command
def test_teacher_games_do_not_depend_on_the_worker_count(tmp_path, monkeypatch):
    cfg = small_teacher(monkeypatch, 25)
    one = search_teacher.teacher_data(cfg, tmp_path / "one.npz", log=lambda *_: None)
    cfg["distillation"]["workers"] = 2
    two = search_teacher.teacher_data(cfg, tmp_path / "two.npz", log=lambda *_: None)
    assert len(one["counts"]) == 25
    for key in ("states", "values", "counts"):
        np.testing.assert_array_equal(one[key], two[key])


def test_a_shorter_saved_set_is_extended_into_the_longer_sets_games(tmp_path, monkeypatch):
    # The chunks of a set are the first chunks of any longer set of the same settings, so a
    # saved shorter set is kept and only the remaining chunks are played.
    cfg = small_teacher(monkeypatch, 30)
    whole = search_teacher.teacher_data(cfg, tmp_path / "whole.npz", log=lambda *_: None)
    cfg["distillation"]["decisions"] = 20
    search_teacher.teacher_data(cfg, tmp_path / "grown.npz", log=lambda *_: None)
    cfg["distillation"]["decisions"] = 30
    said = []
    grown = search_teacher.teacher_data(cfg, tmp_path / "grown.npz", log=said.append)
    assert any("extending the 20 teacher decisions" in line for line in said)
    assert any("10 decisions of montecarlo" in line for line in said)  # only the rest played
    for key in ("states", "values", "counts", "games", "made_by"):
        np.testing.assert_array_equal(whole[key], grown[key])
    # A shorter set ending inside a chunk (its last chunk cut short) is played again.
    cfg["distillation"]["decisions"] = 15
    search_teacher.teacher_data(cfg, tmp_path / "part.npz", log=lambda *_: None)
    cfg["distillation"]["decisions"] = 30
    said.clear()
    again = search_teacher.teacher_data(cfg, tmp_path / "part.npz", log=said.append)
    assert any("made with other settings" in line for line in said)
    np.testing.assert_array_equal(whole["states"], again["states"])
