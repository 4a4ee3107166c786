"""The analysis scripts in benchmarks/: paired games credit the right seat, and the scripts
run end to end."""
import dataclasses
import importlib.util
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from agents.evaluation import DEFAULT_WEIGHTS
from sorry_env import game

BENCHMARKS = pathlib.Path(__file__).parent.parent / "benchmarks"


def load(name):
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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


@pytest.mark.parametrize("script, args, expected", [
    ("search_headroom.py", ["--decisions", "6", "--iterations", "40"], "implied rate of a playout searcher"),
    ("heuristic_weights.py", ["--pairs", "3", "--scales", "2", "--players", "3"], "leader"),
])
def test_analysis_scripts_run_end_to_end(script, args, expected):
    out = subprocess.run([sys.executable, str(BENCHMARKS / script), *args], capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr
    assert expected in out.stdout


@pytest.mark.parametrize("script, args, message", [
    ("search_headroom.py", ["--sample", "0"], "--sample"),
    ("heuristic_weights.py", ["--rules", "hasbro2003_teams", "--players", "4"], "team rules"),
])
def test_analysis_scripts_refuse_bad_settings(script, args, message):
    out = subprocess.run([sys.executable, str(BENCHMARKS / script), *args], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 2 and message in out.stderr
