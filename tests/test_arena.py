"""Any agent in the arena: Agent objects and package.module:Name in tournaments, sb3 models
trained on the Gymnasium env, the league, and agents.action_for in a PettingZoo loop."""

import json
import textwrap

import numpy as np
import pytest

import sorry_env
from sorry_env import agents
from sorry_env.agents.arena.cli import main as sorry_eval
from sorry_env.agents.arena.tournament import run_tournament

MODULE = """
import numpy as np
from sorry_env.agents import Agent


class FirstLegal(Agent):
    name = "first_legal"

    def __init__(self, seed=None, offset: int = 0):
        self.offset = offset
        self.reset(seed)

    def act(self, turn):
        return int(turn.legal[min(self.offset, len(turn.legal) - 1)])


def make_first_legal(seed=None):
    return FirstLegal(seed)


class NotAnAgent:
    pass


def not_an_agent_factory(seed=None):
    return "nope"


VALUE = 3


class NoConstructor(Agent):
    def act(self, turn):
        return int(turn.legal[0])


class NoAct(Agent):
    def __init__(self, seed=None):
        self.reset(seed)


def no_act_factory(seed=None):
    return NoAct(seed)


def policy_of_observation(observation):
    return 0


class AnswersWithAnArray(Agent):
    def act(self, turn):
        return turn.legal[:1]
"""


@pytest.fixture
def my_agents(tmp_path, monkeypatch):
    (tmp_path / "my_agents.py").write_text(textwrap.dedent(MODULE))
    monkeypatch.syspath_prepend(str(tmp_path))
    return "my_agents"


def test_module_name_specs_build_agents_and_refuse_what_is_not_one(my_agents):
    agent = agents.make_agent("my_agents:FirstLegal:offset=1", seed=3)
    assert agent.name == "first_legal" and agent.offset == 1
    assert agents.make_agent("my_agents:make_first_legal").name == "first_legal"
    assert agents.make_agent("my_agents:NoConstructor", seed=1).name == "my_agents:NoConstructor"
    for spec, message in [
        ("no_such_pkg.mod:Agent", "cannot import module 'no_such_pkg.mod'"),
        ("my_agents:Missing", "module 'my_agents' has no 'Missing'"),
        ("my_agents:NotAnAgent", "class NotAnAgent is not an agent"),
        ("my_agents:not_an_agent_factory", r"not_an_agent_factory\(\) returned str"),
        ("my_agents:VALUE", "VALUE is a int, not an Agent class"),
        ("my_agents:FirstLegal:depth=2", "has no setting 'depth'"),
        ("my_agents:NoAct", r"class NoAct does not define act\(turn\)"),
        ("my_agents:no_act_factory", r"NoAct does not define act\(turn\)"),
        ("my_agents:policy_of_observation", r"policy_of_observation\(\) needs observation, .* agents.CallableAgent"),
    ]:
        with pytest.raises(ValueError, match=message):
            agents.make_agent(spec)


def test_tournaments_take_agent_objects_and_module_specs_in_workers(my_agents):
    one = run_tournament([agents.HeuristicAgent(), "my_agents:FirstLegal"], games=4, seed=0, workers=1)
    two = run_tournament([agents.HeuristicAgent(), "my_agents:FirstLegal"], games=4, seed=0, workers=2)
    assert [r["winners"] for r in one["games"]] == [r["winners"] for r in two["games"]]
    assert [row["agent"] for row in one["agents"]] == ["heuristic", "my_agents:FirstLegal"]
    assert one["config"]["agents"] == ["heuristic", "my_agents:FirstLegal"]
    with pytest.raises(ValueError, match="'<lambda>' cannot be sent to worker processes"):
        run_tournament([lambda observation: 0, "random"], games=2, workers=2)
    with pytest.raises(ValueError, match=r"agent '<lambda>' chose illegal action 999 in game 0; legal: \["):
        run_tournament([lambda observation: 999, "random"], games=2, workers=1)


