"""Issue 37, the second trust round: each hostile input is refused with one short line, before
the allocation it used to make (benchmarks/trust_reproducers.py builds them; here each runs
under a 1.5 GB address-space cap, far below what the old code needed: 4.75 GB for the
7,000,000-width policy, 9.6 GB for the YAML alias bomb, 3.4 GB for the 198 MB JSON), and the
server-side rules."""

from __future__ import annotations

import importlib.util
import json
import pathlib
import sys

import pytest

BENCHMARKS = pathlib.Path(__file__).parent.parent / "benchmarks"
MEMORY_CAP_KB = 1536 * 1024


def _load(name):
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


repro = _load("trust_reproducers")


@pytest.mark.parametrize("name", sorted(repro.REPRODUCERS))
def test_each_reproducer_is_one_line_refusal_under_a_memory_cap(tmp_path, name):
    argv, words = repro.REPRODUCERS[name](tmp_path)
    got = repro.run_capped(argv, MEMORY_CAP_KB, timeout=240)
    lines = repro.error_lines(got["stderr"])
    assert got["returncode"] not in (0, None), got["stderr"][-2000:]
    assert "Traceback" not in got["stderr"] and "MemoryError" not in got["stderr"], got["stderr"][-2000:]
    assert len(lines) == 1 and len(lines[0]) <= 400, lines
    assert words.lower() in lines[0].lower(), lines[0]
    # Refused before the allocation: the whole process stayed far under the cap.
    assert got["peak_mb"] < 1024, got["peak_mb"]
    if name.startswith("yaml_"):
        assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir()), "a refused config made a run"
    if name.startswith("bench_report"):
        assert not list(tmp_path.rglob("*.png")) and not pathlib.Path("/tmp/OUTSIDE.png").exists()


def test_the_network_size_check_runs_before_anything_is_built(monkeypatch, tmp_path):
    """actor_tensors is never reached for a metadata list of millions (it built 14 M entries)."""
    from sorry_env.agents import policy

    monkeypatch.setattr(policy, "actor_tensors", lambda *a, **k: pytest.fail("built before the size check"))
    repro.policy_hidden_bomb(tmp_path)
    with pytest.raises(ValueError, match="at most 16 layers of 1..16,384 units") as info:
        policy.read_metadata(tmp_path / "bomb.safetensors")
    assert len(str(info.value)) < 300


def test_config_integers_are_range_checked(tmp_path):
    from sorry_env.training.config import load_config

    for text, words in (
        ("seed: -1\n", "seed must be >= 0"),
        ("seed: " + "9" * 400 + "\n", "at most 18 digits"),
        ("envs: " + "9" * 30 + "\n", "at most 18 digits"),
        ("ppo: {learning_rate: " + "9" * 400 + "}\n", "must be a number"),
        ("name: [" + ", ".join(["x" * 50] * 10_000) + "]\n", "name must be"),
    ):
        path = tmp_path / "c.yaml"
        path.write_text(text)
        with pytest.raises(ValueError, match=words) as info:
            load_config(path)
        assert len(str(info.value)) < 400


def test_yaml_anchors_without_aliases_and_merge_keys_still_load(tmp_path):
    from sorry_env.training.config import read_yaml

    path = tmp_path / "c.yaml"
    path.write_text("a: &x 1\nb: {c: 2}\n")
    assert read_yaml(path) == {"a": 1, "b": {"c": 2}}


def test_bench_report_plots_labels_as_plain_text(tmp_path):
    """A task id may hold a dot and a dash; the curve is drawn with mathtext off, inside out/."""
    argv = repro._bench_report(tmp_path, {})
    from sorry_env.training.bench.results import build_report

    written = build_report(tmp_path / "runs", tmp_path / "out")
    assert all(path.parent == tmp_path / "out" for path in written)
    assert any(path.suffix == ".png" for path in written), argv


def test_replay_labels_are_printed_inert():
    from sorry_env.checks import printable

    assert printable("bot\x1b[2J\x1b]0;owned\x07\r\u202e") == "bot\\x1b[2J\\x1b]0;owned\\x07\\r\\u202e"
    assert printable("heuristic#2 é") == "heuristic#2 é"


