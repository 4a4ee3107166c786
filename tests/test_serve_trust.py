"""The browser server's trust boundary (issue 23): a client picks opponents only from the
server's list, never names code or a file; foreign hosts and cross-site state changes are
refused; bodies, integers and seeds are bounded; search moves keep the server answering.

Every request goes through the HTTP interface only, so each test ran (and failed) against
the server before these checks existed."""

import json
import os
import pathlib
import threading
import time
import warnings
import zipfile

import pytest

pytest.importorskip("starlette", reason="the serve extra (starlette) is not installed")

with warnings.catch_warnings():  # Starlette 1.x prefers httpx2 for its TestClient; httpx still works
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from sorry_env.agents import AGENTS
from sorry_env.agents.play.serve import main as serve_main
from sorry_env.agents.play.serve.app import create_app
from sorry_env.agents.play.serve.games import GameStore

BASE = "http://127.0.0.1:8000"
NEW_GAME = {"players": 2, "rules": "hasbro2003_fast", "seed": 1}


@pytest.fixture
def client():
    app = create_app(GameStore(ttl=600, max_games=8), hint_agent="heuristic")
    with TestClient(app, base_url=BASE) as c:
        yield c


def games(client) -> int:
    return len(client.app.state.server.store)


def test_the_timeit_reproducer_never_creates_the_marker_file(client, tmp_path):
    marker = tmp_path / "marker"
    spec = f'timeit:timeit:stmt=__import__("pathlib").Path("{marker}").touch(),number=1'
    r = client.post("/api/games", json={**NEW_GAME, "opponents": [spec]})
    assert r.status_code == 422 and "unknown opponent" in r.json()["error"]
    assert not marker.exists()
    # nor as the hint agent's place, a second opponent, or with the alias spelling
    r = client.post("/api/games", json={**NEW_GAME, "players": 3, "opponents": ["random", spec]})
    assert r.status_code == 422 and not marker.exists()
    assert games(client) == 0


def test_os_abort_is_refused_without_being_called(client, monkeypatch):
    calls = []
    monkeypatch.setattr(os, "abort", lambda *a: calls.append(a))
    for spec in ("os:abort", "os:abort:x=1", "sorry_env.agents.random_agent:RandomAgent"):
        r = client.post("/api/games", json={**NEW_GAME, "opponents": [spec]})
        assert r.status_code == 422, r.text
        assert "unknown opponent" in r.json()["error"]
    assert calls == [] and games(client) == 0


def test_a_cross_site_post_is_refused(client):
    body = json.dumps({**NEW_GAME, "opponents": ["random"]}).encode()
    # A page on another site may POST text/plain without a preflight: refused, nothing made.
    for headers, status in [
        ({"content-type": "text/plain", "origin": "http://evil.example"}, 403),
        ({"content-type": "text/plain"}, 415),
        ({"content-type": "application/x-www-form-urlencoded"}, 415),
        ({"content-type": "application/json", "origin": "http://evil.example"}, 403),
        ({"content-type": "application/json", "origin": "http://127.0.0.1:9999"}, 403),  # another port
        ({"content-type": "application/json", "origin": "null"}, 403),
        ({"content-type": "application/json", "sec-fetch-site": "cross-site"}, 403),
    ]:
        r = client.post("/api/games", content=body, headers=headers)
        assert r.status_code == status, (headers, r.status_code, r.text)
        assert "error" in r.json()
    assert games(client) == 0
    gid = client.post("/api/games", content=body, headers={"content-type": "application/json"}).json()["game"]["id"]
    r = client.delete(f"/api/games/{gid}", headers={"origin": "http://evil.example"})
    assert r.status_code == 403 and games(client) == 1
    # the page's own requests: same origin, JSON
    r = client.post("/api/games", content=body, headers={"content-type": "application/json", "origin": BASE})
    assert r.status_code == 201 and games(client) == 2