def test_action_for_plays_an_agent_in_a_pettingzoo_loop():
    env = sorry_env.env(num_players=2)
    env.reset(seed=4)
    heuristic, rng = agents.HeuristicAgent(seed=0), np.random.default_rng(0)
    moves = 0
    for _name in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        action = None if terminated or truncated else agents.action_for(env, heuristic, rng)
        if action is not None:
            assert observation["action_mask"][action] == 1
            moves += 1
        env.step(action)
    assert moves > 10
    with pytest.raises(ValueError, match="the game is over"):
        agents.action_for(env, heuristic)
    truncated = sorry_env.env(num_players=2, max_turns=3)
    truncated.reset(seed=0)
    while not truncated.truncations[truncated.agent_selection]:
        truncated.step(agents.action_for(truncated, heuristic))
    with pytest.raises(ValueError, match="won or truncated"):
        agents.action_for(truncated, heuristic)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"agent 'bad' chose illegal action -1 for player_\d; legal"):
        agents.action_for(env, agents.CallableAgent(lambda observation: -1, name="bad"))
    with pytest.raises(ValueError, match="trained for 4 players, not 2"):
        agents.action_for(env, "checkpoints/sorry-4p.safetensors")


def train_tiny_model(path, **env_kwargs):
    import gymnasium
    from sb3_contrib import MaskablePPO

    env = gymnasium.make("sorry_env/Sorry-v1", **env_kwargs)
    model = MaskablePPO("MultiInputPolicy", env, n_steps=32, batch_size=32, n_epochs=1, seed=0, device="cpu")
    model.learn(32)
    model.save(path)
    return model


def test_sb3_models_play_without_unpickling_and_are_checked_against_the_game(tmp_path, monkeypatch):
    import cloudpickle

    from sorry_env.agents.sb3_agent import SB3Agent

    model = train_tiny_model(tmp_path / "m2.zip", num_players=2, opponents="random")
    train_tiny_model(tmp_path / "m4.zip", num_players=4, opponents="random")

    def refuse(*args, **kwargs):
        raise AssertionError("unpickled")

    monkeypatch.setattr(cloudpickle, "loads", refuse)
    agent = agents.make_agent(str(tmp_path / "m2.zip"))
    assert isinstance(agent, SB3Agent)
    env = sorry_env.env(num_players=2)
    env.reset(seed=1)
    obs = env.observe(env.agent_selection)
    expected, _ = model.predict(obs, action_masks=obs["action_mask"].astype(bool), deterministic=True)
    assert agents.action_for(env, agent) == int(expected)
    monkeypatch.undo()
    results = run_tournament([str(tmp_path / "m2.zip"), "random"], games=2, workers=1)
    assert results["agents"][0]["agent"] == "m2.zip"
    with pytest.raises(ValueError, match="trained for 4 players, not 2"):
        run_tournament([str(tmp_path / "m4.zip"), "random"], games=2, workers=1)
    (tmp_path / "junk.zip").write_text("not a zip")
    with pytest.raises(ValueError, match="not a stable-baselines3 model zip"):
        agents.make_agent(str(tmp_path / "junk.zip"))
    with pytest.raises(ValueError, match="does not exist"):
        agents.make_agent(str(tmp_path / "nowhere.zip"))


def test_an_sb3_model_for_another_observation_is_refused(tmp_path):
    import gymnasium
    from gymnasium.wrappers import FlattenObservation
    from sb3_contrib import MaskablePPO

    from sorry_env.agents.gym_factory import make_gym_env

    flat = FlattenObservation(make_gym_env(2, "random"))
    model = MaskablePPO("MlpPolicy", flat, n_steps=32, batch_size=32, n_epochs=1, device="cpu")
    model.save(tmp_path / "flat.zip")
    with pytest.raises(ValueError, match="was not trained on the Gymnasium env sorry_env/Sorry-v1"):
        agents.make_agent(str(tmp_path / "flat.zip"))
    assert gymnasium  # imported for the registry


