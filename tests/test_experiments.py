"""The analysis scripts in experiments/: paired games credit the right seat, value iteration's
backup is the exact expectation over the next card, and the scripts run end to end."""

import dataclasses
import functools
import importlib.util
import pathlib
import runpy
import sys

import numpy as np
import pytest
import torch

from sorry_env import PRESETS, state_from_dict
from sorry_env.agents.policy import MLP
from sorry_env.agents.value_net import pack_mlp
from sorry_env.board import engine as E
from sorry_env.board import game
from sorry_env.board.evaluation import DEFAULT_WEIGHTS, evaluate, win_chance
from sorry_env.board.geometry import HOME
from sorry_env.board.observation import OBS_SIZE
from sorry_env.board.policy_input import public_state
from sorry_env.board.rules import CARD_INDEX, N_CARDS
from sorry_env.board.simulate import card_chances

EXPERIMENTS = pathlib.Path(__file__).parent.parent / "experiments"


@functools.cache  # one module per script: its compiled functions are not cached on disk
def load(name):
    spec = importlib.util.spec_from_file_location(name, EXPERIMENTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_script(capsys, script, *args):
    """`python experiments/SCRIPT ARGS`, run in this process: (exit code, stdout, stderr).
    In this process rather than a new interpreter, each case is spared the seconds of importing
    torch and numba again; the script still runs as __main__ with its own argv."""
    argv, path = sys.argv, sys.path[:]
    sys.argv = [str(EXPERIMENTS / script), *map(str, args)]
    sys.path.insert(0, str(EXPERIMENTS))  # as the interpreter puts a script's folder first
    code = 0
    try:
        runpy.run_path(str(EXPERIMENTS / script), run_name="__main__")
    except SystemExit as stop:
        if isinstance(stop.code, str):  # sys.exit("message"): printed, exit status 1
            print(stop.code, file=sys.stderr)
        code = stop.code if isinstance(stop.code, int) else int(stop.code is not None)
    finally:
        sys.argv, sys.path[:] = argv, path
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("players", [2, 3, 4])
def test_paired_games_between_equal_players_split_exactly_evenly(players):
    # Each deal is played once with the "changed" player in every seat; with the same
    # weights those games are identical, so it wins exactly one game per deal.
    paired_wins = load("heuristic_weights").paired_wins
    seats = np.array(game.seats_for(players), dtype=np.int64)
    w = DEFAULT_WEIGHTS.array()
    assert paired_wins(game.rules_array("hasbro2003"), seats, w, w.copy(), 3, 40, 2000) == 40


def test_paired_games_play_the_changed_weights_in_the_changed_seat():
    # All-zero weights score every move alike, so that player takes the first legal move.
    paired_wins = load("heuristic_weights").paired_wins
    seats = np.array(game.seats_for(2), dtype=np.int64)
    zero = dataclasses.replace(DEFAULT_WEIGHTS, **{f.name: 0.0 for f in dataclasses.fields(DEFAULT_WEIGHTS)})
    rules = game.rules_array("hasbro2003")
    weak = paired_wins(rules, seats, zero.array(), DEFAULT_WEIGHTS.array(), 1, 100, 2000)
    strong = paired_wins(rules, seats, DEFAULT_WEIGHTS.array(), zero.array(), 1, 100, 2000)
    assert weak < 70 < 130 < strong  # of 200 games each


def one_step_from_winning():
    """Public afterstate: seat 2 moves next, no card drawn; it wins with a 1 (its last pawn
    is on safe 4, one step from Home) and with no other card."""
    d = {
        "to_move": 2,
        "pawns": [
            [["track", 10], ["track", 40], ["start"], ["start"]],
            None,
            [["home"], ["home"], ["home"], ["safe", 4]],
            None,
        ],
    }
    state = state_from_dict(d, PRESETS["hasbro2003"], seed=1)
    public = np.empty_like(state)
    public_state(state, public)
    public[E.REMAIN + E.card_index(public)] += 1  # a state dict comes with a card drawn: put it back
    public[E.CARD] = -1
    return public


def zero_value(hidden=(8,)):
    """(params, sizes) of an MLP of zeros: every open position is worth 0.5 to everyone."""
    mlp = MLP([OBS_SIZE, *hidden, 1], "relu")
    with torch.no_grad():
        for p in mlp.parameters():
            p.zero_()
    return pack_mlp(mlp)


@pytest.mark.ci_slow  # over 10 s: CI runs it after the README's test command
@pytest.mark.parametrize("empty_pile", [False, True])
def test_value_iteration_backup_is_the_exact_expectation_over_the_next_card(empty_pile):
    vi = load("value_iteration")
    rules = game.rules_array("hasbro2003")
    public = one_step_from_winning()
    if empty_pile:  # every card drawn: the discards are reshuffled before the next draw
        public[E.REMAIN : E.REMAIN + N_CARDS] = 0
    chances = np.empty(N_CARDS)
    card_chances(public, rules, chances)
    p1 = chances[CARD_INDEX["1"]]
    assert 0.05 < p1 < 0.2
    out = np.zeros(4)
    vi.backup(public, rules, *zero_value(), vi.NO_BASE, 7, out)
    assert out[2] == pytest.approx(p1 + (1 - p1) * 0.5)
    assert out[0] == pytest.approx((1 - p1) * 0.5)
    assert out[1] == out[3] == 0.0


def test_value_iteration_scores_decided_positions_by_the_result_and_others_by_the_evaluation():
    vi = load("value_iteration")
    rules = game.rules_array("hasbro2003")
    w = DEFAULT_WEIGHTS.array()
    obs = np.empty(OBS_SIZE, dtype=np.float32)
    state = one_step_from_winning()
    # A zero correction on top of the evaluation is the evaluation's own chance of winning.
    for seat in (0, 2):
        assert vi.seat_value(state, rules, *zero_value(), w, seat, obs) == pytest.approx(
            win_chance(state, rules, w, evaluate(state, rules, w, seat))
        )
    state[E.PAWNS + 2 * E.MAX_SLOTS : E.PAWNS + 2 * E.MAX_SLOTS + 4] = HOME
    state[E.WINNER] = 2
    out = np.zeros(4)
    vi.backup(state, rules, *zero_value(), w, 7, out)
    assert list(out) == [0.0, 0.0, 1.0, 0.0]


@pytest.mark.parametrize(
    "script, args, expected",
    [
        ("search_headroom.py", ["--decisions", "6", "--iterations", "40"], "implied rate of a playout searcher"),
        # The two longest runs (20-40 s: each compiles its uncached numba code in a fresh process)
        # are slow tests; the unit tests above cover their parts in the default run.
        pytest.param(
            "search_headroom.py",
            ["--decisions", "3", "--iterations", "20", "--plies", "2", "--nested", "3", "--nested-playouts", "10"],
            "second step (next own decision searched with 3 playouts",
            marks=pytest.mark.slow,
        ),
        ("heuristic_weights.py", ["--pairs", "3", "--scales", "2", "--players", "3"], "leader"),
        pytest.param(
            "value_iteration.py",
            [
                "--init",
                "evaluation",
                "--hidden",
                "16",
                "--rounds",
                "1",
                "--positions",
                "2000",
                "--epochs",
                "1",
                "--check-games",
                "20",
            ],
            "round 1: as a one-move player, wins",
            marks=pytest.mark.slow,
        ),
    ],
)
def test_analysis_scripts_run_end_to_end(script, args, expected, capsys):
    code, out, err = run_script(capsys, script, *args)
    assert code == 0, err
    assert expected in out


@pytest.mark.parametrize(
    "script, args, message",
    [
        ("search_headroom.py", ["--sample", "0"], "--sample"),
        ("search_headroom.py", ["--nested", "3", "--plies", "0"], "--plies >= 1 with --nested"),
        ("heuristic_weights.py", ["--rules", "hasbro2003_teams", "--players", "4"], "team rules"),
        ("value_iteration.py", ["--init", "evaluation", "--rounds", "0"], "--rounds >= 1"),
        ("value_iteration.py", ["--init", "evaluation", "--rules", "hasbro2003_points"], "hands"),
        ("value_iteration.py", ["--init", "checkpoints/value-2p.safetensors", "--pairs"], "--pairs needs"),
    ],
)
def test_analysis_scripts_refuse_bad_settings(script, args, message, capsys):
    code, _, err = run_script(capsys, script, *args)
    assert code == 2 and message in err


def test_value_iteration_pair_features_mark_who_can_reach_whom():
    vi = load("value_iteration")
    rules_obj = PRESETS["hasbro2003"]
    state = state_from_dict(
        {
            "to_move": 0,
            "card": "5",
            "pawns": [
                [["track", 10], ["start"], ["start"], ["start"]],
                None,
                [["track", 5], ["track", 15], ["start"], ["start"]],
                None,
            ],
        },
        rules_obj,
        seed=0,
    )
    rules = game.rules_array(rules_obj)
    x = np.empty(OBS_SIZE + vi.PAIR_FEATURES, dtype=np.float32)
    vi.network_input(state, rules, 0, x)
    plain = np.empty(OBS_SIZE, dtype=np.float32)
    vi.network_input(state, rules, 0, plain)
    assert (x[:OBS_SIZE] == plain).all()
    reach = vi.PAIR_REACH
    slot = {int(E.pawn_code(state, 2, j)): j for j in range(4)}
    first = [OBS_SIZE + (0 * 4 + slot[sq]) * 2 * reach for sq in (5, 15)]
    # The pawn on 5 is 5 squares behind seat 0's pawn on 10 (it can reach it with a 5);
    # seat 0's pawn is 5 squares behind the one on 15.
    assert np.flatnonzero(x[OBS_SIZE:]).tolist() == sorted([first[0] + 4 - OBS_SIZE, first[1] + reach + 4 - OBS_SIZE])


@pytest.fixture(scope="module")
def small_teacher_file(tmp_path_factory):
    """A teacher.npz as a run's distillation writes it: 300 decisions of a cheap teacher."""
    import json

    from sorry_env.training.search_teacher import collect

    states, values, counts, games = collect("hasbro2003", 2, 300, 40, 4, None, 0)
    teacher = {"decisions": 300, "iterations": 40, "rollout_plies": 4, "value": None}
    made_by = {"teacher": teacher, "game": {"num_players": 2, "rules": "hasbro2003", "max_turns": 2000}}
    path = tmp_path_factory.mktemp("teacher") / "teacher.npz"
    np.savez(path, states=states, values=values, counts=counts, games=np.array(games), made_by=json.dumps(made_by))
    return path


def test_distil_students_trains_saves_and_measures_a_student(small_teacher_file, tmp_path, capsys):
    from sorry_env.agents.policy import load_policy

    out = tmp_path / "student.safetensors"
    args = [str(small_teacher_file), "--hidden", "16,8", "--epochs", "2", "--out", str(out), "--games", "10"]
    code, stdout, err = run_script(capsys, "distil_students.py", *args)
    assert code == 0, err
    assert "student 16,8 on 300 decisions: agreement" in stdout
    assert "against the heuristic:" in stdout and "of 10 games" in stdout
    actor, meta = load_policy(out)
    assert meta["network"]["hidden"] == [16, 8] and meta["training"]["distillation"]["decisions"] == 300


@pytest.mark.parametrize(
    "args, message",
    [
        (["--hidden", "16,x"], "--hidden must be comma-separated widths"),
        (["--epochs", "0"], "--epochs must be at least 1"),
        (["--init", "checkpoints/value-2p.safetensors", "--hidden", "16"], "other hidden widths"),
    ],
)
def test_distil_students_refuses_bad_settings(small_teacher_file, tmp_path, args, message, capsys):
    cmd = [str(small_teacher_file), "--out", str(tmp_path / "s.safetensors"), "--games", "0", *args]
    code, _, err = run_script(capsys, "distil_students.py", *cmd)
    assert code == 2 and message in err
    assert not (tmp_path / "s.safetensors").exists()


def test_ensemble_students_scores_moves_by_the_members_mean(tmp_path, capsys):
    from sorry_env.agents.policy import Actor, load_policy, save_policy

    torch.manual_seed(0)
    members = [Actor("afterstate", hidden, "relu", "hasbro2003") for hidden in ([16, 8], [12, 4], [16, 8])]
    paths = []
    for k, actor in enumerate(members):
        paths.append(tmp_path / f"m{k}.safetensors")
        network = {"kind": "afterstate", "hidden": [layer.out_features for layer in actor.net.layers[:-1]]}
        save_policy(
            paths[-1], actor, rules="hasbro2003", num_players=2, network={**network, "activation": "relu"}, name="m"
        )
    out = tmp_path / "ensemble.safetensors"
    code, stdout, err = run_script(capsys, "ensemble_students.py", *paths, "--out", out, "--games", 4)
    assert code == 0, err
    assert "ensemble of 3 ([44, 20])" in stdout and "of 4 games" in stdout
    ensemble, meta = load_policy(out)
    x = torch.rand(7, OBS_SIZE)
    with torch.no_grad():
        torch.testing.assert_close(ensemble.net(x), sum(m.net(x) for m in members) / 3)
    code, _, err = run_script(capsys, "ensemble_students.py", paths[0], "--out", tmp_path / "x")
    assert code == 2 and "at least two member files" in err


def test_teacher_set_writes_the_runs_teacher_file_and_refuses_configs_without_a_teacher(tmp_path, capsys):
    from sorry_env.training.search_teacher import CHUNK

    config = tmp_path / "tiny.yaml"
    config.write_text(
        "name: tiny\nseed: 3\ngame: {num_players: 2, rules: hasbro2003}\n"
        "distillation: {decisions: 12, iterations: 8, rollout_plies: 2, workers: 1}\n"
    )
    code, _, err = run_script(capsys, "teacher_set.py", config, "--runs-dir", tmp_path)
    assert code == 0, err
    with np.load(tmp_path / "tiny" / "teacher.npz") as saved:
        assert len(saved["counts"]) == 12 and (saved["counts"] >= 2).all()
        assert f'"chunk": {CHUNK}' in str(saved["made_by"]) and '"seed": 3' in str(saved["made_by"])
    for text, message in [
        ("name: none\n", "has no distillation decisions"),
        ("name: v\ndistillation: {decisions: 5, value: no/such.safetensors}\n", "distillation.value: no file"),
        ("name: bad\nnot_a_key: 1\n", "unknown key"),
    ]:
        config.write_text(text)
        code, _, err = run_script(capsys, "teacher_set.py", config, "--runs-dir", tmp_path)
        assert code == 2 and message in err, err
