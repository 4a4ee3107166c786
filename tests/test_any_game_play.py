"""Every registered game in the terminal game (``sorry-play --game ID``), the browser game's
API (``sorry-serve``: ``{"game": ID}``) and replays (``sorry-eval --game ID --record``,
``sorry-replay``), through the registry's functional API (issue 26). The toy game of
tests/toy_race, registered only here, shows the paths are generic; Sorry! Express is the
built-in game they are for. Bad input (an unknown game, an agent of another game, a
malformed replay) gets a clear error."""

import io
import json
import warnings

import numpy as np
import pytest
import toy_race  # noqa: F401 (registers the toy game)
from test_replay import record_tournament  # tests/ is on sys.path (pytest rootdir import mode)

from sorry_env import games
from sorry_env import replay as R
from sorry_env.agent import GameTurn
from sorry_env.agents import make_agent
from sorry_env.agents.play import terminal

# ---- the terminal game ----------------------------------------------------------------------


def run_terminal(monkeypatch, capsys, args, answers):
    """sorry-play in this process with `answers` as its input: (exit code, stdout, stderr)."""
    monkeypatch.setattr("sys.stdin", io.StringIO(answers))
    try:
        code = terminal.main(args)
    except SystemExit as stop:
        code = stop.code
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_toy_game_is_played_in_the_terminal_with_bad_answers_answered(monkeypatch, capsys):
    code, out, _ = run_terminal(
        monkeypatch, capsys, ["--game", "toy_race", "--players", "3", "--seed", "4"], "x\n0\n" + "1\n" * 200
    )
    assert code == 0
    assert "Playing Race (toy) (rules standard)." in out
    assert "You are player_0 (seat 0). Opponents: player_1 = greedy, player_2 = greedy" in out
    assert "'x' is not one of the moves: type a number from 1 to" in out and "'0' is not one of the moves" in out
    assert "player_0 at 0/12" in out  # the position, drawn by the game's render_text
    assert "   1. advance " in out  # the legal moves in the game's words (describe_action)
    assert "player_1 (greedy): advance" in out
    assert "You win!" in out or "(greedy) wins." in out


def test_an_express_game_against_its_own_agents_and_quitting(monkeypatch, capsys):
    code, out, _ = run_terminal(
        monkeypatch, capsys, ["--game", "express", "--players", "3", "--opponents", "heuristic", "random"], "1\n1\nq\n"
    )
    assert code == 1 and "Game abandoned: you quit." in out
    assert "Playing Sorry! Express (rules standard)." in out
    assert "You are player_0 (seat 0). Opponents: player_1 = heuristic, player_2 = random" in out
    assert "dice left:" in out and "Start base:" in out  # Express's own text of the position


def test_a_whole_express_game_in_the_terminal_ends_with_a_result(monkeypatch, capsys):
    code, out, _ = run_terminal(monkeypatch, capsys, ["--game", "express", "--seat", "1", "--seed", "2"], "1\n" * 400)
    assert code == 0
    assert "You are player_1 (seat 1)" in out and "player_0 = heuristic" in out
    assert "You win!" in out or "player_0 (heuristic) wins." in out


@pytest.mark.parametrize(
    "args, words",
    [
        (["--game", "nope"], "unknown game 'nope'; registered games:"),
        (["--game", "express", "--rules", "hasbro2003"], "Sorry! Express has one variant, 'standard'"),
        (["--game", "express", "--opponents", "azsearch"], "unknown agent 'azsearch' for Sorry! Express"),
        (["--game", "toy_race", "--opponents", "heuristic"], "unknown agent 'heuristic' for Race (toy)"),
        (
            ["--game", "express", "--opponents", "random", "random"],
            "--opponents: opponents for 2 players (the seats after yours): give 1, got 2",
        ),
        (["--game", "express", "--seat", "3"], "--seat must be one of the seats in play [0, 1]"),
        (["--game", "toy_race", "--list"], "Race (toy) has none"),  # Express ships express-2p
        (["--game", "express", "--estimate"], "Sorry! Express has none"),
        (["--game", "express", "--max-turns", "0"], "--max-turns must be at least 1"),
        (["--rules", "nope"], "argument --rules: invalid choice: 'nope'"),
    ],
)
def test_bad_terminal_options_are_refused_before_the_game(monkeypatch, capsys, args, words):
    code, out, err = run_terminal(monkeypatch, capsys, args, "1\n")
    assert code == 2 and words in err, err
    assert "Your move" not in out