@pytest.mark.parametrize("policy_input", [True, False])
def test_an_sb3_model_trained_on_the_batched_env_plays_as_trained(policy_input, tmp_path, monkeypatch):
    import cloudpickle
    from sb3_contrib import MaskablePPO

    from sorry_env.training.vector_sb3 import SB3VecEnv
    from sorry_env.vector_opponents import VectorOpponentEnv

    batched = VectorOpponentEnv(4, 2, opponents="random", policy_input=policy_input)
    env = SB3VecEnv(batched)
    env.seed(0)
    model = MaskablePPO("MlpPolicy", env, n_steps=16, batch_size=32, n_epochs=1, seed=0, device="cpu")
    model.learn(64)
    model.save(tmp_path / "vec.zip")

    def refuse(*args, **kwargs):
        raise AssertionError("unpickled")

    monkeypatch.setattr(cloudpickle, "loads", refuse)
    agent = agents.make_agent(str(tmp_path / "vec.zip"))
    obs, rng, compared = env.reset(), np.random.default_rng(0), 0
    for _ in range(40):  # the agent's move from a Turn is the model's move from the env's vector
        masks = env.action_masks()
        for b in np.flatnonzero(masks.sum(axis=1) > 1):
            expected, _ = model.predict(obs[b], action_masks=masks[b], deterministic=True)
            turn = agents.Turn.from_state(batched.states[b], batched.rules, rng, np.flatnonzero(masks[b]))
            assert agent.act(turn) == int(expected)
            compared += 1
        obs, _, _, _ = env.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
    assert compared > 20
    with pytest.raises(ValueError, match="trained for 2 players, not 4"):
        agent.check_game("hasbro2003", 4)


def test_league_plays_every_pair_and_writes_matrix_csv_and_heatmap(tmp_path, capsys):
    sorry_eval(
        [
            "--league",
            "heuristic",
            "greedy",
            "random",
            "--games",
            "4",
            "--workers",
            "1",
            "--out",
            str(tmp_path),
            "--no-progress",
        ]
    )
    out = capsys.readouterr().out
    assert "league: 3 agents, 2 players, 3 lineups x 4 games" in out
    league = json.loads((tmp_path / "league.json").read_text())
    matrix = league["matrix"]
    assert matrix[0][0] is None and matrix[0][1]["games"] == 4
    assert league["made_by"]["command"].startswith("sorry-eval --league")
    for (i, j), tournament in zip([(0, 1), (0, 2), (1, 2)], league["tournaments"]):
        # two players: each of the pair's games is won by one of them, or truncated
        assert matrix[i][j]["wins"] + matrix[j][i]["wins"] == 4 - tournament["truncated"]
        assert matrix[i][j]["win_rate"] == pytest.approx(tournament["win_rates"][0])
    assert [row["games"] for row in league["agents"]] == [8, 8, 8]
    assert (tmp_path / "league.png").read_bytes().startswith(b"\x89PNG")
    header = (tmp_path / "league_matrix.csv").read_text().splitlines()[0]
    assert header == "agent,heuristic,greedy,random"


def test_an_agent_that_answers_badly_in_play_fails_the_run_without_a_usage_message(my_agents, capsys, tmp_path):
    with pytest.raises(SystemExit) as exit_info:
        sorry_eval(["my_agents:AnswersWithAnArray", "random", "--games", "2", "--out", str(tmp_path), "--no-progress"])
    err = capsys.readouterr().err
    assert exit_info.value.code == 1 and "usage:" not in err
    assert "returned array([0]) (ndarray) in game 0, not an action index: act() returns an int" in err
    assert not (tmp_path / "results.json").exists()
    with pytest.raises(SystemExit) as exit_info:  # the same in a league
        sorry_eval(["--league", "my_agents:AnswersWithAnArray", "random", "greedy", "--games", "2"])
    assert exit_info.value.code == 1 and "usage:" not in capsys.readouterr().err


def test_league_refuses_what_it_cannot_play(capsys):
    with pytest.raises(SystemExit):
        sorry_eval(["--league", "heuristic", "random", "--players", "4", "--games", "2"])
    assert "needs at least 4 agents, got 2" in capsys.readouterr().err


def test_the_results_table_widens_its_agent_column_for_a_long_spec():
    from sorry_env.agents.arena.output import format_table
    from sorry_env.agents.arena.tournament import run_tournament

    long_spec = "expectimax:depth=1,samples=2,model_others=0"
    lines = format_table(run_tournament([long_spec, "random"], games=2, workers=1)).splitlines()
    header = next(line for line in lines if line.startswith("agent "))
    rows = [line for line in lines if line.startswith((long_spec + " ", "random "))]
    assert len(rows) == 2
    column = header.index("win rate") + len("win rate")  # the rates are right-aligned under it
    assert all(row[column - 1] == "%" and row[column] == " " for row in rows), lines


