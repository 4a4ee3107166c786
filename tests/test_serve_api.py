"""The browser game's JSON API (agents.play.serve) through Starlette's TestClient: games are
created, played to the end and refused bad requests without changing; idle games expire."""

import json
import os
import random
import subprocess
import sys
import warnings

import numpy as np
import pytest

pytest.importorskip("starlette", reason="the serve extra (starlette) is not installed")

with warnings.catch_warnings():  # Starlette 1.x prefers httpx2 for its TestClient; httpx still works
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from test_play import write_policy  # tests/ is on sys.path (pytest rootdir import mode)

from sorry_env import get_rules, state_from_dict, state_to_dict
from sorry_env.agents.play.serve import main as serve_main
from sorry_env.agents.play.serve.app import DEFAULT_CHECKPOINTS, GameServer, create_app
from sorry_env.agents.play.serve.games import GameStore
from sorry_env.board import engine as E
from sorry_env.board import game
from sorry_env.board.board_view import cell_key, click_plan
from sorry_env.board.narrate import trace_move


class Clock:
    """A clock the test moves by hand."""

    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def client(clock):
    app = create_app(GameStore(ttl=60, max_games=12, clock=clock), hint_agent="heuristic")
    with TestClient(app, base_url="http://127.0.0.1:8000") as c:  # a Host the server answers to
        yield c


JSON = {"content-type": "application/json"}


def store(client) -> GameStore:
    return client.app.state.server.store


def new_game(client, **body):
    body = {"players": 2, "rules": "hasbro2003_fast", "opponents": ["heuristic"], "seed": 1, **body}
    r = client.post("/api/games", json=body)
    assert r.status_code == 201, r.text
    return r.json()


def check_view(client, view):
    """The view agrees with the game on the server, and every legal move has a click plan."""
    session = store(client).get(view["id"])
    assert view["state"] == session.shown.page(session.state)["state"]
    assert view["version"] == session.version
    legal = game.legal_actions(session.state, session.game.agent_rules) if not session.over else []
    if not session.over and game.to_move(session.state) == view["you"]:
        assert sorted(m["action"] for m in view["legal"]) == sorted(int(a) for a in legal)
        for m in view["legal"]:
            assert m["clicks"] and m["description"]
    else:
        assert view["legal"] == []


def test_options_list_presets_agents_and_shipped_policies(client):
    r = client.get("/api/options")
    assert r.status_code == 200
    opts = r.json()
    names = {p["name"]: p for p in opts["presets"]}
    assert names["hasbro2003"]["players"] == [2, 3, 4] and names["hasbro2003_teams"]["players"] == [4]
    assert names["hasbro2003"]["seats"]["2"] == [0, 2]
    assert {"heuristic", "random", "montecarlo", "expectimax", "greedy"} <= set(opts["agents"])
    if DEFAULT_CHECKPOINTS.is_dir():
        specs = {p["spec"]: p for p in opts["policies"]}
        assert specs["checkpoints/sorry-2p.safetensors"]["players"] == 2
        assert specs["checkpoints/sorry-4p.safetensors"]["players"] == 4
    layout = client.get("/api/layout").json()
    assert layout["grid"] == 16 and len(layout["track"]) == 60
    page = client.get("/")
    assert page.status_code == 200 and "<svg" in page.text and "/static/app.js" in page.text
    assert "http://" not in page.text.replace('xmlns="http://www.w3.org/2000/svg"', "")  # nothing from the network
    script = client.get("/static/app.js")
    assert script.status_code == 200 and "https://" not in script.text
    assert "http://" not in script.text.replace('"http://www.w3.org/2000/svg"', "")


def test_a_whole_game_played_through_the_api(client):
    data = new_game(client, seed=4)
    view = data["game"]
    check_view(client, view)
    assert view["log"] == [{k: v for k, v in e.items() if k not in ("state", "labels")} for e in data["events"]]
    rng = random.Random(0)
    moves = 0
    while not view["over"]:
        before = view["version"]
        move = rng.choice(view["legal"])
        r = client.post(f"/api/games/{view['id']}/move", json={"action": move["action"], "version": before})
        assert r.status_code == 200, r.text
        events = r.json()["events"]
        view = r.json()["game"]
        moves += 1
        check_view(client, view)
        assert events[0]["seat"] == view["you"] and events[0]["action"] == move["action"]
        assert events[0]["text"].startswith("Red (you) plays ") and events[0]["clicks"] == move["clicks"]
        # the list told what the move would do
        assert events[0]["text"] == f"Red (you) plays {events[0]['card']}: {move['description']}."
        assert all(e["seat"] != view["you"] for e in events[1:])  # then the opponent's replies
        assert view["version"] == before + len(events)
        assert events[-1]["state"] == view["state"]  # the page shows the last event's board
        assert events[-1]["labels"] == view["labels"]
    assert view["result"]["text"] and view["legal"] == []
    winner = view["result"]["winner"]
    assert winner in (0, 2) and view["result"]["you_win"] == (winner == 0)
    assert moves > 10
    r = client.post(f"/api/games/{view['id']}/move", json={"action": 0})
    assert r.status_code == 409 and "game is over" in r.json()["error"]
    assert client.get(f"/api/games/{view['id']}/hint").status_code == 409


