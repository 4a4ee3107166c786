"""Every agent plays Sorry! Express: its own heuristic, expectimax and montecarlo
(sorry_env.express.agents) and the agents of every game (random, greedy over its evaluation,
trained policy files of sorry_env.agents.game_policy), by the board game's spec names, in
tournaments, in sorry-eval and in the PettingZoo env; their settings; the policy file and
its refusal by the board game (and the reverse); the generic trainer on it."""

import json
import os

import numpy as np
import pytest
import torch
from float_margins import near_tie  # tests/ is on sys.path (pytest rootdir import mode)

from sorry_env import agents, games
from sorry_env.agent import GameTurn
from sorry_env.agents.arena.cli import main as sorry_eval
from sorry_env.agents.arena.output import format_table
from sorry_env.agents.arena.tournament import run_tournament
from sorry_env.agents.policy import Actor, PolicyAgent, load_policy, save_policy
from sorry_env.express import engine as E
from sorry_env.express import game, raw_env, state_from_dict
from sorry_env.express.agents import (
    ROLL_CHANCES,
    ROLLS,
    WEIGHTS,
    ExpectimaxAgent,
    MonteCarloAgent,
    seat_score,
)

EXPRESS = games.load_game("express")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHIPPED = os.path.join(ROOT, "checkpoints", "express-2p.safetensors")
BOARD_POLICY = os.path.join(ROOT, "checkpoints", "sorry-2p.safetensors")
# Cheap settings: the searches' full defaults are measured in docs/express.md.
SEARCHERS = ["heuristic", "expectimax:depth=1", "expectimax", "montecarlo:iterations=16"]


def make_express_agent(spec, seed=None):
    return agents.make_agent(spec, seed=seed, game="express")


def run_express_tournament(agent_specs, **kwargs):
    return run_tournament(agent_specs, game="express", **kwargs)


def load_express_policy(path):
    return load_policy(path, "express")


def tiny_policy(path, players=2, hidden=(8,), seed=0):
    torch.manual_seed(seed)
    actor = Actor("mlp", list(hidden), "relu", EXPRESS)
    save_policy(
        path,
        actor,
        num_players=players,
        network={"kind": "mlp", "hidden": list(hidden), "activation": "relu"},
        name="tiny",
    )
    return actor


def load(bases, pawns, dice, to_move=0):
    return state_from_dict({"to_move": to_move, "turn": 0, "bases": bases, "pawns": pawns, "dice": dice}, 0)


def choice(spec, state):
    return make_express_agent(spec, seed=0).act(GameTurn.from_state(EXPRESS, state, np.random.default_rng(0)))


# ---- full games, legal actions ----------------------------------------------------------------
@pytest.mark.parametrize("n", [2, 3, 4])
@pytest.mark.parametrize("spec", SEARCHERS + ["policy"])
def test_every_agent_plays_full_games_in_every_seat(spec, n, tmp_path):
    if spec == "policy":
        spec = str(tmp_path / f"tiny-{n}p.safetensors")
        tiny_policy(spec, players=n)
    lineup = [spec] + ["greedy", "random", "random"][: n - 1]
    # The tournament refuses an illegal action (naming the agent); every game must end in a win.
    results = run_express_tournament(lineup, games=n, seed=3, workers=1)
    assert results["truncated"] == 0 and sum(row["wins"] for row in results["agents"]) == n
    assert results["agents"][0]["games_at_seat"] == {str(seat): 1 for seat in range(n)}


