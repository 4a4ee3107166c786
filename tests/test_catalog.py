"""The shipped policies (issue 16): one per preset family and player count, found by
agents.shipped and sorry-play --list, refused with the fitting file named, and telling their
estimate of a position."""

import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from sorry_env import agents, games
from sorry_env.agents import catalog, make_agent
from sorry_env.agents.policy import Actor, PolicyAgent, read_metadata, save_policy
from sorry_env.board import game
from sorry_env.board.rules import get_rules

FAMILIES = [
    ("hasbro2003", 2),
    ("hasbro2003", 3),
    ("hasbro2003", 4),
    ("hasbro2003_teams", 4),
    ("parker1958_teams", 4),
    ("hasbro2013", 2),
    ("hasbro2013", 4),
    ("hasbro2003_points", 2),
    ("hasbro2003_points", 4),
]


@pytest.mark.parametrize("rules,players", FAMILIES)
def test_every_family_has_a_shipped_policy_trained_for_it(rules, players):
    path = agents.shipped(rules, players)
    meta = read_metadata(path)
    assert (meta["rules"]["name"], meta["num_players"]) == (rules, players)
    assert catalog.find(get_rules(rules), players).path == path  # a Rules object finds it too
    assert isinstance(make_agent(catalog.find(rules, players).name), PolicyAgent)


def test_a_game_without_a_shipped_policy_gets_a_clear_error(tmp_path, monkeypatch):
    with pytest.raises(
        ValueError, match="no shipped policy for rules 'hasbro2003_fast' with 2 players; shipped for it: "
    ) as refused:
        agents.shipped("hasbro2003_fast", 2)
    assert "express-2p" not in str(refused.value)  # only the policies of the game asked for
    with pytest.raises(ValueError, match=r"Sorry! Express with 3 players; shipped for it: express-2p \("):
        agents.shipped(games.load_game("express"), 3)
    with pytest.raises(ValueError, match="hasbro2013-4p"):  # the message lists what exists
        agents.shipped("hasbro2013", 3)
    monkeypatch.setenv("SORRY_CHECKPOINTS", str(tmp_path))
    with pytest.raises(ValueError, match="hasbro2013-2p should be .* that file is missing"):
        agents.shipped("hasbro2013", 2)
    with pytest.raises(ValueError, match="stands for the shipped policy of a game and player count"):
        make_agent("trained")
    with pytest.raises(ValueError, match="no shipped policy for rules 'hasbro2003_fast' with 2 players"):
        make_agent("trained", game=games.load_game("sorry", "hasbro2003_fast"), players=2)


def test_trained_is_the_shipped_policy_of_the_game_and_player_count_asked_for():
    for played, players, file in [
        (games.load_game("sorry", "hasbro2013"), 4, "hasbro2013-4p.safetensors"),
        (games.load_game("sorry"), 2, "sorry-2p.safetensors"),
        (games.load_game("express"), 2, "express-2p.safetensors"),
    ]:
        agent = make_agent("trained", game=played, players=players)
        assert isinstance(agent, PolicyAgent) and os.path.basename(agent.path) == file
        agent.check_game(played.agent_rules, players)  # the file fits the game it was made for


def test_a_policy_for_another_game_is_refused_naming_the_file_that_fits():
    agent = make_agent("hasbro2003-2p")
    with pytest.raises(ValueError) as info:
        agent.check_game("hasbro2013", 2)
    message = str(info.value)
    assert "trained for rules 'hasbro2003' with 2 players, not 'hasbro2013'" in message
    assert "the shipped policy for hasbro2013 with 2 players is hasbro2013-2p" in message
    with pytest.raises(ValueError, match=r"trained for 2 players, not 3 .*hasbro2003-3p"):
        agent.check_game("hasbro2003", 3)
    with pytest.raises(ValueError, match="no shipped policy plays hasbro2003_fast with 2 players"):
        agent.check_game("hasbro2003_fast", 2)


def run_play(args, stdin=""):
    return subprocess.run(
        [sys.executable, "-m", "sorry_env.agents.play", *args], input=stdin, capture_output=True, text=True, timeout=600
    )


@pytest.mark.ci_slow  # over 10 s: CI runs it after the README's test command
def test_sorry_play_lists_the_catalog_and_plays_the_trained_policy_by_name():
    listing = run_play(["--list"])
    assert listing.returncode == 0, listing.stderr
    for rules, players in FAMILIES:
        entry = catalog.find(rules, players)
        line = next(line for line in listing.stdout.splitlines() if line.split()[:1] == [entry.name])
        assert f"rules {rules}" in line and f"{players} players" in line and "(missing)" not in line
    result = run_play(["--rules", "hasbro2013", "--players", "4", "--opponents", "trained", "--estimate"], "q\n")
    assert result.returncode == 1, result.stderr
    assert "Blue = trained" in result.stdout and "Win chance (policy:hasbro2013-4p" in result.stdout
    refused = run_play(["--players", "3", "--opponents", "hasbro2003-4p"], "q\n")
    assert refused.returncode == 2 and "legend:" not in refused.stdout
    assert "the shipped policy for hasbro2003 with 3 players is hasbro2003-3p" in refused.stderr
    missing = run_play(["--rules", "hasbro2003_fast", "--opponents", "trained"], "q\n")
    assert missing.returncode == 2 and "no shipped policy for rules 'hasbro2003_fast'" in missing.stderr