def test_a_fire_and_ice_game_played_through_the_api(client):
    """The browser game offers Fire and Ice: every legal move has clicks (a fire move is a
    click on the fire pawn, declining it is Pass), moves say where the tokens go, and the
    view tells where the tokens are."""
    presets = {p["name"] for p in client.get("/api/options").json()["presets"]}
    assert "hasbro2013_fire_ice" in presets
    view = new_game(client, rules="hasbro2013_fire_ice", seed=3, opponents=["random"])["game"]
    rng = random.Random(1)
    seen = set()
    while not view["over"]:
        assert view["tokens"].startswith("Fire: ") and " | Ice: " in view["tokens"]
        for move in view["legal"]:
            assert move["clicks"], move
            seen.add(move["kind"])
            if move["kind"] == "fire_move":
                assert "fire move or Pass" in view["tokens"] and view["state"]["fire_decision"]
            if move["kind"] == "no_fire_move":
                assert move["clicks"] == ["pass"]
        move = rng.choice(view["legal"])
        r = client.post(f"/api/games/{view['id']}/move", json={"action": move["action"], "version": view["version"]})
        assert r.status_code == 200, r.text
        view = r.json()["game"]
        check_view(client, view)
    assert view["result"]["text"]
    assert {"fire_move", "no_fire_move", "start", "move"} <= seen
    descriptions = [e["text"] for e in view["log"]]
    assert any("Ice" in t for t in descriptions) and any("Fire" in t for t in descriptions)


def _unchanged(client, view):
    again = client.get(f"/api/games/{view['id']}").json()["game"]
    assert again == view


def test_bad_moves_are_refused_and_change_nothing(client):
    view = new_game(client, seed=2)["game"]
    gid = view["id"]
    legal = {m["action"] for m in view["legal"]}
    illegal = next(a for a in range(game.num_actions("hasbro2003_fast")) if a not in legal)
    cases = [
        ({"action": illegal}, 409, "illegal move"),
        ({"action": 10_000}, 409, "out of range"),
        ({"action": "1"}, 422, "must be integers"),
        ({"action": True}, 422, "must be integers"),
        ({"action": 1.0}, 422, "must be integers"),
        ({}, 422, "a move is"),
        ({"action": view["legal"][0]["action"], "colour": "red"}, 422, "a move is"),
        ({"action": view["legal"][0]["action"], "version": view["version"] + 1}, 409, "stale move"),
    ]
    for body, status, words in cases:
        r = client.post(f"/api/games/{gid}/move", json=body)
        assert r.status_code == status, (body, r.text)
        assert words in r.json()["error"], (body, r.json())
        _unchanged(client, view)
    for raw in (b"{not json", b"[1, 2]", b"\xff\xfe", b'"action"'):
        r = client.post(f"/api/games/{gid}/move", content=raw, headers={"content-type": "application/json"})
        assert r.status_code == 400, raw
        assert "JSON" in r.json()["error"]
        _unchanged(client, view)
    r = client.post(f"/api/games/{gid}/move", content=b" " * 70_000 + b'{"action": 1}', headers=JSON)
    assert r.status_code == 413 and "at most 65536" in r.json()["error"]
    _unchanged(client, view)
    r = client.post(f"/api/games/{gid}/move", json={"action": view["legal"][0]["action"]})
    assert r.status_code == 200  # the game still plays after all that


def test_unknown_games_routes_and_methods_get_json_errors(client):
    for method, path in [
        ("GET", "/api/games/nope"),
        ("POST", "/api/games/nope/move"),
        ("GET", "/api/games/nope/hint"),
        ("DELETE", "/api/games/nope"),
    ]:
        r = client.request(method, path, json={"action": 1})
        assert r.status_code == 404 and "no game 'nope'" in r.json()["error"], (method, path)
    r = client.get("/api/nothing")
    assert r.status_code == 404 and "error" in r.json()
    r = client.put("/api/games")
    assert r.status_code == 405 and "error" in r.json()