@pytest.mark.parametrize("n", [2, 3, 4])
def test_every_agent_plays_the_pettingzoo_env_by_spec_name(n, tmp_path):
    policy = str(tmp_path / "tiny.safetensors")
    tiny_policy(policy, players=n)
    specs = [*SEARCHERS, "greedy", "random", policy]
    players = [make_express_agent(spec, seed=s) for s, spec in enumerate(specs)]
    e = raw_env(num_players=n)
    for g, agent in enumerate(players):
        e.reset(seed=g)
        while not any(e.terminations.values()) and not any(e.truncations.values()):
            mask = e.observe(e.agent_selection)["action_mask"]
            action = agents.action_for(e, agent, np.random.default_rng(g))  # the board game's call
            assert mask[action] == 1
            e.step(action)
        assert any(e.terminations.values())
        with pytest.raises(ValueError, match="game is over"):
            agents.action_for(e, agent)
    e.reset(seed=0)
    assert 0 <= agents.action_for(e, "expectimax:depth=1") < E.N_ACTIONS  # a spec works too


def test_express_env_refuses_board_game_agents():
    e = raw_env(num_players=2)
    e.reset(seed=0)
    with pytest.raises(ValueError, match="plays the board game Sorry!; it cannot play Sorry! Express"):
        agents.action_for(e, agents.make_agent("heuristic"))
    board_env = games.load_game("sorry").make_env(2)
    board_env.reset(seed=0)
    with pytest.raises(ValueError, match="plays Sorry! Express; it cannot play the board game"):
        agents.action_for(board_env, make_express_agent("heuristic"))
    with pytest.raises(ValueError, match="plays Sorry! Express; it cannot play the board game"):
        run_tournament([make_express_agent("heuristic"), "random"], games=2, workers=1)
    board = agents.make_agent("random")
    assert board.game_ids is None  # random reads only the legal actions: every game


# ---- what the searches choose -----------------------------------------------------------------
def test_rolls_cover_every_outcome_of_the_three_dice():
    assert ROLLS.shape == (76, E.N_FACES) and (ROLLS.sum(axis=1) == 3).all()
    assert ROLL_CHANCES.sum() == pytest.approx(1.0)
    # Three Slides or two Sorry!s cannot be rolled; three Wilds can (1 * 1 * 1 of 216).
    assert ROLLS[:, E.SLIDE].max() == 2 and ROLLS[:, E.SORRY].max() == 1
    three_wilds = np.flatnonzero(ROLLS[:, E.WILD] == 3)
    assert ROLL_CHANCES[three_wilds].tolist() == [pytest.approx(1 / 216)]


@pytest.mark.parametrize("spec", SEARCHERS)
def test_searches_take_a_win_and_never_hand_one_over(spec):
    # A Slide to Green completes the mover's home section.
    s = load(["Red", "Blue", "Yellow"], [{"Green": 4}, {"Yellow": 3}, {}], ["Slide", "Blue"])
    assert choice(spec, s) == E.RECOLOUR0 + 0 * 4 + 3
    # Recolouring player 1's base to Green would hand it the win.
    s = load(["Red", "Blue"], [{"Red": 1}, {"Green": 4}], ["Slide", "Wild"])
    c = choice(spec, s)
    assert c != E.RECOLOUR0 + 1 * 4 + 3 and game.winner(game.step(s, c)) is None


def test_expectimax_plans_the_order_of_the_dice():
    # Four players; the mover (Blue base) holds three Red pawns, player 1's Red home section
    # holds the fourth. Sorry! first (the fourth Red pawn), then a Slide swapping the two bases
    # wins; the Slide first makes Red the mover's home (3 pawns, the best one-die score) and
    # leaves the Sorry! nothing Red to take. The one-die heuristic falls for it.
    s = load(["Blue", "Red", "Yellow", "Green"], [{"Red": 3}, {"Red": 1}, {}, {}], ["Sorry!", "Slide"])
    assert choice("heuristic", s) != E.SORRY0
    for spec in ("expectimax:depth=1", "expectimax"):
        after = game.step(s, choice(spec, s))
        assert game.winner(after) is None and game.to_move(after) == 0
        assert game.winner(game.step(after, choice(spec, after))) == 0