def test_a_board_game_policy_file_is_refused_for_another_game(monkeypatch, capsys, tmp_path):
    from test_play import write_policy

    policy = write_policy(tmp_path / "p2.safetensors", num_players=2)
    code, _, err = run_terminal(monkeypatch, capsys, ["--game", "express", "--opponents", str(policy)], "1\n")
    assert code == 2 and "is a policy file for the board game Sorry!, not Sorry! Express" in err


# ---- replays --------------------------------------------------------------------------------


def toy_record(seed=3, players=3):
    """A toy game of greedy agents, recorded."""
    game = games.load_game("toy_race")
    agent = make_agent("greedy", seed=0, game=game)
    state, actions = game.new_state(players, seed=seed, first=1), []
    rng = np.random.default_rng(0)
    while game.winner(state) is None:
        action = agent.act(GameTurn.from_state(game, state, rng, game.legal_actions(state)))
        actions.append(action)
        state = game.apply(state, action)
    players_list = [{"agent": "greedy", "seat": s} for s in range(players)]
    return R.record_game(game, tuple(range(players)), seed, actions, 1, 100, players_list, {"tool": "test"})


def test_a_toy_game_record_replays_exactly_and_prints_its_moves(tmp_path, capsys):
    record = toy_record()
    assert record["game"] == "toy_race" and record["rules"] == {"name": "standard"}
    rep = R.replay(json.loads(json.dumps(record)))  # as read back from a file
    assert len(rep.actions) == len(record["moves"]) and rep.game_type.id == "toy_race"
    lines = R.move_list(rep)
    assert lines[1] == "game: Race (toy)" and lines[3].startswith("   1. player_1: advance ")
    assert lines[-1].endswith(f"wins after {record['result']['turns']} turns")
    path = R.save(record, tmp_path / "toy.json")
    assert R.main([str(path)]) == 0 and "game: Race (toy)" in capsys.readouterr().out
    assert R.main([str(path), "--gif", str(tmp_path / "toy.gif")]) == 1
    assert "--gif draws the board game; Race (toy) has no board" in capsys.readouterr().err
    assert not (tmp_path / "toy.gif").exists()


def tamper_move(record, k, key, value):
    moves = [dict(m) for m in record["moves"]]
    moves[k] = {**moves[k], "state": {**moves[k]["state"], key: value}}
    return {**record, "moves": moves}


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda r: {**r, "game": "nope"}, r"'game' is 'nope', not a registered game \(.*toy_race"),
        (lambda r: {**r, "game": ["toy_race"]}, "not a registered game"),
        (lambda r: {**r, "rules": {"name": "hasbro2003"}}, "Race rules must be"),
        (lambda r: {**r, "seats": [0, 1]}, "initial state differs"),
        (lambda r: {**r, "seats": [0, 1, 2, 3, 4]}, "num_players must be one of"),
        (lambda r: {**r, "seed": r["seed"] + 1}, "initial state differs"),
        (lambda r: {**r, "first_seat": 7}, "first must be a seat"),
        (lambda r: tamper_move(r, 0, "turn", 99), "move 0 .*differs from the recorded one: 'turn'"),
        (lambda r: {**r, "moves": [{**r["moves"][0], "action": 5}] + r["moves"][1:]}, "move 0: action 5 is illegal"),
        (lambda r: {**r, "moves": r["moves"] + r["moves"][-1:]}, "the game was already over"),
        (lambda r: {**r, "moves": r["moves"][:-1]}, "recorded result"),
        (lambda r: {**r, "moves": "x"}, "'moves' must be a list"),
        (lambda r: {**r, "players": [{"agent": "greedy", "seat": 9}]}, "'players'"),
        (lambda r: {k: v for k, v in r.items() if k != "initial_state"}, r"missing keys \['initial_state'\]"),
    ],
)
def test_a_tampered_or_malformed_record_of_another_game_is_refused(change, message):
    with pytest.raises(R.ReplayError, match=message):
        R.replay(change(json.loads(json.dumps(toy_record()))))