def test_win_chance_is_a_probability_from_the_players_own_information(tmp_path):
    torch.manual_seed(0)
    actor = Actor("afterstate", [16], "relu", "hasbro2003_points", value_hidden=[8])
    with torch.no_grad():
        actor.value.layers[-1].bias.fill_(5.0)  # far above +1: the estimate must still be clipped to 1
    network = {"kind": "afterstate", "hidden": [16], "activation": "relu"}
    path = tmp_path / "v.safetensors"
    save_policy(path, actor, rules="hasbro2003_points", num_players=2, network=network, name="v")
    agent = PolicyAgent(path)
    assert agent.has_value and read_metadata(path)["network"]["value_hidden"] == [8]
    state = game.new_state("hasbro2003_points", 2, seed=0)
    assert agent.win_chance(state, "hasbro2003_points", 0) == 1.0
    with torch.no_grad():
        actor.value.layers[-1].bias.fill_(0.0)
    save_policy(path, actor, rules="hasbro2003_points", num_players=2, network=network, name="v")
    agent = PolicyAgent(path)
    chances = [agent.win_chance(state, "hasbro2003_points", seat) for seat in (0, 2)]
    assert all(0.0 <= c <= 1.0 for c in chances) and chances[0] != chances[1]
    with pytest.raises(ValueError, match="trained for 2 players, not 4"):
        agent.win_chance(game.new_state("hasbro2003_points", 4, seed=0), "hasbro2003_points", 0)
    assert make_agent("hasbro2003-2p").win_chance(state, "hasbro2003", 0) is None  # exported without one


@pytest.mark.parametrize("rules,players", [("hasbro2003", 3), ("hasbro2003_points", 2)])
def test_the_shipped_estimates_follow_the_game(rules, players):
    """A shipped value network says the side far ahead is likelier to win than the one behind."""
    agent = PolicyAgent(agents.shipped(rules, players))
    rng = np.random.default_rng(0)
    ahead = behind = 0
    for seed in range(6):
        state = game.new_state(rules, players, seed=seed)
        before = state
        while game.winner(state) is None:
            before = state
            state = game.step(state, rules, int(rng.choice(game.legal_actions(state, rules))))
        # Just before the winning move: the winner is far ahead of the others.
        seats, winner = game.seats(before), game.winner(state)
        chances = [agent.win_chance(before, rules, s) for s in seats]
        assert all(0.0 <= c <= 1.0 for c in chances)
        ahead += chances[seats.index(winner)]
        behind += np.mean([c for s, c in zip(seats, chances) if not game.same_side(rules, s, winner)])
    assert ahead > behind


def test_the_browser_game_offers_the_shipped_policies_by_name_with_an_estimate():
    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from sorry_env.agents.play.serve.app import create_app

    with TestClient(create_app(hint_agent="heuristic"), base_url="http://127.0.0.1:8000") as client:
        options = client.get("/api/options").json()
        shipped = {p["shipped"] for p in options["policies"]}
        assert {catalog.find(r, n).name for r, n in FAMILIES} <= shipped and options["trained"] == "trained"
        body = {"rules": "hasbro2003_points", "players": 2, "opponents": ["trained"], "seed": 3}
        r = client.post("/api/games", json=body)
        assert r.status_code == 201, r.text
        view = r.json()["game"]
        assert view["seats"][1]["player"] == "trained"
        if view["legal"]:
            assert view["estimate"]["agent"] == "hasbro2003_points-2p.safetensors"
            assert 0.0 <= view["estimate"]["win_chance"] <= 1.0
        r = client.post("/api/games", json={**body, "opponents": ["hasbro2013-2p"]})
        assert r.status_code == 422 and "the shipped policy for hasbro2003_points with 2 players" in r.json()["error"]


def test_a_missing_shipped_file_path_names_its_catalog_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # outside the project folder: checkpoints/... is not there
    with pytest.raises(ValueError, match="exist; the shipped sorry-2p.safetensors is the catalog's hasbro2003-2p"):
        agents.make_agent("checkpoints/sorry-2p.safetensors")
    with pytest.raises(ValueError, match=r"mine.safetensors does not exist$"):
        agents.make_agent("mine.safetensors")


def test_tabula_rasa_plays_by_name_as_its_network_alone_and_trained_is_unchanged():
    entry = catalog.BY_NAME["tabula-rasa-2p"]
    meta = read_metadata(entry.path)
    assert (meta["rules"]["name"], meta["num_players"]) == ("hasbro2003", 2)
    training = meta["training"]
    assert training["algorithm"] == "td_lambda_afterstate" and training["from"] == "random weights"
    assert training["decisions"] > 0 and training["cpu_seconds"] > 0
    agent = make_agent("tabula-rasa-2p")
    assert isinstance(agent, PolicyAgent) and agent.metadata == meta
    assert catalog.find("hasbro2003", 2).name == "hasbro2003-2p"  # the game's own policy is still the default
    assert make_agent(catalog.TRAINED, game="sorry", players=2).path == str(agents.shipped("hasbro2003", 2))
    assert "tabula-rasa-2p" in [row["name"] for row in catalog.catalog_rows()]