def test_the_position_score_ranks_home_pawns_and_pawns_taken_from_the_leader():
    s = load(["Red", "Blue"], [{"Red": 1}, {"Blue": 2}], ["Wild"])
    home = game.step(s, E.WILD0 + 0 * 4)  # a Red pawn into the own home section
    other = game.step(s, E.WILD0 + 3 * 4)  # a Green pawn into the waiting area
    assert seat_score(home, WEIGHTS, 0) > seat_score(other, WEIGHTS, 0)
    s = load(["Red", "Blue"], [{"Red": 1}, {"Blue": 3}], ["Sorry!", "Green"])
    assert choice("heuristic", s) == E.SORRY0  # take from the leader's home section


# ---- settings -------------------------------------------------------------------------------
def test_settings_are_parsed_as_the_board_games():
    agent = make_express_agent("expectimax:depth=3,model_others=0", seed=1)
    assert isinstance(agent, ExpectimaxAgent) and (agent.depth, agent.model_others) == (3, False)
    agent = make_express_agent("mcts:iterations=50,rollout_plies=4,epsilon=0.5")  # the board game's alias
    assert isinstance(agent, MonteCarloAgent)
    assert (agent.iterations, agent.rollout_plies, agent.epsilon) == (50, 4, 0.5)
    expected = {"random", "greedy", "playouts", "heuristic", "expectimax", "montecarlo"}
    assert set(agents.agents_of_game("express")) == expected


@pytest.mark.parametrize(
    "spec,words",
    [
        ("expectimax:width=3", "has no setting 'width'.*its settings: depth, model_others"),
        ("montecarlo:iteration=3", "its settings: epsilon, iterations, rollout_plies"),
        ("heuristic:depth=2", "its settings: none"),
        ("greedy:depth=2", "its settings: none"),
        ("expectimax:depth=two", "depth .* must be an integer"),
        ("montecarlo:epsilon=x", "epsilon .* must be a number"),
        ("expectimax:depth", "must look like key=value"),
        ("expectimax:depth=0", "depth >= 1"),
        ("expectimax:model_others=2", "model_others 0 or 1"),
        ("montecarlo:iterations=0", "iterations >= 1"),
        ("montecarlo:epsilon=1.5", "0 <= epsilon <= 1"),
        ("montecarlo:epsilon=nan", "out of range"),
        ("alphazero", "unknown agent 'alphazero' for Sorry! Express.*expectimax"),
        ("model.zip", "sb3 models play the board game"),
    ],
)
def test_bad_settings_are_refused_naming_the_valid_ones(spec, words):
    with pytest.raises(ValueError, match=words):
        make_express_agent(spec)


# ---- policy files ---------------------------------------------------------------------------
def test_policy_file_round_trip(tmp_path):
    path = str(tmp_path / "p.safetensors")
    actor = tiny_policy(path, players=3, hidden=(16, 8))
    loaded, meta = load_express_policy(path)
    assert meta["game"] == "express" and meta["num_players"] == 3 and meta["network"]["hidden"] == [16, 8]
    obs = torch.rand(5, E.OBS_SIZE)
    assert torch.equal(actor(obs), loaded(obs))
    s = game.new_state(3, seed=2)
    turn = GameTurn.from_state(EXPRESS, s, np.random.default_rng(0))
    with torch.no_grad():
        logits = actor(torch.from_numpy(turn.observation()["observation"][None]))[0].numpy()
    best = turn.legal[np.argmax(logits[turn.legal])]
    assert PolicyAgent(path, game="express").act(turn) == best  # the masked argmax


def test_policy_for_another_player_count_is_refused_before_any_game(tmp_path):
    path = str(tmp_path / "p.safetensors")
    tiny_policy(path, players=2)
    with pytest.raises(ValueError, match="trained for 2 players, not 3"):
        run_express_tournament([path, "random", "random"], games=3, workers=1)
    with pytest.raises(ValueError, match="cannot play the board game"):
        PolicyAgent(path, game="express").check_game("hasbro2003", 2)


