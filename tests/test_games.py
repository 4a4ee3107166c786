"""Every registered game (sorry_env.games), the same tests: the PettingZoo API and seed tests
on its env, pickling mid-game, random-simulation invariants of its functional API, chance
nodes, its rules codec, and malformed positions refused. The toy game of tests/toy_race is
registered here only, to show a new game needs its folder and one registry line."""

import json
import pickle

import numpy as np
import pytest
import toy_race  # noqa: F401 (registers the toy game)
from pettingzoo.test import api_test, seed_test

from sorry_env import games
from sorry_env.game_env import wrap_env

GAME_IDS = sorted(games.registered_games())
CASES = [(game_id, n) for game_id in GAME_IDS for n in games.game_type(game_id).player_counts]


def test_the_built_in_games_and_the_toy_are_registered():
    assert {"sorry", "express", "toy_race"} <= set(GAME_IDS)


def random_legal(obs, rng):
    return int(rng.choice(np.flatnonzero(obs["action_mask"])))


def play(e, n_steps, rng):
    for _ in range(n_steps):
        obs, _, term, trunc, _ = e.last()
        if term or trunc:
            return
        e.step(random_legal(obs, rng))


def snapshot(e):
    u = e.unwrapped
    return {
        "state": json.dumps(u.state_dict(), sort_keys=True),
        "agents": list(u.agents),
        "selection": u.agent_selection,
        "rewards": dict(u.rewards),
        "cum": dict(u._cumulative_rewards),
        "terms": dict(u.terminations),
        "truncs": dict(u.truncations),
        "obs": {a: {k: v.tolist() for k, v in u.observe(a).items()} for a in u.agents},
        "array": u.state_array.tolist(),
    }


def raw(game_id, n):
    return games.load_game(game_id).make_env(n)


def wrapped(game_id, n):
    return wrap_env(games.load_game(game_id).make_env(n))


@pytest.mark.parametrize("make", [raw, wrapped])
@pytest.mark.parametrize("game_id,n", CASES)
def test_api_test(game_id, n, make):
    api_test(make(game_id, n), num_cycles=200)


@pytest.mark.parametrize("make", [raw, wrapped])
@pytest.mark.parametrize("game_id,n", CASES)
def test_seed_test(game_id, n, make):
    seed_test(lambda: make(game_id, n), num_cycles=200)


@pytest.mark.parametrize("game_id,n", CASES)
def test_env_agrees_with_the_game_type(game_id, n):
    g = games.load_game(game_id)
    kind = g.game_type
    e = g.make_env(n)
    e.reset(seed=0)
    assert len(e.possible_agents) == n
    assert all(a in kind.seat_names for a in e.possible_agents)
    agent = e.possible_agents[0]
    assert e.action_space(agent).n == g.num_actions <= kind.num_actions
    assert e.observation_space(agent)["observation"].shape == (kind.observation_size,)
    assert games.game_of_env(e) == g
    assert len(kind.seat_colours) >= max(kind.player_counts) and len(kind.seat_names) >= max(kind.player_counts)


@pytest.mark.parametrize("make", [raw, wrapped])
@pytest.mark.parametrize("game_id,n", CASES)
def test_pickle_round_trip_mid_game(game_id, n, make):
    e = make(game_id, n)
    e.reset(seed=123)
    play(e, 15, np.random.default_rng(n))
    clone = pickle.loads(pickle.dumps(e))
    assert snapshot(clone) == snapshot(e)
    rng_a, rng_b = np.random.default_rng(99), np.random.default_rng(99)
    for _ in range(300):  # both continue identically
        for x, r in ((e, rng_a), (clone, rng_b)):
            obs, _, term, trunc, _ = x.last()
            x.step(None if (term or trunc) else random_legal(obs, r))
        assert snapshot(clone) == snapshot(e)
        if not e.unwrapped.agents:
            break
    assert e.unwrapped._state is not clone.unwrapped._state


@pytest.mark.parametrize("game_id,n", CASES)
def test_same_seed_same_game_different_seeds_differ(game_id, n):
    g = games.load_game(game_id)

    def run(seed):
        return json.dumps(g.state_to_dict(games.random_playout(g, n, seed, max_turns=30)), sort_keys=True)

    assert run(4) == run(4)
    assert len({run(s) for s in range(6)}) > 1