def test_openspiel_errors_and_json_positions():
    pyspiel = pytest.importorskip("pyspiel")
    from sorry_env import openspiel
    from sorry_env.board import state_io
    from sorry_env.board.rules import get_rules

    game = pyspiel.load_game("python_sorry", {"players": 2})
    state = game.new_initial_state()
    with pytest.raises(pyspiel.SpielError, match="not a chance outcome"):
        state.action_to_string(pyspiel.PlayerId.CHANCE, 99)
    with pytest.raises(ValueError, match="max_turns must be a positive integer at most 1,000,000"):
        openspiel.SorryGame({"players": 2, "max_turns": 2**31})
    while state.is_chance_node():
        state.apply_action(state.legal_actions()[0])
    state.apply_action(state.legal_actions()[0])
    while state.is_chance_node():
        state.apply_action(state.legal_actions()[0])
    text = json.dumps(state_io.state_to_dict(state.engine_state, get_rules("hasbro2003")))
    restored = game.new_initial_state(text)
    assert restored.legal_actions() == state.legal_actions() and str(restored) == str(state)
    # At a chance node ("card": null) the restored state is a chance node with the same
    # outcomes, not a decision with a card drawn from a fixed seed.
    for _ in range(25):
        state.apply_action(state.legal_actions()[0])
        while not state.is_chance_node() and not state.is_terminal():
            state.apply_action(state.legal_actions()[0])
    assert state.is_chance_node()
    text = json.dumps(state_io.state_to_dict(state.engine_state, get_rules("hasbro2003")))
    restored = game.new_initial_state(text)
    assert restored.is_chance_node() and restored.chance_outcomes() == state.chance_outcomes()
    with pytest.raises(ValueError, match="JSON"):
        game.new_initial_state("[" * 100_000)


# -- sorry-serve --------------------------------------------------------------------------------


@pytest.fixture
def client():
    pytest.importorskip("httpx")
    from starlette.testclient import TestClient

    from sorry_env.agents.play.serve.app import create_app
    from sorry_env.agents.play.serve.games import GameStore

    app = create_app(GameStore(ttl=600, max_games=4, per_client=2), hint_agent="heuristic", workers=1)
    with TestClient(app, base_url="http://127.0.0.1:8000") as c:
        yield c, app


def test_pages_cannot_be_framed(client):
    c, _ = client
    for path in ("/", "/api/layout", "/static/app.js"):
        r = c.get(path)
        assert r.headers["x-frame-options"] == "DENY"
        assert "frame-ancestors 'none'" in r.headers["content-security-policy"]


def test_two_origin_headers_are_refused(client):
    c, _ = client
    own = "http://127.0.0.1:8000"
    headers = [("origin", "http://evil.example"), ("origin", own), ("content-type", "application/json")]
    r = c.post("/api/games", content=b"{}", headers=headers)
    assert r.status_code == 403 and "one Origin" in r.json()["error"]
    r = c.get("/api/layout", headers=[("host", "127.0.0.1:8000"), ("host", "evil.example")])
    assert r.status_code == 400


def test_a_client_keeps_its_share_of_games_and_a_full_server_builds_no_agent(client, monkeypatch):
    c, app = client
    server = app.state.server
    made = [c.post("/api/games", json={"players": 2, "seed": k}).json()["game"]["id"] for k in range(3)]
    assert len(server.store) == 2  # the client's share: its least recently used game made room
    assert c.get(f"/api/games/{made[0]}").status_code == 404
    assert c.get(f"/api/games/{made[2]}").status_code == 200
    # Fill the rest with another client's games, then a new game is refused before any agent is built.
    from starlette.testclient import TestClient

    other = TestClient(app, base_url="http://127.0.0.1:8000", client=("10.0.0.2", 5000))
    for k in range(2):
        assert other.post("/api/games", json={"players": 2, "seed": 10 + k}).status_code == 201
    built = []
    monkeypatch.setattr(server, "create", lambda body: built.append(body))
    third = TestClient(app, base_url="http://127.0.0.1:8000", client=("10.0.0.3", 5000))
    r = third.post("/api/games", json={"players": 2})
    assert r.status_code == 503 and "maximum of 4 games" in r.json()["error"]
    assert built == [], "agents were built for a full server"


def test_search_workers_keep_a_bounded_agent_cache():
    from sorry_env.agents.play.serve import workers

    class Conn:
        def __init__(self, jobs):
            self.jobs, self.sent = list(jobs), []

        def send(self, message):
            self.sent.append(message)

        def recv(self):
            if not self.jobs:
                raise EOFError
            return self.jobs.pop(0)

    made = []

    class Recorder:
        def __init__(self, **settings):
            made.append(settings)

        def reset(self, seed):
            pass

        def act(self, turn):
            return 0

    jobs = [("rec", (("k", k),), 0, None, "sorry") for k in range(workers.MAX_CACHED_AGENTS + 5)]
    jobs.append(("rec", (("k", 0),), 0, None, "sorry"))  # long evicted: built again
    original = workers._maker
    workers._maker = lambda game_id, name: Recorder
    try:
        workers._worker(Conn(jobs))
    finally:
        workers._maker = original
    assert len(made) == workers.MAX_CACHED_AGENTS + 6


def test_slow_connections_do_not_lock_out_a_fresh_client():
    """The issue's acceptance check, small: ulimit -n 400, 300 half-sent requests, a 1 s read
    deadline; 2 s later a fresh client is answered, and the server logged nothing."""
    pytest.importorskip("uvicorn")
    slow = _load("serve_slow_clients")
    got = slow.run(fd_limit=400, slow_count=300, wait=2.0, read_seconds=1.0, answer_within=5.0)
    assert got["opened"] == 300
    assert got["closed_by_server"] == 300
    assert got["status"] == 200, got
    assert got["tracebacks"] == 0 and got["stderr_bytes"] < 2000, got