def test_board_game_and_express_policy_files_refuse_each_other(tmp_path):
    path = str(tmp_path / "express.safetensors")
    tiny_policy(path)
    with pytest.raises(ValueError, match="for Sorry! Express, not the board game.*--game express"):
        agents.make_agent(path)
    with pytest.raises(ValueError, match="for the board game Sorry!, not Sorry! Express"):
        make_express_agent(BOARD_POLICY)


def rewrite_metadata(path, out, change):
    """Copy the policy file at `path` to `out` with its metadata changed by `change(meta)`."""
    from safetensors import safe_open
    from safetensors.torch import save_file

    with safe_open(path, framework="pt") as f:
        meta = json.loads(f.metadata()["sorry_express_policy"])
        tensors = {name: f.get_tensor(name) for name in f.keys()}  # noqa: SIM118 (safe_open has no __iter__)
    change(meta)
    save_file(tensors, out, metadata={"sorry_express_policy": json.dumps(meta)})


@pytest.mark.parametrize(
    "key,value,words",
    [
        ("num_players", 5, "num_players must be one of 2, 3, 4"),
        ("layout", {"version": "sorry_express_v0", "obs_size": 56, "n_actions": 57}, "Express layout"),
        ("network", {"kind": "mlp", "hidden": [9], "activation": "relu"}, "tensors do not match|needs F32"),
        ("network", {"kind": "afterstate", "hidden": [8], "activation": "relu"}, "a Sorry! Express policy network is"),
        ("game", "sorry", "for game 'sorry'"),
        ("format_version", 2, "format version 2"),
    ],
)
def test_damaged_express_policy_files_are_refused(key, value, words, tmp_path):
    path = str(tmp_path / "p.safetensors")
    tiny_policy(path)
    broken = str(tmp_path / "broken.safetensors")
    rewrite_metadata(path, broken, lambda meta: meta.update({key: value}))
    with pytest.raises(ValueError, match=words):
        load_express_policy(broken)


def test_missing_policy_file_is_named():
    with pytest.raises(ValueError, match="does not exist"):
        make_express_agent("no/such/express.safetensors")


@pytest.mark.skipif(not os.path.exists(SHIPPED), reason="the shipped Express policy is not built")
def test_shipped_policy_is_for_two_player_express_and_beats_random():
    meta = load_express_policy(SHIPPED)[1]
    assert meta["game"] == "express" and meta["num_players"] == 2 and meta["training"]["learner_steps"] > 0
    results = run_express_tournament([SHIPPED, "random"], games=300, seed=5, workers=1)
    assert results["agents"][0]["ci_low"] > 0.6, format_table(results)


def shipped_policy_positions():
    """Positions of 40 random 2-player games (seed k: new_state(2, k), moves drawn from
    default_rng(k)), each as the turn the policy sees (hidden parts from default_rng(0))."""
    for seed in range(40):
        s = EXPRESS.new_state(2, seed=seed)
        rng = np.random.default_rng(seed)
        while EXPRESS.winner(s) is None and EXPRESS.turn(s) < 200:
            yield GameTurn.from_state(EXPRESS, s, np.random.default_rng(0))
            s = EXPRESS.apply(s, int(rng.choice(EXPRESS.legal_actions(s))))


@pytest.mark.float_kernels
@pytest.mark.skipif(not os.path.exists(SHIPPED), reason="the shipped Express policy is not built")
def test_shipped_policy_plays_exactly_as_under_the_old_loader(batch_gaps):
    """The generic policy-file loader (issue 26) chooses what the Express-only loader chose;
    none of the choices is a near tie (tests/float_margins.py), so this holds on any CPU."""
    with open(os.path.join(ROOT, "tests", "golden_express_policy_actions.json")) as f:
        golden = json.load(f)["actions"]
    agent = make_express_agent(SHIPPED, seed=0)
    chosen = [agent.act(turn) for turn in shipped_policy_positions()]
    assert len(batch_gaps) == len(chosen) and not any(map(near_tie, batch_gaps))
    assert chosen == golden