def check_position(g, state, n):
    """Invariants of one running position of `g`."""
    assert state.dtype == np.int64
    assert g.seats(state) and len(g.seats(state)) == n
    mover = g.to_move(state)
    assert mover in g.seats(state)
    legal = g.legal_actions(state)
    assert len(legal) > 0 and np.all(np.diff(legal) > 0)
    assert 0 <= legal[0] and legal[-1] < g.num_actions
    for seat in g.seats(state):
        obs = g.observation(state, seat)
        assert obs.shape == (g.observation_size,) and obs.dtype == np.float32
        assert np.all((obs >= 0) & (obs <= 1))
    d = g.state_to_dict(state)
    json.dumps(d)
    assert g.state_to_dict(g.state_from_dict(d, seed=1)) == d
    view = g.public_view(state, np.random.default_rng(0))
    assert g.state_to_dict(view) == d  # only hidden parts change
    assert all(isinstance(g.describe_action(state, int(a)), str) for a in legal)
    # The position as text shows the mover nothing the re-drawn view changes (their hidden parts).
    text = g.render_text(state, mover)
    assert isinstance(text, str) and text.strip()
    assert g.render_text(view, mover) == text
    assert g.render_text(view) == g.render_text(state)


@pytest.mark.parametrize("game_id,n", CASES)
def test_random_simulation_invariants(game_id, n):
    g = games.load_game(game_id)
    finished = 0
    for seed in range(8):
        state = g.new_state(n, seed=seed)
        check_position(g, state, n)
        turns = g.turn(state)
        while g.winner(state) is None and g.turn(state) < g.game_type.max_turns:
            state = g.apply(state, int(np.random.default_rng(seed + g.turn(state)).choice(g.legal_actions(state))))
            assert g.turn(state) >= turns
            turns = g.turn(state)
            if g.winner(state) is None:
                assert not g.is_chance_node(state)  # apply resolves chance
                if turns % 7 == 0:
                    check_position(g, state, n)
        if g.winner(state) is not None:
            finished += 1
            assert g.winner(state) in g.seats(state)
            with pytest.raises(ValueError):
                g.legal_actions(state)
    assert finished >= 6  # random play ends long before the turn limit


@pytest.mark.parametrize("game_id,n", CASES)
def test_the_trusted_road_of_a_tournament_plays_the_checked_game(game_id, n):
    # agents.arena.play.Table asks legal_actions_trusted and steps with apply_trusted (no
    # state checks in its hot loop): the same moves and positions as legal_actions and apply.
    g = games.load_game(game_id)
    for seed in range(3):
        checked = g.new_state(n, seed=seed)
        trusted = checked.copy()
        rng = np.random.default_rng(seed)
        while g.is_running(checked, g.game_type.max_turns):
            legal = g.legal_actions(checked)
            assert np.array_equal(g.legal_actions_trusted(trusted), legal)
            action = int(rng.choice(legal))
            checked, trusted = g.apply(checked, action), g.apply_trusted(trusted, action)
            assert np.array_equal(checked, trusted)
        assert g.winning_seats(checked) == g.winning_seats(trusted)


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_chance_nodes(game_id):
    g = games.load_game(game_id)
    n = g.game_type.player_counts[0]
    rng = np.random.default_rng(0)
    state, seen = g.new_state(n, seed=3), 0
    while seen < 20 and g.winner(state) is None:
        after = g.after_move(state, int(rng.choice(g.legal_actions(state))))
        if g.is_chance_node(after):
            seen += 1
            outcomes = g.chance_outcomes(after)
            assert outcomes and abs(sum(p for _, p in outcomes) - 1) < 1e-9
            assert all(p > 0 for _, p in outcomes)
            with pytest.raises(ValueError):
                g.legal_actions(after)
            with pytest.raises(ValueError):
                g.apply_chance(after, "no such outcome")
            names = [name for name, _ in outcomes]
            after = g.apply_chance(after, names[int(rng.integers(len(names)))])
            while g.is_chance_node(after):  # a roll nobody can use passes the turn on
                after = g.apply_chance(after, g.chance_outcomes(after)[0][0])
        else:
            with pytest.raises(ValueError):
                g.chance_outcomes(after)
        state = after
    assert seen >= 5


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_rules_codec_round_trip_and_refusals(game_id):
    cls = games.game_class(game_id)
    for variant in cls.game_type.variants:
        g = games.load_game(game_id, variant)
        data = json.loads(json.dumps(g.variant_to_json()))
        assert cls.from_json(data) == g
    for bad in (None, [], "x", {"name": "no such variant", "extra": 1}):
        with pytest.raises(ValueError, match="here"):
            cls.from_json(bad, where="here")
    with pytest.raises(ValueError):
        games.load_game(game_id, "no such variant")


@pytest.mark.parametrize("game_id", GAME_IDS)
@pytest.mark.parametrize(
    "bad",
    [None, 7, "state", [], {}, {"to_move": 0}, {"to_move": -1, "turn": 0}, {"unknown": 1}],
    ids=repr,
)
def test_malformed_positions_are_refused(game_id, bad):
    g = games.load_game(game_id)
    with pytest.raises(ValueError):
        g.state_from_dict(bad, seed=0)


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_bad_player_counts_and_seeds_are_refused(game_id):
    g = games.load_game(game_id)
    for n in (0, 1, 5, True, 2.0, "2"):
        with pytest.raises(ValueError, match="num_players"):
            g.new_state(n)
    for seed in (-1, 1.5, "1", True):
        with pytest.raises(ValueError, match="seed"):
            g.new_state(g.game_type.player_counts[0], seed=seed)