def test_a_board_game_record_claiming_another_game_is_refused_by_that_games_rules_codec():
    record = R.record_game("hasbro2003", (0, 2), 5, [])
    assert "game" not in record  # the board game's files are as they were
    with pytest.raises(R.ReplayError, match="Sorry! Express rules must be"):
        R.replay({**record, "game": "express"})
    assert R.replay({**record, "game": "sorry"}).game_type.id == "sorry"


def test_sorry_eval_records_express_games_that_sorry_replay_plays(tmp_path, capsys):
    files, tournament_games = record_tournament(tmp_path, "--game", "express", "heuristic", "random")
    assert len(files) == 2
    capsys.readouterr()
    for index, (path, tournament_game) in enumerate(zip(files, tournament_games)):
        record = R.load(path)
        assert record["game"] == "express" and record["source"]["game"] == index
        rep = R.replay(record)
        assert record["result"]["turns"] == int(tournament_game["turns"])
        assert R.main([str(path)]) == 0
        out = capsys.readouterr().out
        assert "game: Sorry! Express" in out and f"{len(rep.actions)}. player_" in out


# ---- the browser game's API -----------------------------------------------------------------

pytest.importorskip("starlette", reason="the serve extra (starlette) is not installed")

with warnings.catch_warnings():  # Starlette 1.x prefers httpx2 for its TestClient; httpx still works
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from sorry_env.agents.play.serve.app import create_app  # noqa: E402
from sorry_env.agents.play.serve.games import GameStore  # noqa: E402


@pytest.fixture
def client():
    app = create_app(GameStore(ttl=600, max_games=8), hint_agent="heuristic", workers=1)
    with TestClient(app, base_url="http://127.0.0.1:8000") as c:
        yield c


def held(client) -> int:
    return len(client.app.state.server.store)


def play_out(client, view):
    """Play the first listed move until the game ends; the final view and the moves made."""
    moves = 0
    while not view["over"]:
        r = client.post(
            f"/api/games/{view['id']}/move", json={"action": view["legal"][0]["action"], "version": view["version"]}
        )
        assert r.status_code == 200, r.json()
        view, moves = r.json()["game"], moves + 1
    return view, moves


def test_options_offer_every_other_registered_game(client):
    offered = {g["id"]: g for g in client.get("/api/options").json()["games"]}
    assert "sorry" not in offered and {"express", "toy_race"} <= set(offered)
    assert offered["toy_race"]["agents"] == ["greedy", "playouts", "random"]
    assert offered["toy_race"]["hint_agent"] == "greedy"
    assert {"heuristic", "expectimax", "montecarlo"} <= set(offered["express"]["agents"])


def test_a_toy_game_is_played_through_the_api(client):
    r = client.post("/api/games", json={"game": "toy_race", "players": 3, "opponents": ["greedy", "random"], "seed": 3})
    assert r.status_code == 201, r.json()
    view = r.json()["game"]
    assert view["game"] == "toy_race" and "state" not in view and "player_0 at" in view["text"]
    assert [s["player"] for s in view["seats"]] == ["you", "greedy", "random"]
    assert all(set(m) == {"action", "description"} for m in view["legal"])
    hint = client.get(f"/api/games/{view['id']}/hint").json()["hint"]
    assert hint["agent"] == "greedy" and hint["action"] in [m["action"] for m in view["legal"]]
    again = client.get(f"/api/games/{view['id']}").json()["game"]
    assert again["version"] == view["version"]  # a hint changes nothing
    final, moves = play_out(client, view)
    assert moves > 0 and final["result"]["text"] and final["legal"] == []
    assert any(entry["text"].startswith("player_1 (greedy): advance") for entry in final["log"])
    r = client.post(f"/api/games/{view['id']}/move", json={"action": 0})
    assert r.status_code == 409 and "the game is over" in r.json()["error"]