@pytest.mark.parametrize(
    "body, words",
    [
        ({"rules": "monopoly"}, "unknown rules preset"),
        ({"rules": 3}, "rules must be one of the board game Sorry!'s rule sets"),
        ({"players": 5}, "num_players must be one of 2, 3, 4"),
        ({"players": "2"}, "num_players must be one of 2, 3, 4"),
        ({"rules": "hasbro2003_teams", "players": 2}, "team rules"),
        ({"seat": 1}, "seat must be one of the seats in play [0, 2]"),
        ({"seed": -1}, "seed must be a non-negative integer"),
        ({"seed": "7"}, "seed must be a non-negative integer"),
        ({"opponents": ["nobody"]}, "unknown opponent 'nobody'"),
        ({"opponents": ["heuristic:depth=3"]}, "has no setting 'depth'"),
        ({"opponents": [""]}, "one of the choices of /api/options"),
        ({"opponents": [7]}, "one of the choices of /api/options"),
        ({"opponents": ["random", "random"]}, "give 1, got 2"),
        ({"players": 4, "opponents": ["random", "random"]}, "give 1 (for every seat) or 3, got 2"),
        ({"players": 4, "opponents": ["random", "random", "nobody"]}, "opponent 3: unknown opponent 'nobody'"),
        ({"opponents": ["no/such/file.safetensors"]}, "unknown opponent"),
        ({"colour": "red"}, "unknown fields ['colour']"),
    ],
)
def test_bad_new_games_are_refused_before_any_game_exists(client, body, words):
    r = client.post("/api/games", json={"players": 2, "rules": "hasbro2003", **body})
    assert r.status_code == 422, r.text
    assert words in r.json()["error"]
    assert len(store(client)) == 0


def test_a_policy_for_another_player_count_is_refused(tmp_path):
    write_policy(tmp_path / "p4.safetensors", num_players=4)
    app = create_app(GameStore(), checkpoints=tmp_path, hint_agent="heuristic")
    with TestClient(app, base_url="http://127.0.0.1:8000") as client:
        policy = f"{tmp_path.name}/p4.safetensors"  # as /api/options lists it
        r = client.post("/api/games", json={"players": 2, "rules": "hasbro2003", "opponents": [policy]})
        assert r.status_code == 422 and "with 4 players, not hasbro2003 with 2" in r.json()["error"]
        body = {"players": 4, "rules": "hasbro2003", "opponents": [policy, "random", "random"]}
        r = client.post("/api/games", json=body)
        assert r.status_code == 201
        assert [s["player"] for s in r.json()["game"]["seats"]] == ["you", "p4.safetensors", "random", "random"]
        for raw in (b"{", b"[]"):
            r = client.post("/api/games", content=raw, headers=JSON)
            assert r.status_code == 400


def test_idle_games_expire_and_the_cap_holds(client, clock):
    first = new_game(client)["game"]["id"]
    clock.now += 50
    second = new_game(client)["game"]["id"]
    clock.now += 20  # the first game has been idle 70 s > ttl 60 s, the second 20 s
    assert client.get(f"/api/games/{first}").status_code == 404
    assert "expired" in client.get(f"/api/games/{first}").json()["error"]
    assert client.get(f"/api/games/{second}").status_code == 200  # and this use resets its idle time
    clock.now += 59
    assert client.get(f"/api/games/{second}").status_code == 200
    ids = [new_game(client, seed=k)["game"]["id"] for k in range(11)]  # 12 games: the cap
    r = client.post("/api/games", json={"players": 2})
    assert r.status_code == 503 and "maximum of 12 games" in r.json()["error"]
    assert client.delete(f"/api/games/{ids[0]}").status_code == 200
    assert client.get(f"/api/games/{ids[0]}").status_code == 404
    assert new_game(client)["game"]["id"] not in ids
    clock.now += 61
    assert new_game(client)["game"]["id"]  # the idle ones went, making room
    assert len(store(client)) == 1


def test_many_games_at_once_stay_apart(client):
    views = [new_game(client, seed=k)["game"] for k in range(8)]
    assert len({v["id"] for v in views}) == 8
    rng = random.Random(1)
    for _ in range(24):
        k = rng.randrange(len(views))
        if views[k]["over"]:
            continue
        others = [client.get(f"/api/games/{v['id']}").json()["game"] for j, v in enumerate(views) if j != k]
        move = rng.choice(views[k]["legal"])
        r = client.post(f"/api/games/{views[k]['id']}/move", json={"action": move["action"]})
        assert r.status_code == 200
        views[k] = r.json()["game"]
        assert others == [client.get(f"/api/games/{v['id']}").json()["game"] for j, v in enumerate(views) if j != k]
    for v in views:
        check_view(client, v)