def test_unknown_game_and_double_registration_are_refused():
    with pytest.raises(ValueError, match="registered games"):
        games.load_game("chess")

    class Other(toy_race.RaceGame):
        pass

    with pytest.raises(ValueError, match="already registered"):
        games.register_game(Other)
    with pytest.raises(TypeError):
        games.register_game(int)


def test_policy_format_keys_name_their_game():
    for game_id in GAME_IDS:
        kind = games.game_type(game_id)
        assert games.game_of_policy_header({kind.policy_format: "{}"}) == game_id
        assert games.game_id_of_env_id(kind.env_id) == game_id
    assert games.game_of_policy_header({"other": "{}"}) is None
    assert len({games.game_type(g).policy_format for g in GAME_IDS}) == len(GAME_IDS)


def test_agents_serve_the_games_that_have_them():
    from sorry_env import agents

    e = games.load_game("express").make_env(2)
    e.reset(seed=0)
    assert agents.action_for(e, "greedy") in games.load_game("express").legal_actions(e.unwrapped.state_array)
    toy = games.load_game("toy_race").make_env(3)
    toy.reset(seed=0)
    rng = np.random.default_rng(0)
    while toy.agents and not any(toy.terminations.values()) and not any(toy.truncations.values()):
        toy.step(agents.action_for(toy, "random", rng))  # random play works for any registered game
    assert any(toy.terminations.values())
    toy.reset(seed=1)
    last = int(games.load_game("toy_race").legal_actions(toy.unwrapped.state_array)[-1])
    assert agents.action_for(toy, lambda obs: int(np.flatnonzero(obs["action_mask"])[-1])) == last
    with pytest.raises(
        ValueError, match=r"unknown agent 'heuristic' for Race \(toy\); choose from \['greedy', 'playouts', 'random'\]"
    ):
        agents.action_for(toy, "heuristic")
    with pytest.raises(ValueError, match="plays the board game Sorry!; it cannot play Race"):
        agents.action_for(toy, agents.HeuristicAgent())  # a board-game agent reads the board's Turn
    with pytest.raises(TypeError, match="registered game"):
        agents.action_for(object(), "random")


def test_the_agents_of_any_game_are_written_once():
    """random, greedy (over the game's evaluation) and settings parsing, for a game that
    declares nothing but an evaluation (the toy race), through the same make_agent."""
    from sorry_env import agents
    from sorry_env.agent import GameTurn

    toy = games.load_game("toy_race")
    assert sorted(agents.agents_of_game("toy_race")) == ["greedy", "playouts", "random"]
    assert {"heuristic", "expectimax", "montecarlo", "greedy", "playouts", "random"} <= set(
        agents.agents_of_game("express")
    )
    greedy = agents.make_agent("greedy", seed=0, game="toy_race")
    state = toy.state_from_dict({"to_move": 0, "turn": 4, "positions": [9, 5], "roll": 3})
    assert greedy.act(GameTurn.from_state(toy, state, np.random.default_rng(0))) == 0  # 9 + 3 wins
    state = toy.state_from_dict({"to_move": 1, "turn": 4, "positions": [9, 5], "roll": 2})
    assert greedy.act(GameTurn.from_state(toy, state, np.random.default_rng(0))) == 0  # advance 2, not 1
    with pytest.raises(ValueError, match="agent 'greedy' has no setting 'depth'"):
        agents.make_agent("greedy:depth=2", game="toy_race")
    with pytest.raises(ValueError, match="runs code"):
        agents.make_agent("toy_race.agents:Nothing", game=toy, allow_code=False)
    with pytest.raises(ValueError, match="sb3 models play the board game"):
        agents.make_agent("model.zip", game="toy_race")
    with pytest.raises(ValueError, match="unknown game"):
        agents.make_agent("random", game="chess")