def test_a_foreign_host_is_refused(client):
    for host in ("evil.example", "evil.example:8000", "127.0.0.1.evil.example", "[::2]:8000"):
        for method, path in [("GET", "/api/options"), ("GET", "/"), ("GET", "/static/app.js"), ("POST", "/api/games")]:
            r = client.request(method, path, json=NEW_GAME, headers={"host": host})
            assert r.status_code == 400, (host, method, path, r.status_code)
            assert "not the Host" in r.json()["error"]
    assert games(client) == 0
    for host in ("127.0.0.1:8000", "localhost:8000", "[::1]:8000", "LOCALHOST"):
        assert client.get("/api/layout", headers={"host": host}).status_code == 200, host


@pytest.mark.parametrize(
    "spec, words",
    [
        ("montecarlo:iterations=4000000000000000000", "from 1 to 1000"),
        ("mcts:iterations=1001", "from 1 to 1000"),
        ("montecarlo:rollout_plies=0", "from 1 to 10"),
        ("montecarlo:epsilon=nan", "a number"),
        ("montecarlo:value=/etc/passwd", "has no setting 'value'"),
        ("expectimax:depth=50", "from 1 to 3"),
        ("expectimax:samples=100000", "from 1 to 16"),
        ("expectimax:depth=-1", "an integer"),
        ("expectimax:depth=3.0", "an integer"),
    ],
)
def test_a_huge_search_setting_is_refused_at_game_creation(client, spec, words):
    r = client.post("/api/games", json={**NEW_GAME, "opponents": [spec]})
    assert r.status_code == 422, r.text
    assert words in r.json()["error"]
    assert games(client) == 0


def test_every_registered_agent_has_caps_and_the_options_list_them(client):
    from sorry_env.agents.play.serve.opponents import NOT_OFFERED, SETTING_CAPS

    # a new agent is offered only once its caps are decided, or left out with a reason
    classes = set(AGENTS.values())
    assert (set(SETTING_CAPS) | set(NOT_OFFERED)) & classes == classes and not set(SETTING_CAPS) & set(NOT_OFFERED)
    opts = client.get("/api/options").json()
    assert opts["settings"]["montecarlo"]["iterations"] == [1, 1000]
    assert set(opts["agents"]) == {name for name, cls in AGENTS.items() if cls in SETTING_CAPS}
    for spec in ("random", "greedy", "heuristic", "expectimax:depth=2", "montecarlo:iterations=50", "mcts"):
        r = client.post("/api/games", json={**NEW_GAME, "opponents": [spec]})
        assert r.status_code == 201, (spec, r.text)


