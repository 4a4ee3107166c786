"""The play command through a scripted stdin session."""

import subprocess
import sys

import torch

from sorry_env.agents.policy import Actor, save_policy


def write_policy(path, num_players):
    """An untrained policy file (play only needs a valid one)."""
    torch.manual_seed(0)
    actor = Actor("afterstate", [16], "relu", "hasbro2003")
    save_policy(
        path,
        actor,
        rules="hasbro2003",
        num_players=num_players,
        network={"kind": "afterstate", "hidden": [16], "activation": "relu"},
        name="untrained",
    )
    return path


def run_play(args, stdin):
    return subprocess.run(
        [sys.executable, "-m", "sorry_env.agents.play", *args], input=stdin, capture_output=True, text=True, timeout=600
    )


def test_a_whole_game_with_bad_input_answered():
    # Three bad answers first, then always the first listed move until the game ends.
    result = run_play(["--opponents", "random", "--seed", "3"], "x\n0\n99\n\u00b2\n" + "1\n" * 3000)
    out = result.stdout
    assert result.returncode == 0, result.stderr
    assert "'x' is not one of the moves: type a number from 1 to" in out
    assert "'0' is not one of the moves" in out and "'99' is not one of the moves" in out
    assert "'\u00b2' is not one of the moves" in out  # a superscript two is a digit to str.isdigit
    assert "You are Red (seat 0)" in out and "legend:" in out  # the board is drawn
    assert " 1. " in out  # moves are listed in words
    assert "Yellow (random) plays" in out
    assert "You win!" in out or "Yellow (random) wins." in out


def test_policy_opponents_and_quitting(tmp_path):
    policy = write_policy(tmp_path / "p4.safetensors", num_players=4)
    result = run_play(["--players", "4", "--opponents", "heuristic", str(policy), "random"], "1\n1\nq\n")
    assert result.returncode == 1
    assert "Blue = heuristic" in result.stdout and "Game abandoned: you quit." in result.stdout


def test_end_of_input_abandons_the_game():
    result = run_play(["--opponents", "greedy"], "")
    assert result.returncode == 1 and "Game abandoned: input ended." in result.stdout


def test_a_policy_for_another_player_count_is_refused_before_the_game(tmp_path):
    policy = write_policy(tmp_path / "p4.safetensors", num_players=4)
    result = run_play(["--players", "2", "--opponents", str(policy)], "1\n")
    assert result.returncode == 2
    assert "trained for 4 players, not 2" in result.stderr
    assert "legend:" not in result.stdout


def test_a_bad_opponent_count_or_estimator_names_its_flag():
    counted = run_play(["--players", "4", "--opponents", "random", "random"], "q\n")
    assert counted.returncode == 2 and "legend:" not in counted.stdout
    message = "--opponents: opponents for 4 players (the seats after yours): give 1 (for every seat) or 3, got 2"
    assert message in counted.stderr
    estimator = run_play(["--estimate", "heuristic"], "q\n")
    assert estimator.returncode == 2 and "--estimate: heuristic: not a policy file" in estimator.stderr


def test_forced_moves_play_themselves_and_moves_name_their_consequences():
    result = run_play(["--opponents", "random", "--seed", "3"], "1\n" * 3000)
    out = result.stdout
    assert result.returncode == 0, result.stderr
    assert "(forced: your only move)" in out  # e.g. passes with no legal move
    assert "Your move (1-1," not in out  # a single option is never asked about
    assert "back to Start" in out  # bumps say whose pawn went back (this seed has some)
    assert "  1. R" in out or "  1. play" in out  # options name the pawn by its label
    assert "Red's hand" not in out  # no hands in this game


def test_play_for_points_shows_your_hand_only():
    result = run_play(["--rules", "hasbro2003_points", "--opponents", "random", "--seed", "1"], "1\n" * 3000)
    out = result.stdout
    assert result.returncode == 0, result.stderr
    assert "Red's hand: " in out and "Yellow's hand" not in out


def test_a_split_seven_is_offered_once_per_outcome():
    from sorry_env import games
    from sorry_env.board import game
    from sorry_env.board.rules import get_rules
    from sorry_env.board.state_io import state_from_dict

    d = {
        "to_move": 0,
        "card": "7",
        "pawns": [[["track", 20], ["track", 40], ["start"], ["start"]], None, [["start"]] * 4, None],
    }
    state = state_from_dict(d, get_rules("hasbro2003"), 0)
    legal = game.legal_actions(state, "hasbro2003")
    shown = [action for action, _ in games.load_game("sorry", "hasbro2003").play_view(state, 0).options(state)]
    assert len(shown) == len(game.equivalent_actions(state, "hasbro2003")) < len(legal)
    assert len({game.after_move(state, "hasbro2003", a).tobytes() for a in shown}) == len(shown)


def test_the_catalog_listing_keeps_its_columns_for_the_longest_names():
    from sorry_env.agents.catalog import catalog_rows
    from sorry_env.agents.play.terminal import catalog_lines

    rows = catalog_rows()
    lines = catalog_lines(rows)
    assert any(row["rules"] == "hasbro2013_fire_ice" for row in rows)
    players_at = {line.index(" players ") for line in lines}
    assert len(players_at) == 1  # every row's "N players" starts in the same column
    rules_at = {line.index(" rules ") for line in lines}
    assert len(rules_at) == 1