def test_an_express_game_is_played_through_the_api(client):
    r = client.post("/api/games", json={"game": "express", "players": 2, "opponents": ["greedy"], "seed": 1})
    assert r.status_code == 201, r.json()
    view = r.json()["game"]
    assert view["long_name"] == "Sorry! Express" and view["rules"] == "standard" and "dice left" in view["text"]
    final, _ = play_out(client, view)
    assert final["result"]["winner"] in (0, 1)


@pytest.mark.parametrize(
    "body, words",
    [
        ({"game": "nope"}, "unknown game 'nope'; registered games:"),
        ({"game": 3}, "game must be a registered game's id"),
        ({"game": "x" * 41}, "game must be a registered game's id"),
        ({"game": "express", "rules": "hasbro2003"}, "Sorry! Express has one variant"),
        ({"game": "express", "rules": ["standard"]}, "rules must be one of Sorry! Express's rule sets"),
        ({"game": "express", "players": 5}, "num_players must be one of 2, 3, 4"),
        ({"game": "express", "players": "2"}, "num_players must be one of 2, 3, 4"),
        ({"game": "express", "seat": 2}, "seat must be one of the seats in play [0, 1]"),
        ({"game": "express", "seed": -1}, "seed"),
        ({"game": "express", "opponents": ["expectimax:depth=9"]}, "default settings on this server"),
        ({"game": "express", "opponents": ["azsearch"]}, "unknown opponent 'azsearch' for Sorry! Express"),
        ({"game": "express", "opponents": ["/etc/passwd"]}, "unknown opponent '/etc/passwd'"),
        ({"game": "express", "opponents": ["os:abort"]}, "unknown opponent 'os:abort'"),
        ({"game": "express", "opponents": ["checkpoints/sorry-2p.safetensors"]}, "unknown opponent"),
        ({"game": "express", "opponents": [3]}, "an opponent must be one of"),
        (
            {"game": "express", "opponents": ["random", "random"]},
            "opponents for 2 players (the seats after yours): give 1, got 2",
        ),
        ({"game": "express", "opponents": {"a": 1}}, "must be a list of agent names"),
        ({"game": "toy_race", "opponents": ["heuristic"]}, "unknown opponent 'heuristic' for Race (toy)"),
    ],
)
def test_bad_new_games_of_other_games_are_refused_before_any_game_exists(client, monkeypatch, body, words):
    import importlib

    imported = []
    real_import = importlib.import_module
    monkeypatch.setattr(importlib, "import_module", lambda name, *a: imported.append(name) or real_import(name, *a))
    r = client.post("/api/games", json=body)
    assert r.status_code == 422 and words in r.json()["error"], r.json()
    assert held(client) == 0
    assert "os" not in imported  # a client's text is never imported


def test_bad_moves_in_another_game_are_refused_and_change_nothing(client):
    view = client.post("/api/games", json={"game": "toy_race", "opponents": ["random"], "seed": 1}).json()["game"]
    gid, before = view["id"], view
    for body, status, words in (
        ({"action": 7}, 409, "illegal move: action 7 is not one of the legal"),
        ({"action": True}, 422, "must be integers"),
        ({"action": 0, "version": view["version"] + 1}, 409, "stale move"),
        ({"move": 0}, 422, "a move is"),
    ):
        r = client.post(f"/api/games/{gid}/move", json=body)
        assert r.status_code == status and words in r.json()["error"], r.json()
    assert client.get(f"/api/games/{gid}").json()["game"] == before


def test_a_games_own_agent_plays_in_the_search_processes(client):
    # Seed 0 lets seat 0 start: the opponent there moves first, in a search process (none of its moves the fallback's).
    r = client.post("/api/games", json={"game": "express", "opponents": ["heuristic"], "seed": 0, "seat": 1})
    assert r.status_code == 201, r.json()
    view, events = r.json()["game"], r.json()["events"]
    agent = client.app.state.server.store.get(view["id"]).opponents[0][1]
    assert type(agent).__name__ == "RemoteAgent" and agent.game_id == "express"
    assert events and all(e["player"] == "heuristic" and "moved instead" not in e["text"] for e in events)