def _open_fifo_for_writing_later(path: pathlib.Path):
    """Unblocks a reader stuck opening the FIFO `path` (if the server ever opened it)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
    except OSError:
        pass


def test_a_path_to_any_file_is_refused_without_opening_it(client, tmp_path):
    fifo_policy, fifo_zip = tmp_path / "x.safetensors", tmp_path / "model.zip"
    os.mkfifo(fifo_policy)
    os.mkfifo(fifo_zip)
    real_zip = tmp_path / "real.zip"
    with zipfile.ZipFile(real_zip, "w") as z:
        z.writestr("data", json.dumps({"policy_kwargs": {":serialized:": "gASV"}}))
    names = [
        "/etc/passwd",
        "/etc/shadow",
        "/no/such/file.safetensors",
        str(fifo_policy),
        str(fifo_zip),
        str(real_zip),
        "../../../../etc/passwd",
        "checkpoints/../../../../etc/passwd",
        "file:///etc/passwd",
    ]
    answers = {}

    def ask():
        for name in names:
            answers[name] = client.post("/api/games", json={**NEW_GAME, "opponents": [name]})

    worker = threading.Thread(target=ask, daemon=True)
    worker.start()
    worker.join(timeout=60)
    hung = worker.is_alive()
    deadline = time.monotonic() + 60
    while worker.is_alive() and time.monotonic() < deadline:  # let a server that opened them go on
        _open_fifo_for_writing_later(fifo_policy)
        _open_fifo_for_writing_later(fifo_zip)
        time.sleep(0.1)
    assert not hung, "the server opened a FIFO a client named"
    tails = set()
    for name, r in answers.items():
        assert r.status_code == 422, (name, r.text)
        error = r.json()["error"]
        for leak in ("bytes", "header", "exist", "size", "permission", "not a file", "mib", "zip"):
            assert leak not in error.lower().replace(name.lower(), ""), (name, error)
        assert "unknown opponent" in error, error
        tails.add(error.split("unknown opponent", 1)[1].split(repr(name), 1)[1])
    # an existing file, a missing one, a FIFO and a zip all get the same words: nothing to probe
    assert len(tails) == 1, tails
    assert games(client) == 0


def test_only_listed_policies_play_and_a_damaged_one_is_a_refusal(tmp_path):
    from test_play import write_policy  # tests/ is on sys.path (pytest rootdir import mode)

    folder = tmp_path / "mine"
    folder.mkdir()
    write_policy(folder / "p2.safetensors", num_players=2)
    os.mkfifo(folder / "fifo.safetensors")  # not a regular file: never listed, never opened
    (folder / "big.safetensors").write_bytes(b"\0")
    os.truncate(folder / "big.safetensors", 2**31)  # a 2 GB sparse file: over the size cap
    (folder / "pickle.safetensors").write_bytes(b"\x80\x04\x95" + b"\0" * 64)  # pickle bytes
    outside = tmp_path / "outside.safetensors"
    write_policy(outside, num_players=2)
    start = time.monotonic()
    app = create_app(GameStore(), checkpoints=folder, hint_agent="heuristic")
    assert time.monotonic() - start < 30
    with TestClient(app, base_url=BASE) as client:
        specs = {p["spec"] for p in client.get("/api/options").json()["policies"]}
        assert "mine/p2.safetensors" in specs
        assert not {"mine/fifo.safetensors", "mine/big.safetensors", "mine/pickle.safetensors"} & specs
        body = {"players": 2, "rules": "hasbro2003", "seed": 3}
        r = client.post("/api/games", json={**body, "opponents": ["mine/p2.safetensors"]})
        assert r.status_code == 201, r.text
        assert r.json()["game"]["seats"][1]["player"] == "p2.safetensors"
        for name in (str(outside), str(folder / "p2.safetensors"), "mine/pickle.safetensors", "mine/big.safetensors"):
            r = client.post("/api/games", json={**body, "opponents": [name]})
            assert r.status_code == 422 and "unknown opponent" in r.json()["error"], (name, r.text)
        r = client.post("/api/games", json={**body, "players": 4, "opponents": ["mine/p2.safetensors"]})
        assert r.status_code == 422 and "with 2 players, not hasbro2003 with 4" in r.json()["error"]
        # the listed file is damaged after start-up: a 422 naming it, not a 500 or a traceback
        (folder / "p2.safetensors").write_bytes(b"\x80\x04\x95 pickled")
        r = client.post("/api/games", json={**body, "opponents": ["mine/p2.safetensors"]})
        assert r.status_code == 422 and "could not be loaded" in r.json()["error"], r.text
        assert "Traceback" not in r.text


@pytest.mark.parametrize(
    "raw, status, words",
    [
        (b'{"seed": ' + b"9" * 5000 + b"}", 400, "digits"),
        (b'{"seed": -' + b"9" * 30 + b"}", 400, "digits"),
        (b"[" * 30_000 + b"]" * 30_000, 400, "nests deeper"),
        (b'{"opponents": ' + b"[" * 20 + b"]" * 20 + b"}", 400, "nests deeper"),
        (b'{"seed": NaN}', 400, "NaN"),
        (b'{"seed": Infinity}', 400, "Infinity"),
        (b'{"seed": 4294967296}', 422, "seed must be below 4294967296"),
        (b'{"seed": 1e400}', 422, "seed must be a non-negative integer"),
        (b'{"rules": "' + b"x" * 50_000 + b'"}', 422, "rules must be one of the board game Sorry!'s rule sets"),
        (b'{"opponents": ["' + b"x" * 5_000 + b'"]}', 422, "at most 200 characters"),
    ],
)
def test_huge_integers_deep_nesting_and_big_seeds_are_4xx(client, raw, status, words):
    r = client.post("/api/games", content=raw, headers={"content-type": "application/json"})
    assert r.status_code == status, r.text[:300]
    assert words in r.json()["error"] and len(r.json()["error"]) < 400
    assert games(client) == 0


def test_a_move_with_huge_or_deep_values_changes_nothing(client):
    view = client.post("/api/games", json={**NEW_GAME, "opponents": ["random"]}).json()["game"]
    for raw in (b'{"action": ' + b"1" * 5000 + b"}", b'{"action": ' + b"[" * 30_000 + b"]" * 30_000 + b"}"):
        r = client.post(f"/api/games/{view['id']}/move", content=raw, headers={"content-type": "application/json"})
        assert r.status_code == 400, r.text[:200]
    assert client.get(f"/api/games/{view['id']}").json()["game"] == view


@pytest.mark.parametrize("ttl", ["nan", "inf", "-1", "0", "-inf", "1e300"])
def test_sorry_serve_refuses_a_ttl_that_is_not_a_positive_finite_time(ttl, capsys):
    with pytest.raises(SystemExit) as stop:
        serve_main([f"--ttl={ttl}"])
    assert stop.value.code == 2
    assert "--ttl must be" in capsys.readouterr().err
    if ttl != "1e300":  # a week at most on the command line; the store takes any finite positive time
        with pytest.raises(ValueError, match="ttl must be positive"):
            GameStore(ttl=float(ttl))


def test_sorry_serve_refuses_bad_budget_and_workers(capsys):
    for argv, words in [
        (["--move-seconds", "nan"], "--move-seconds must be"),
        (["--move-seconds", "0"], "--move-seconds must be"),
        (["--workers", "0"], "--workers must be"),
        (["--max-games", "100000000"], "--max-games must be"),
        (["--hint-agent", "montecarlo:iterations=1001"], "from 1 to 1000"),
    ]:
        with pytest.raises(SystemExit) as stop:
            serve_main(argv)
        assert stop.value.code == 2
        assert words in capsys.readouterr().err, argv


def test_a_search_over_its_budget_is_replaced_by_the_heuristic_and_the_game_goes_on():
    app = create_app(GameStore(), hint_agent="montecarlo:iterations=1000", workers=1, move_budget=0.02)
    with TestClient(app, base_url=BASE) as client:
        body = {"players": 4, "rules": "hasbro2003_points", "seed": 2, "opponents": ["montecarlo:iterations=1000"]}
        r = client.post("/api/games", json=body)
        assert r.status_code == 201, r.text
        view = r.json()["game"]
        notes = [e["text"] for e in r.json()["events"]]  # the opponents may move first
        for _ in range(6):
            hint = client.get(f"/api/games/{view['id']}/hint")
            assert hint.status_code == 200 and hint.json()["hint"]["action"] in {m["action"] for m in view["legal"]}
            notes.append(hint.json()["hint"]["note"])
            r = client.post(f"/api/games/{view['id']}/move", json={"action": view["legal"][0]["action"]})
            assert r.status_code == 200, r.text
            view = r.json()["game"]
            notes += [e["text"] for e in r.json()["events"][1:]]
        # Searches of about a second cannot fit in 0.02 s: the worker is killed (its budget ran
        # out), and until its replacement has started no worker is free within the budget.
        timed_out = [n for n in notes if n and "the heuristic moved instead" in n]
        assert any("budget" in n for n in timed_out), notes
        assert client.get("/api/layout").status_code == 200
