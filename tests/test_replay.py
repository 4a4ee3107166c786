"""Recorded games: sorry-eval --record writes them, sorry-replay re-plays them exactly, prints
the moves and makes GIFs, and refuses files that are not the game they claim to be."""

import csv
import json
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

from sorry_env import replay as R
from sorry_env.agents.arena.cli import main as sorry_eval
from sorry_env.board import game


def record_tournament(root, *args) -> tuple[list, list]:
    """Two games of a 3-game sorry-eval tournament of `args` (agents and options), recorded:
    (the replay files, the tournament's rows of games.csv)."""
    sorry_eval(
        [*args, "--games", "3", "--workers", "1", "--no-progress", "--seed", "5", "--out", str(root / "eval")]
        + ["--record", "2", str(root / "games")]
    )
    with open(root / "eval" / "games.csv", newline="") as f:
        games = list(csv.DictReader(f))
    return sorted((root / "games").glob("*.json")), games


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """Two games of a 3-game tournament, recorded."""
    root = tmp_path_factory.mktemp("rec")
    return root, *record_tournament(root, "greedy", "random")


def test_record_saves_k_games_that_replay_exactly(recorded):
    _, files, games = recorded
    assert [f.name for f in files] == ["game-0000.json", "game-0001.json"]
    for index, path in enumerate(files):
        record = json.loads(path.read_text())
        rep = R.replay(record)  # raises unless every action is legal and every state matches
        tournament = games[index]  # the tournament's own account of the game
        assert record["result"]["turns"] == int(tournament["turns"]) == len(record["moves"]) > 10
        winners = [
            p["agent"]
            for p in record["players"]
            if record["result"]["winner"] is not None
            and game.same_side(rep.rules, p["seat"], record["result"]["winner"])
        ]
        assert " ".join(winners) == tournament["winners"]
        assert [p["agent"] for p in record["players"]] == ["greedy", "random"]
        assert [p["seat"] for p in record["players"]] == [
            int(tournament["seat_greedy"]),
            int(tournament["seat_random"]),
        ]
        assert record["first_seat"] == int(tournament["first_seat"])
        assert record["source"] == {"tool": "sorry-eval", "tournament_seed": 5, "game": index}
        assert all(m["description"].startswith(("Red", "Yellow")) for m in record["moves"])
        assert rep.descriptions == [m["description"] for m in record["moves"]]


def test_replay_prints_the_moves_and_writes_a_gif_with_a_frame_per_move(recorded, tmp_path, capsys):
    _, files, _ = recorded
    record = json.loads(files[0].read_text())
    out = tmp_path / "game.gif"
    assert R.main([str(files[0]), "--gif", str(out), "--fps", "8", "--size", "240"]) == 0
    printed = capsys.readouterr().out
    assert f"   1. {record['moves'][0]['description']}" in printed
    assert f"wrote {out} ({len(record['moves']) + 1} frames)" in printed
    with Image.open(out) as gif:
        assert gif.n_frames == len(record["moves"]) + 1 and gif.size == (240, 240)


def tamper(record, k, key, value):
    data = json.loads(json.dumps(record))
    data["moves"][k]["state"][key] = value
    return data


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda r: tamper(r, 3, "turn", 99), "move 3 .*'turn': replayed 4, recorded 99"),
        (lambda r: {**r, "seed": r["seed"] + 1}, "initial state differs"),
        (lambda r: {**r, "moves": [{**r["moves"][0], "action": 9999}] + r["moves"][1:]}, "move 0: action 9999 is out"),
        (lambda r: {**r, "moves": r["moves"][:-1]}, "recorded result"),
        (lambda r: {**r, "format": "something"}, "not a replay file"),
        (lambda r: {k: v for k, v in r.items() if k != "moves"}, r"missing keys \['moves'\]"),
        (lambda r: {**r, "rules": {"name": "x"}}, "'rules' must have exactly the fields"),
        (lambda r: [r], "one JSON object"),
    ],
)
def test_a_tampered_or_malformed_file_is_refused(recorded, change, message):
    _, files, _ = recorded
    with pytest.raises(R.ReplayError, match=message):
        R.replay(change(json.loads(files[0].read_text())))


def test_the_command_gives_one_line_errors(recorded, tmp_path):
    _, files, _ = recorded
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(tamper(json.loads(files[1].read_text()), 0, "to_move", 1)))
    for path, words in ((bad, "is not JSON"), (tampered, "move 0"), (tmp_path / "missing.json", "does not exist")):
        result = subprocess.run(
            [sys.executable, "-m", "sorry_env.replay", str(path)],
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
        )
        assert result.returncode == 1 and words in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr


def test_replay_runs_without_torch(recorded):
    _, files, _ = recorded
    code = (
        "import sys; sys.modules['torch'] = None\n"  # any `import torch` now fails
        "from sorry_env.replay import main\n"
        f"sys.exit(main([{str(files[0])!r}]))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "wins after" in result.stdout or "no winner" in result.stdout


def test_record_refuses_a_bad_directory_before_any_game(tmp_path, capsys):
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    for args, words in (
        (["--record", "2", str(not_a_dir)], "is a file"),
        (["--record", "9", str(tmp_path / "d")], "K must be 1 .. --games"),
        (["--record", "two", str(tmp_path / "d")], "whole number"),
        (["--record", "9", str(tmp_path / "d"), "--game", "express"], "K must be 1 .. --games"),
    ):
        with pytest.raises(SystemExit) as stop:
            sorry_eval(
                [
                    "random",
                    "random",
                    "--games",
                    "4",
                    "--workers",
                    "1",
                    "--no-progress",
                    "--out",
                    str(tmp_path / "eval"),
                    *args,
                ]
            )
        assert stop.value.code == 2 and words in capsys.readouterr().err
    assert not (tmp_path / "eval").exists()  # nothing was played or written


@pytest.mark.parametrize("name", ["hasbro2003_teams", "hasbro2003_points", "hasbro2013"])
def test_records_of_every_kind_of_game_round_trip(name):
    rules = game.get_rules(name)
    seats = (0, 1, 2, 3) if rules.teams != "none" else (0, 2)
    state, rng, actions = game.new_state(rules, seats=seats, seed=11), np.random.default_rng(0), []
    while game.winner(state) is None and len(actions) < 80:
        actions.append(int(rng.choice(game.legal_actions(state, rules))))
        state = game.step(state, rules, actions[-1])
    record = json.loads(json.dumps(R.record_game(rules, seats, 11, actions)))  # through JSON, as on disk
    rep = R.replay(record)
    assert rep.actions == actions and len(rep.states) == len(actions) + 1
    assert (rep.states[-1] == state).all()  # the very same engine state, hidden draw order included