# ---- strength and the command line ----------------------------------------------------------
def test_heuristic_beats_random():
    # Measured over 1,000 games (docs/express.md); random play would sit at 50%.
    results = run_express_tournament(["heuristic", "random"], games=400, seed=0, workers=1)
    assert results["agents"][0]["ci_low"] > 0.7, format_table(results)


@pytest.mark.parametrize("spec", SEARCHERS + ["policy"])
def test_sorry_eval_runs_express_tournaments_with_every_agent(spec, tmp_path, capsys):
    if spec == "policy":
        spec = str(tmp_path / "tiny.safetensors")
        tiny_policy(spec)
    out = tmp_path / "eval"
    argv = ["--game", "express", spec, "greedy", "--games", "4", "--workers", "1", "--no-progress"]
    sorry_eval([*argv, "--out", str(out)])
    assert "rules express, 4 games" in capsys.readouterr().out
    summary = json.loads((out / "results.json").read_text())
    assert summary["config"]["agents"][0] == spec and summary["config"]["games"] == 4


@pytest.mark.parametrize(
    "spec,words",
    [("expectimax:width=3", "has no setting 'width'"), (BOARD_POLICY, "for the board game Sorry!")],
)
def test_sorry_eval_express_agent_mistakes_without_a_traceback(spec, words, tmp_path, capsys):
    with pytest.raises(SystemExit) as info:
        sorry_eval(["--game", "express", spec, "random", "--workers", "1", "--out", str(tmp_path)])
    assert info.value.code == 2 and words in capsys.readouterr().err


# ---- the training script (the generic PPO, sorry_env.training.game_ppo) ------------------------
def test_training_script_writes_a_playable_express_policy(tmp_path, capsys):
    from sorry_env.training import game_ppo

    out = str(tmp_path / "trained.safetensors")
    argv = ["--game", "express", "--players", "3", "--minutes", "0.0001", "--games", "6", "--hidden", "8"]
    game_ppo.main([*argv, "--out", out])
    log = capsys.readouterr().out
    assert "update    1" in log and "steps/s" in log and f"wrote {out}" in log
    meta = load_express_policy(out)[1]
    assert meta["num_players"] == 3 and meta["training"]["updates"] == 1 and meta["training"]["learner_steps"] > 0
    assert meta["training"]["config"]["opponents"] == ["greedy", "random", "self"]  # the old trainer's defaults
    results = run_express_tournament([out, "random", "greedy"], games=3, workers=1)
    assert sum(row["wins"] for row in results["agents"]) == 3


@pytest.mark.parametrize(
    "argv,words",
    [
        (["--hidden", "8,x"], "comma-separated"),
        (["--hidden", "0"], "hidden must be a list of at most 16 layers of 1..16,384 units"),
        (["--mix", "1,1"], "mix needs 3"),
        (["--games", "0"], "config: games must be > 0, got 0"),
        (["--lr", "fast"], "argument --lr: invalid float value"),
        (["--out", "p.zip"], "ending in .safetensors"),
        (["--opponents", "alphazero,random,self"], "unknown agent 'alphazero' for Sorry! Express"),
        (["--players", "5"], "num_players must be one of 2, 3, 4"),
        (["--out", "/no/such/dir/p.safetensors"], "not a writable directory"),
        (["--game", "chess"], "unknown game 'chess'"),
        (["--game", "sorry"], "sorry-train"),
    ],
)
def test_training_script_refuses_bad_arguments(argv, words, tmp_path, capsys):
    from sorry_env.training import game_ppo

    with pytest.raises(SystemExit) as info:
        game_ppo.main(["--game", "express", "--out", str(tmp_path / "p.safetensors"), *argv])
    assert info.value.code == 2 and words in capsys.readouterr().err
    assert not any(tmp_path.iterdir())