def test_the_playout_search_of_any_game_finds_a_win_and_beats_random():
    """`playouts`, the search written once over the registry's API: it takes the toy race's
    winning move, its choices follow from its seed, it is refused out of range, and on Express
    (a game it knows nothing about) it beats random play."""
    from sorry_env import agents
    from sorry_env.agent import GameTurn
    from sorry_env.agents.arena.tournament import run_tournament

    toy = games.load_game("toy_race")
    state = toy.state_from_dict({"to_move": 1, "turn": 4, "positions": [5, 9], "roll": 3})
    turn = GameTurn.from_state(toy, state, np.random.default_rng(0))
    assert len(turn.legal) > 1
    assert agents.make_agent("playouts:playouts=5", seed=0, game=toy).act(turn) == 0  # 9 + 3 wins at once
    express = games.load_game("express")
    picks = []
    for seed in (3, 3):
        rng, agent = np.random.default_rng(1), agents.make_agent("playouts:playouts=4", seed=seed, game=express)
        state = express.new_state(2, seed=2)
        moves = []
        while express.winner(state) is None and len(moves) < 12:
            legal = express.legal_actions(state)
            action = agent.act(GameTurn.from_state(express, state, rng, legal))
            assert action in legal
            moves.append(action)
            state = express.apply(state, action)
        picks.append(moves)
    assert picks[0] == picks[1]
    for bad in ("playouts:playouts=0", "playouts:max_turns=-1"):
        with pytest.raises(ValueError, match="playouts|max_turns"):
            agents.make_agent(bad, game=express)
    results = run_tournament(["playouts:playouts=10", "random"], game="express", games=60, seed=0, workers=1)
    assert results["agents"][0]["win_rate"] > 0.6  # seed 0: 72% over 100 games (random: an even share is 50%)


def test_a_tournament_and_a_trained_policy_of_the_toy_game(tmp_path):
    """The generic table plays the toy game by id; the generic PPO trains it, its policy file
    loads as the toy's only, and plays in a tournament."""
    from sorry_env import agents
    from sorry_env.agents.arena.tournament import run_tournament
    from sorry_env.training import game_ppo
    from sorry_env.training.config import GAME_PPO

    results = run_tournament(["greedy", "random"], game="toy_race", games=40, seed=1, workers=1)
    assert results["config"]["rules"] == "toy_race" and results["config"]["seats"] == [0, 1]
    assert sum(row["wins"] for row in results["agents"]) + results["truncated"] == 40
    again = run_tournament(["greedy", "random"], game="toy_race", games=40, seed=1, workers=1)
    assert again["games"] == results["games"]  # a seed fixes the games
    assert results["agents"][0]["wins"] > results["agents"][1]["wins"]  # greedy beats random over 40 games
    tiny = {"games": 8, "hidden": [8], "steps": 30, "opponents": ["greedy", "random"], "mix": [1.0, 1.0]}
    cfg = GAME_PPO.load(None, {"game": "toy_race", **tiny})
    actor, training = game_ppo.train(cfg, log=None)
    path = tmp_path / "toy.safetensors"
    game_ppo.save(path, cfg, actor, training)
    policy = agents.make_agent(str(path), game="toy_race")
    assert policy.name == "policy:toy" and training["learner_steps"] >= 30
    played = run_tournament([str(path), "random", "random"][:2], game="toy_race", games=8, seed=0, workers=1)
    assert played["agents"][0]["games"] == 8
    with pytest.raises(ValueError, match="policy file for Race \\(toy\\), not Sorry! Express"):
        agents.make_agent(str(path), game="express")
    with pytest.raises(ValueError, match="trained for 2 players, not 3"):
        run_tournament([str(path), "random", "random"], game="toy_race", games=3, workers=1)
    with pytest.raises(ValueError, match="policy file for Race"):
        agents.make_agent(str(path))  # the board game's loader names the file's game


def test_one_rules_codec_for_replays_and_policy_files():
    import dataclasses

    from sorry_env.board.policy_input import rules_from_dict
    from sorry_env.board.rules import PRESETS, rules_from_json, rules_to_json
    from sorry_env.replay import ReplayError, game_of_record, record_game

    data = rules_to_json("hasbro2013_fire_ice")
    assert rules_from_json(json.loads(json.dumps(data))) == PRESETS["hasbro2013_fire_ice"]
    older = {k: v for k, v in rules_to_json("hasbro2003").items() if k != "fire_ice"}  # files before Fire and Ice
    assert rules_from_json(older) == PRESETS["hasbro2003"]
    no_pack = {k: v for k, v in data.items() if k != "pack"}
    for bad, words in [({**data, "extra": 1}, "unknown \\['extra'\\]"), (no_pack, "missing \\['pack'\\]")]:
        for reader in (rules_from_json, rules_from_dict):
            with pytest.raises(ValueError, match=words):
                reader(bad, "f.json")
        with pytest.raises(ReplayError, match=words):
            game_of_record({**record_game("hasbro2003", (0, 2), 1, []), "rules": bad})
    with pytest.raises(ValueError, match="f.json: its rules are not valid"):
        rules_from_json({**data, "pawns_per_player": 9}, "f.json")
    assert set(rules_to_json("hasbro2003")) == {f.name for f in dataclasses.fields(PRESETS["hasbro2003"])}