def test_a_damaged_sb3_zip_is_refused_in_one_line(tmp_path, monkeypatch):
    # Issue 37: a bad policy.pth (UnpicklingError) and pickled kwargs that do not fit (TypeError)
    # ended in tracebacks; both are one-line ValueErrors naming the file. The weights are read
    # without unpickling code (checked: pickle's and cloudpickle's loaders are never called);
    # pickled policy_kwargs are unpickled by SB3, which is why a .zip spec counts as code
    # (agents.runs_code: only a spec the user typed reaches it).
    import base64
    import pickle
    import zipfile

    import cloudpickle

    train_tiny_model(tmp_path / "m.zip", num_players=2, opponents="random")
    with zipfile.ZipFile(tmp_path / "m.zip") as archive:
        members = {name: archive.read(name) for name in archive.namelist()}

    def rewrite(path, **changes):
        with zipfile.ZipFile(path, "w") as archive:
            for name, data in {**members, **changes}.items():
                archive.writestr(name, data)
        return str(path)

    class Unpickled(BaseException):  # not an Exception: the loader's error handling cannot swallow it
        pass

    def refuse(*args, **kwargs):
        raise Unpickled

    bad_weights = rewrite(tmp_path / "weights.zip", **{"policy.pth": b"\x80\x04not a state dict"})
    with monkeypatch.context() as patch:
        patch.setattr(cloudpickle, "loads", refuse)
        patch.setattr(pickle, "loads", refuse)
        with pytest.raises(ValueError) as info:
            agents.make_agent(bad_weights)
    assert bad_weights in str(info.value) and "\n" not in str(info.value), str(info.value)
    data = json.loads(members["data"])
    payload = base64.b64encode(pickle.dumps({"net_arch": "not a list"})).decode()
    data["policy_kwargs"] = {":type:": "<class 'dict'>", ":serialized:": payload}
    pickled_kwargs = rewrite(tmp_path / "kwargs.zip", data=json.dumps(data).encode())
    with pytest.raises(ValueError) as info:
        agents.make_agent(pickled_kwargs)
    assert pickled_kwargs in str(info.value) and "\n" not in str(info.value), str(info.value)


def test_league_table_is_ordered_by_win_rate_and_names_head_to_head_results_against_its_order():
    """Issue 39: a rating-sorted table listed an agent that beat another 57-43 below it, with no word."""
    from sorry_env.agents.arena.league import format_league

    def cell(rate):
        return {"wins": int(rate * 100), "games": 100, "win_rate": rate, "ci_low": rate - 0.1, "ci_high": rate + 0.1}

    shares = {("A", "B"): 0.57, ("B", "C"): 0.80, ("C", "A"): 0.60}  # A beats B beats C beats A
    names = ["A", "B", "C"]
    rate = {(x, y): shares.get((x, y), 1 - shares.get((y, x), 0.5)) for x in names for y in names if x != y}
    league = {
        "config": {"players": 2, "lineups": 3, "games_per_lineup": 100, "rules": "hasbro2003", "seed": 0},
        "matrix": [[None if x == y else cell(rate[x, y]) for y in names] for x in names],
        "agents": [
            {
                "agent": x,
                "win_rate": sum(rate[x, y] for y in names if y != x) / 2,
                "ci_low": 0.0,
                "ci_high": 1.0,
                "wins": 0,
                "games": 200,
                "rating_mu": mu,
                "rating_sigma": 1.0,
                "rating_ordinal": mu - 3,
            }
            for x, mu in zip(names, [30.0, 20.0, 25.0])  # ratings in yet another order
        ],
    }
    text = format_league(league)
    table = text.split("by win rate over all the agent's games:")[1]
    assert [line.split()[0] for line in table.strip().splitlines()[1:4]] == ["B", "A", "C"]
    assert "note: A won 57.0% [47.0%, 67.0%] of its games with B (listed above it" in text
    assert "note: C won 60.0% [50.0%, 70.0%] of its games with A (listed above it" in text
    assert text.count("note:") == 2