def test_a_hint_is_a_legal_move_and_changes_nothing(client):
    view = new_game(client, seed=6)["game"]
    for _ in range(5):
        r = client.get(f"/api/games/{view['id']}/hint")
        assert r.status_code == 200
        hint = r.json()["hint"]
        assert hint["agent"] == "heuristic"
        keys = ("action", "kind", "description", "clicks")
        assert {k: hint[k] for k in keys} in [{k: m[k] for k in keys} for m in view["legal"]]
        _unchanged(client, view)
        r = client.post(f"/api/games/{view['id']}/move", json={"action": hint["action"]})
        view = r.json()["game"]
        if view["over"]:
            break


@pytest.mark.parametrize(
    "rules, players",
    [
        ("hasbro2003", 2),
        ("hasbro2003_teams", 4),
        ("parker1958_teams", 4),
        ("hasbro2003_points", 3),
        ("hasbro2013", 4),
        ("hasbro2013_fire_ice", 3),
    ],
)
def test_click_plans_name_the_cells_a_move_uses(rules, players):
    """Every legal move's clicks start at one of the mover's pawns (or a Start, a card or
    Pass) and, for a move without a slide, end where the moved pawn then stands; moves share
    all their clicks only when an 11 can move onto a pawn or swap with it."""
    r = get_rules(rules)
    rng = np.random.default_rng(0)
    checked = 0
    for seed in range(6):
        state = game.new_state(r, players, seed=seed)
        for _ in range(150):
            if game.winner(state) is not None:
                break
            me = game.to_move(state)
            side = [s for s in game.seats(state) if game.same_side(r, s, me)]
            legal = game.legal_actions(state, r)
            plans = {}
            for a in legal:
                clicks = click_plan(state, r, a)
                cells = [k for k in clicks if not k.startswith("card:")]
                plans.setdefault(tuple(clicks), []).append(a)
                first = cells[0]
                kind = game.decode_action(r, a)[0]
                if kind in ("pass", "no_fire_move"):
                    assert first == "pass"
                elif kind == "discard":
                    assert first.startswith("discard:")
                elif kind in ("start", "sorry"):
                    assert first in {f"start:{s}" for s in side}
                else:
                    stands = {
                        cell_key(s, int(state[E.PAWNS + s * E.MAX_SLOTS + k]))
                        for s in side
                        for k in range(r.pawns_per_player)
                    }
                    assert first in stands, (rules, a, clicks)
                lands = cells[1].startswith(("track:", "safe:", "home:")) if len(cells) > 1 else False
                if kind in ("move", "back1", "start", "seven_part") and lands:
                    after = game.after_move(state, r, a)
                    now = {
                        cell_key(s, int(after[E.PAWNS + s * E.MAX_SLOTS + k]))
                        for s in side
                        for k in range(r.pawns_per_player)
                    }
                    square = int(cells[1].split(":")[1]) if cells[1].startswith("track:") else None
                    slid = square is not None and any(step.slide for step in trace_move(state, r, a, after).steps)
                    assert slid or cells[1] in now, (rules, a, clicks, game.describe_action(state, r, a))
                    checked += 1
            for clicks, actions in plans.items():
                if len(actions) > 1:
                    # Fire and Ice: the token choices of one card move share its clicks (the page asks which)
                    tokens = {game.action_token(r, a) for a in actions}
                    one_move = len({game.decode_action(r, a) for a in actions}) == 1 and len(tokens) == len(actions)
                    kinds = sorted(game.decode_action(r, a)[0] for a in actions)
                    assert one_move or kinds == ["move", "swap"], (rules, clicks, kinds)
            state = game.step(state, r, int(rng.choice(legal)))
    assert checked > 100


