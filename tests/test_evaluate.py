"""The tournament evaluator: fair seating, interval arithmetic, reproducibility, the CLI."""

import csv
import json
import math
import subprocess
import sys

import pytest

import sorry_env
from sorry_env.agents.arena.output import write_outputs
from sorry_env.agents.arena.play import Table
from sorry_env.agents.arena.stats import wilson_interval
from sorry_env.agents.arena.tournament import run_tournament


@pytest.mark.parametrize("players", [2, 3, 4])
def test_every_agent_plays_every_seat_and_moves_first_equally_often(players):
    results = run_tournament(["random"] * players, games=players**2, seed=1, workers=1)
    seats = results["config"]["seats"]
    for row in results["agents"]:
        assert row["games_at_seat"] == {str(seat): players for seat in seats}
        assert row["moved_first"] == players
    assert results["seating_balanced"]
    pairings = {(tuple(record["seats"]), record["first_seat"]) for record in results["games"]}
    assert len(pairings) == players**2  # each (seating, first mover) exactly once


def record_turn_seats(agent, seats_seen):
    """Make `agent` append the seat of every turn it is shown to `seats_seen`."""
    act = agent.act

    def recording_act(turn):
        seats_seen.append(turn.seat)
        return act(turn)

    agent.act = recording_act


def test_the_scheduled_first_mover_plays_the_first_card():
    table = Table(["random", "random", "random"], "hasbro2003", max_turns=1, seed=0)  # one card a game
    first_turn_seats = []
    for agent in table.agents:
        record_turn_seats(agent, first_turn_seats)
    records = [table.play(game_index) for game_index in range(9)]
    assert first_turn_seats == [record["first_seat"] for record in records]
    assert sorted(first_turn_seats) == [0, 0, 0, 1, 1, 1, 2, 2, 2]


def test_wilson_interval_matches_hand_computation():
    z = 1.959963984540054
    # 50/100: centre 0.5, half-width z/(1 + z²/100) * sqrt(0.25/100 + z²/40000) = 0.0962
    half = z / (1 + z**2 / 100) * math.sqrt(0.25 / 100 + z**2 / 40000)
    assert wilson_interval(50, 100) == pytest.approx((0.5 - half, 0.5 + half))
    assert wilson_interval(50, 100) == pytest.approx((0.4038, 0.5962), abs=1e-4)
    # 0/10: the interval is [0, z²/(n + z²)] = [0, 0.2775]
    assert wilson_interval(0, 10) == pytest.approx((0.0, z**2 / (10 + z**2)), abs=1e-12)
    assert wilson_interval(10, 10) == pytest.approx((10 / (10 + z**2), 1.0))
    # Every tally's interval holds its rate (60/60 rounded to 0.9999999999999998 above 1.0, and
    # the win-rate chart's error bars refused the negative length).
    for trials in range(1, 301):
        for successes in (0, 1, trials - 1, trials):
            low, high = wilson_interval(successes, trials)
            assert low <= successes / trials <= high, (successes, trials)


def test_a_clean_sweep_is_charted(tmp_path):
    results = run_tournament(["heuristic", "random"], games=8, seed=6, workers=1)
    assert results["agents"][0]["wins"] == 8  # a sweep: the rate sits at the interval's end
    write_outputs(results, tmp_path)
    assert (tmp_path / "win_rates.png").stat().st_size > 0


def test_same_seed_same_results_with_one_or_two_workers():
    one = run_tournament(["random", "random"], games=12, seed=7, workers=1)
    two = run_tournament(["random", "random"], games=12, seed=7, workers=2)
    assert one == two
    other_seed = run_tournament(["random", "random"], games=12, seed=8, workers=1)
    assert other_seed["games"] != one["games"]


def test_truncated_games_are_draws():
    results = run_tournament(["random", "random"], games=4, seed=0, workers=1, max_turns=10)
    assert results["truncated"] == 4
    assert results["mean_turns"] == 10
    assert [row["wins"] for row in results["agents"]] == [0, 0]
    assert results["agents"][0]["rating_mu"] == pytest.approx(results["agents"][1]["rating_mu"])