def test_moves_are_told_with_their_consequences_and_pawns_keep_their_labels():
    r = get_rules("hasbro2003")
    session = GameServer(GameStore(), None, "heuristic").create({"players": 2, "opponents": ["heuristic"]})
    d = {
        "to_move": 0,
        "card": "4",
        "pawns": [
            [["track", 20], ["safe", 3], ["start"], ["start"]],
            None,
            [["track", 18], ["start"], ["start"], ["start"]],
            None,
        ],
    }
    session.state = state_from_dict(d, r, seed=0)
    session.shown = session.game.play_view(session.state, session.human_seat)
    view = session.view()
    assert view["labels"] == [["R1", "R2", "R3", "R4"], None, ["Y1", "Y2", "Y3", "Y4"], None]
    assert view["state"]["pawns"][0][1] == ["track", 20]  # R2 stands on square 20
    # 20 back 4 = 16, Blue's slide triangle: R2 slides to 19 over Yellow's pawn on 18.
    move = next(m for m in view["legal"] if m["clicks"] == ["track:20", "track:16"])
    assert "R2" in move["description"] and "slides to square 19" in move["description"]
    assert "Y1 back to Start" in move["description"]
    events = session.play(move["action"])
    assert events[0]["text"] == f"Red (you) plays 4: {move['description']}."
    after = session.view() if session.version == 1 else events[0]
    pawns, labels = events[0]["state"]["pawns"][0], events[0]["labels"][0]
    assert labels[pawns.index(["track", 19])] == "R2"  # the same pawn, in a new slot
    assert events[0]["labels"][2][events[0]["state"]["pawns"][2].index(["start"])] in ("Y1", "Y2", "Y3", "Y4")
    assert after


def test_the_view_hides_other_hands(client):
    view = new_game(client, rules="hasbro2003_points", players=3)["game"]
    hands = view["state"]["hands"]
    assert hands[0] and sum(hands[0].values()) == 5 and hands[1] is None and hands[2] is None
    assert all(m["clicks"][0].startswith(("card:", "discard:")) for m in view["legal"])
    full = state_to_dict(store(client).get(view["id"]).state, get_rules("hasbro2003_points"))
    assert full["hands"][1] is not None  # the server knows them; the page is not told


def test_sorry_serve_refuses_bad_options(capsys):
    for argv, words in [
        (["--port", "70000"], "--port must be 1..65535"),
        (["--ttl", "0"], "--ttl must be a number of minutes above 0"),
        (["--checkpoints", "/no/such/dir"], "is not a folder"),
        (["--hint-agent", "oracle"], "unknown agent 'oracle'"),
    ]:
        with pytest.raises(SystemExit) as stop:
            serve_main(argv)
        assert stop.value.code == 2
        assert words in capsys.readouterr().err
    assert json.dumps(click_plan(game.new_state("hasbro2003", 2, seed=0), "hasbro2003", 0))


@pytest.mark.skipif(not (DEFAULT_CHECKPOINTS / "sorry-2p.safetensors").is_file(), reason="no shipped 2-player policy")
def test_a_shipped_policy_plays_by_its_listed_name(client):
    view = new_game(client, rules="hasbro2003", opponents=["checkpoints/sorry-2p.safetensors"], seed=5)["game"]
    assert view["seats"][1]["player"] == "sorry-2p.safetensors"
    for _ in range(4):
        r = client.post(f"/api/games/{view['id']}/move", json={"action": view["legal"][0]["action"]})
        assert r.status_code == 200
        view = r.json()["game"]
    assert sum(e["player"] == "sorry-2p.safetensors" for e in view["log"]) >= 3  # the policy answered
    r = client.post("/api/games", json={"players": 4, "opponents": ["checkpoints/sorry-2p.safetensors"]})
    assert r.status_code == 422 and "with 2 players, not hasbro2003 with 4" in r.json()["error"]


def test_sorry_serve_and_the_load_test_run_on_the_loopback_address():
    """bench_serve starts `python -m sorry_env.agents.play.serve` (default host 127.0.0.1) and plays games on it."""
    bench = os.path.join(os.path.dirname(__file__), "..", "benchmarks", "bench_serve.py")
    out = subprocess.run(
        [sys.executable, bench, "--games", "2", "--moves", "3", "--seconds", "60"],
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    line = out.stdout.strip().splitlines()[-1]
    assert line.startswith("at once: 2 games, 6 moves in ") and "move latency median" in line, out.stdout


def test_moves_reaching_the_same_position_are_listed_once():
    r = get_rules("hasbro2003")
    session = GameServer(GameStore(), None, "heuristic").create({"players": 2, "opponents": ["heuristic"]})
    d = {
        "to_move": 0,
        "card": "7",
        "pawns": [[["track", 20], ["track", 40], ["start"], ["start"]], None, [["start"]] * 4, None],
    }
    session.state = state_from_dict(d, r, seed=0)
    session.shown = session.game.play_view(session.state, session.human_seat)
    legal = session.view()["legal"]
    listed = [m for m in legal if m["listed"]]
    assert len(legal) == len(game.legal_actions(session.state, r))  # every order stays playable
    assert len(listed) == len(game.equivalent_actions(session.state, r)) < len(legal)
    positions = {game.after_move(session.state, r, m["action"]).tobytes() for m in listed}
    assert len(positions) == len(listed)  # each outcome listed once
    assert {game.after_move(session.state, r, m["action"]).tobytes() for m in legal} == positions