def test_partners_share_their_side_wins_under_team_rules():
    results = run_tournament(["random"] * 4, games=4, seed=0, rules="hasbro2003_teams", workers=1)
    wins = [row["wins"] for row in results["agents"]]
    assert wins[0] == wins[2] and wins[1] == wins[3]
    assert wins[0] + wins[1] + results["truncated"] == 4
    assert all(row["expected"] == 0.5 for row in results["agents"])
    assert all(len(record["winners"]) == 2 for record in results["games"])


def test_points_rules_report_mean_scores():
    results = run_tournament(["random", "random"], games=2, seed=0, rules="hasbro2003_points", workers=1)
    assert all(row["mean_score"] is not None for row in results["agents"])
    plain = run_tournament(["random", "random"], games=2, seed=0, workers=1)
    assert all(row["mean_score"] is None for row in plain["agents"])


def test_lineup_must_match_the_player_count():
    with pytest.raises(ValueError, match="one agent per player"):
        run_tournament(["random", "random"], players=4, games=4)
    with pytest.raises(ValueError, match="team rules"):
        run_tournament(["random", "random"], games=4, rules="hasbro2003_teams")


def test_a_script_without_a_main_guard_gets_a_clear_error_not_a_hang(tmp_path):
    # Spawned workers re-run the script, die there; the parent must say why and stop.
    script = tmp_path / "unguarded.py"
    script.write_text(
        "from sorry_env.agents.arena.tournament import run_tournament\n"
        "run_tournament(['random', 'random'], games=4, workers=2, progress=False)\n"
    )
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert result.returncode != 0
    assert 'a script without the `if __name__ == "__main__":` guard' in result.stderr


def test_a_policy_for_another_game_is_refused_before_any_game(tmp_path, monkeypatch):
    def no_play(*_):
        raise AssertionError("a game was started")

    monkeypatch.setattr(Table, "play", no_play)
    with pytest.raises(ValueError, match="trained for 4 players, not 2"):
        run_tournament(["checkpoints/sorry-4p.safetensors", "random"], games=2, workers=1)
    with pytest.raises(ValueError, match="trained for rules 'hasbro2003'"):
        run_tournament(["checkpoints/sorry-4p.safetensors"] + ["random"] * 3, games=2, rules="parker1958", workers=1)
    (tmp_path / "out").write_text("")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "sorry_env.agents.arena.cli",
            "random",
            "random",
            "--games",
            "2",
            "--out",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2 and "is a file; name a directory" in result.stderr


def test_cli_writes_json_csv_and_png(tmp_path):
    command = [
        sys.executable,
        "-m",
        "sorry_env.agents.arena.cli",
        "random",
        "random",
        "--games",
        "8",
        "--workers",
        "2",
        "--seed",
        "3",
        "--out",
        str(tmp_path),
        "--no-progress",
    ]
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    assert "first mover won" in output and "random#2" in output

    results = json.loads((tmp_path / "results.json").read_text())
    assert results["config"]["games"] == 8
    assert results["made_by"]["command"] == "sorry-eval " + " ".join(command[3:])  # as typed, to run again
    assert results["made_by"]["sorry_env"] == sorry_env.__version__
    assert sum(row["wins"] for row in results["agents"]) + results["truncated"] == 8
    with open(tmp_path / "agents.csv") as f:
        assert [row["agent"] for row in csv.DictReader(f)] == ["random", "random#2"]
    with open(tmp_path / "games.csv") as f:
        assert len(list(csv.DictReader(f))) == 8
    assert (tmp_path / "turn_order.csv").exists()
    assert (tmp_path / "win_rates.png").read_bytes().startswith(b"\x89PNG")


def test_agent_labels_shorten_file_paths_and_number_repeats():
    from sorry_env.agents.arena.stats import agent_labels

    assert agent_labels(
        ["runs/x/policy.safetensors", "mcts:iterations=9,value=checkpoints/v.safetensors", "heuristic", "heuristic"]
    ) == ["policy.safetensors", "mcts:iterations=9,value=v.safetensors", "heuristic", "heuristic#2"]
