"""The network-guided search (azsearch) and expert iteration: the search reads only the
network, its visits are its simulations, bad settings and wrong-game networks are refused,
and the learning loop's pieces (targets, losses, self-play records, Ray workers) hold."""

import json
import time

import numpy as np
import pytest
import torch
from float_margins import TOLERANCE, decisive  # tests/ is on sys.path (pytest rootdir import mode)

from sorry_env import agents
from sorry_env.agents.azsearch import AZSearchAgent, run_search, run_search_many, search_policy
from sorry_env.agents.base import Turn
from sorry_env.agents.policy import PolicyAgent
from sorry_env.agents.value_net import net_logit, net_logits, pack
from sorry_env.board import engine as E
from sorry_env.board import game
from sorry_env.board.rules import get_rules
from sorry_env.training import expert_iteration as X
from sorry_env.training.config import EXPIT, merge_config

VALUE = "checkpoints/value-2p.safetensors"
POLICY_4P = "checkpoints/sorry-4p.safetensors"


def _decisions(count, seed=0, min_moves=3, players=2):
    """Public turns with at least `min_moves` legal moves from heuristic games."""
    rules = get_rules("hasbro2003")
    rng = np.random.default_rng(seed)
    heuristic = agents.make_agent("heuristic", seed=seed)
    turns = []
    while len(turns) < count:
        state = game.new_state(rules, seats=game.DEFAULT_SEATS[players], seed=int(rng.integers(2**31)))
        while E.is_running(state, 400) and len(turns) < count:
            turn = Turn.from_state(state, rules, rng)
            if len(turn.legal) >= min_moves:
                turns.append(turn)
            E.step(state, game.rules_array(rules), heuristic.act(turn))
    return turns


def _afterstate_scores(turn, params, sizes):
    """(actions, the compiled network's logit of each legal move's afterstate, torch's)."""
    from sorry_env.board.observation import OBS_SIZE
    from sorry_env.board.policy_input import afterstates

    obs, _, actions = afterstates(turn.state[None].astype(np.int64), game.rules_array(turn.rules))
    x = np.ascontiguousarray(obs[:, :OBS_SIZE], dtype=np.float32)
    compiled = np.array([net_logit(params, sizes, row) for row in x])
    with torch.no_grad():
        in_torch = PolicyAgent(VALUE).actor.net(torch.from_numpy(obs))[:, 0].numpy()
    return actions, compiled, in_torch


@pytest.mark.float_kernels
def test_one_simulation_plays_the_value_networks_best_move():
    # One expansion scores every move's afterstate with the network: the search's move is the
    # one the compiled network ranks first (the lowest action among equal scores: argmax's rule,
    # the network agent's too). The network alone as a policy, in torch, plays the same move
    # wherever its best two scores are further apart than torch and numba's rounding can move
    # them (at a near-tie either move is the network's best, on some CPU).
    params, sizes, _ = pack(VALUE)
    search = AZSearchAgent(net=VALUE, simulations=1, seed=0)
    alone = PolicyAgent(VALUE)
    compared = 0
    for turn in _decisions(25):
        actions, compiled, in_torch = _afterstate_scores(turn, params, sizes)
        chosen = search.act(turn)
        assert chosen == actions[compiled == compiled.max()].min()
        if decisive(in_torch):
            assert chosen == alone.act(turn)
            compared += 1
    assert compared >= 20  # near-ties are rare: the comparison with torch is not vacuous


def test_root_visits_add_up_to_the_simulations_and_the_policy_is_a_distribution():
    params, sizes, _ = pack(VALUE)
    no_net = (np.zeros(0, np.float32), np.zeros(0, np.int64))
    ra = game.rules_array("hasbro2003")
    size = game.num_actions("hasbro2003")
    for turn in _decisions(5, seed=1):
        acts, visits, values = np.empty(size, np.int64), np.empty(size), np.empty(size)
        n = run_search(turn.state, ra, params, sizes, *no_net, 50, 0.25, 0.1, 0.3, 0.25, 7, acts, visits, values)
        assert sorted(acts[:n]) == sorted(turn.legal.tolist())
        assert visits[:n].sum() == 50
        assert ((values[:n] >= 0) & (values[:n] <= 1)).all()
        pi = search_policy(visits[:n], values[:n])
        assert pi.sum() == pytest.approx(1.0) and (pi >= 0).all()


@pytest.mark.parametrize(
    "players,simulations,noise,with_policy", [(2, 40, 0.25, False), (2, 120, 0.0, False), (4, 40, 0.25, True)]
)
@pytest.mark.float_kernels
def test_searching_games_side_by_side_gives_each_the_search_it_has_alone(players, simulations, noise, with_policy):
    """run_search_many over a stack of positions (one batched network evaluation per step,
    trees grown on the way) equals run_search of each position alone: the same moves, visit
    counts and values, bit for bit (4 players: a network row per side; a policy prior)."""
    params, sizes, _ = pack(VALUE)
    prior = pack(VALUE)[:2] if with_policy else (np.zeros(0, np.float32), np.zeros(0, np.int64))
    ra = game.rules_array("hasbro2003")
    size = game.num_actions("hasbro2003")
    turns = _decisions(9, seed=players, min_moves=2, players=players)
    g = len(turns)
    seeds = np.arange(g, dtype=np.int64) * 11 + 3
    acts, visits, values, n_moves = (
        np.empty((g, size), np.int64),
        np.empty((g, size)),
        np.empty((g, size)),
        np.zeros(g, np.int64),
    )
    nodes = run_search_many(np.array([t.state for t in turns]), ra, params, sizes, *prior, simulations, 0.25, 0.1, 0.3,
                            noise, seeds, acts, visits, values, n_moves)  # fmt: skip
    assert nodes > g * (simulations + 1) * 2  # past the first guess: the pool of nodes grew during the search
    for k, turn in enumerate(turns):
        a, v, w = np.empty(size, np.int64), np.empty(size), np.empty(size)
        n = run_search(
            turn.state, ra, params, sizes, *prior, simulations, 0.25, 0.1, 0.3, noise, int(seeds[k]), a, v, w
        )
        assert n == n_moves[k] == len(turn.legal)
        np.testing.assert_array_equal(acts[k, :n], a[:n])
        np.testing.assert_array_equal(visits[k, :n], v[:n])
        np.testing.assert_array_equal(values[k, :n], w[:n])
        assert visits[k, :n].sum() == simulations


@pytest.mark.float_kernels
def test_batched_network_scores_do_not_depend_on_the_batch_and_match_the_one_position_scores():
    """net_logits adds each row's products in net_logit's order without BLAS, so its scores
    are net_logit's bit for bit whatever the batch and the CPU (OpenBLAS's kernels differ: .ci/run
    runs this file under two of them); torch's differ only by float32 rounding."""
    from sorry_env.board.observation import OBS_SIZE
    from sorry_env.board.policy_input import afterstates

    params, sizes, _ = pack(VALUE)
    states = np.array([t.state for t in _decisions(30, seed=4)])
    obs, _, _ = afterstates(states.astype(np.int64), game.rules_array("hasbro2003"))
    x = np.ascontiguousarray(obs[:, :OBS_SIZE], dtype=np.float32)
    one_at_a_time = np.array([net_logit(params, sizes, row) for row in x], dtype=np.float32)
    for batch in (1, 2, 3, 7, 16, 64, len(x)):
        for start in range(0, len(x), batch):
            part = np.ascontiguousarray(x[start : start + batch])
            got = np.empty(len(part), np.float32)
            net_logits(params, sizes, part, len(part), got)
            np.testing.assert_array_equal(got, one_at_a_time[start : start + len(part)])
    with torch.no_grad():
        torch_scores = PolicyAgent(VALUE).actor.net(torch.from_numpy(x))[:, 0].numpy()
    np.testing.assert_allclose(one_at_a_time, torch_scores, atol=TOLERANCE)


@pytest.mark.float_kernels
def test_an_azsearch_agent_decides_many_games_at_once_as_it_does_one_at_a_time():
    turns = _decisions(12, seed=6, min_moves=1)
    agent = AZSearchAgent(net=VALUE, simulations=24, seed=0)
    assert agent.acts_in_batches and not AZSearchAgent(net=VALUE, noise_fraction=0.25).acts_in_batches
    assert agent.act_turns(turns).tolist() == [agent.act(turn) for turn in turns]
    assert agent.act_turns([]).shape == (0,)


@pytest.mark.float_kernels
def test_a_tournament_plays_azsearch_games_in_lockstep_with_the_records_of_one_at_a_time():
    from sorry_env.agents.arena.play import Table

    table = Table([f"azsearch:net={VALUE},simulations=8", "heuristic"], "hasbro2003", 2000, seed=5)
    assert table.play_lockstep(range(4)) == [table.play(g) for g in range(4)]


def test_search_is_reproducible_from_its_seed_and_plays_legal_moves():
    turns = _decisions(8, seed=2)
    a = [AZSearchAgent(net=VALUE, simulations=24, noise_fraction=0.25, seed=5).act(t) for t in turns]
    b = [AZSearchAgent(net=VALUE, simulations=24, noise_fraction=0.25, seed=5).act(t) for t in turns]
    assert a == b
    assert all(m in t.legal for m, t in zip(a, turns))


def test_specs_and_wrong_games_are_refused_with_their_reason():
    agent = agents.make_agent(f"azsearch:net={VALUE},simulations=8")
    assert isinstance(agent, AZSearchAgent) and agent.simulations == 8
    with pytest.raises(ValueError, match="net=FILE"):
        agents.make_agent("azsearch:simulations=8")
    with pytest.raises(ValueError, match="simulations"):
        agents.make_agent(f"azsearch:net={VALUE},simulations=0")
    with pytest.raises(ValueError, match="no setting 'depth'"):
        agents.make_agent(f"azsearch:net={VALUE},depth=2")
    with pytest.raises(ValueError, match="2 players"):
        agent.check_game("hasbro2003", 4)
    with pytest.raises(ValueError, match="hidden hands"):
        agent.check_game("hasbro2003_points", 2)
    with pytest.raises(ValueError, match="trained for 4 players"):
        AZSearchAgent(net=POLICY_4P).check_game("hasbro2003", 2)


def test_a_short_tournament_against_the_heuristic_runs_to_the_end():
    from sorry_env.agents.arena.tournament import run_tournament

    r = run_tournament([f"azsearch:net={VALUE},simulations=8", "heuristic"], games=4, workers=1)
    assert r["truncated"] == 0 and sum(a["wins"] for a in r["agents"]) == 4


# ---- expert iteration ----------------------------------------------------------------------------
def _cfg(**section):
    return merge_config(EXPIT.defaults, {"expert_iteration": section}, "")


def test_expert_iteration_config_is_checked_before_work():
    with pytest.raises(ValueError, match="unknown key expert_iteration.'simulation'"):
        merge_config(EXPIT.defaults, {"expert_iteration": {"simulation": 3}}, "")
    with pytest.raises(ValueError, match="expert_iteration.window must be > 0"):
        EXPIT.validate(_cfg(window=0))
    with pytest.raises(ValueError, match="expert_iteration.lockstep_games must be > 0"):
        EXPIT.validate(_cfg(lockstep_games=0))
    with pytest.raises(ValueError, match="lockstep_games"):  # many trees side by side count against memory_mb
        EXPIT.validate(_cfg(simulations=5000, lockstep_games=256, memory_mb=2000))
    with pytest.raises(ValueError, match="memory_mb"):
        EXPIT.validate(_cfg(games=1_000_000, memory_mb=100))
    with pytest.raises(ValueError, match="trained for 4 players"):
        EXPIT.validate(_cfg(init=POLICY_4P))
    with pytest.raises(ValueError, match="no file"):
        EXPIT.validate(_cfg(init="nope.safetensors"))
    EXPIT.validate(_cfg())  # the defaults make a run


def test_the_gate_promotes_at_the_even_share_unless_the_config_says_otherwise():
    assert EXPIT.defaults["expert_iteration"]["gate_threshold"] is None
    assert X.even_share("hasbro2003", 2) == 0.5
    assert X.even_share("hasbro2003", 4) == 0.25  # four players alone: a quarter is even
    assert X.even_share("hasbro2003_teams", 4) == 0.5  # two teams
    EXPIT.validate(_cfg(gate_threshold=0.3))
    with pytest.raises(ValueError, match="expert_iteration.gate_threshold must be in"):
        EXPIT.validate(_cfg(gate_threshold=1.5))


def test_unreachable_ray_address_fails_in_seconds(tmp_path):
    import socket

    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    start = time.monotonic()
    with pytest.raises(ValueError, match="no Ray head reachable"):
        X.run(_cfg(), tmp_path / "run", address=f"127.0.0.1:{port}")
    assert time.monotonic() - start < 10
    assert not (tmp_path / "run").exists()  # nothing started


def test_segment_log_softmax_is_a_log_softmax_within_each_decision():
    logits = torch.tensor([0.5, -1.0, 2.0, 0.0, 3.0])
    rows = torch.tensor([0, 0, 0, 1, 1])
    got = X.segment_log_softmax(logits, rows, 2)
    assert torch.allclose(got[:3], torch.log_softmax(logits[:3], 0))
    assert torch.allclose(got[3:], torch.log_softmax(logits[3:], 0))


@pytest.mark.float_kernels
def test_selfplay_records_are_the_searchs_choices_and_outcomes():
    params, sizes, _ = pack(VALUE)
    settings = {
        "simulations": 8, "c_puct": 0.25, "prior_temperature": 0.1, "noise_alpha": 0.3,
        "noise_fraction": 0.25, "sample_moves": 4,
    }  # fmt: skip
    data = X.selfplay_games(params, sizes, "hasbro2003", 2, 400, {**settings, "lockstep_games": 2}, [0, 1], seed=3)
    alone = X.selfplay_games(params, sizes, "hasbro2003", 2, 400, {**settings, "lockstep_games": 1}, [0, 1], seed=3)
    for key in ("states", "policy", "chosen", "won", "game", "searched", "decisions"):  # side by side: the same games
        np.testing.assert_array_equal(data[key], alone[key])
    n = len(data["chosen"])
    assert n > 20 and data["decisions"] > n and set(data["game"]) == {0, 1}
    assert np.allclose(data["policy"].sum(axis=1), 1.0)
    ra = game.rules_array("hasbro2003")
    buf = np.empty(game.num_actions("hasbro2003"), np.int64)
    for k in range(0, n, 7):
        legal = buf[: E.legal_actions(data["states"][k].astype(np.int64), ra, buf)]
        assert data["chosen"][k] in legal
        assert set(np.flatnonzero(data["policy"][k])) <= set(legal.tolist())
    for g in (0, 1):  # one side won each game: its movers' labels are 1, the others' 0
        labels = set(data["won"][data["game"] == g].tolist())
        assert labels == {0.0, 1.0}
    # "searched" is the search's own value of the chosen move: searching a recorded position
    # again with the game's seed is not possible from the record, so check its range and that
    # it tracks the outcome (the mover's value is higher where the mover went on to win)
    assert data["searched"].shape == data["won"].shape and np.all((data["searched"] >= 0) & (data["searched"] <= 1))
    assert data["searched"][data["won"] == 1].mean() > data["searched"][data["won"] == 0].mean()
    # the training losses on these records are finite and the policy loss moves when trained
    actor, _ = X.train_candidate(VALUE, data, {**_cfg(epochs=3, learning_rate=1e-3)}, seed=0, log=lambda s: None)
    before = X.diagnostics(PolicyAgent(VALUE).actor.net, data, ra, 0.1)
    after = X.diagnostics(actor.net, data, ra, 0.1)
    assert after["policy_loss"] < before["policy_loss"]


@pytest.mark.slow
def test_ray_workers_on_two_nodes_replace_a_dead_one_and_count_each_game_once():
    import ray
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    cluster.add_node(num_cpus=1)
    try:
        ray.shutdown()  # whatever Ray this process had: the test connects to its own cluster
        ray.init(address=cluster.address)
        cfg = _cfg(simulations=4, workers=2)
        pool = X.WorkerPool(cfg, 2)
        nodes = set(ray.get([a.node.remote() for a in pool.actors]))
        assert len(nodes) == 2  # one actor per node
        params, sizes, _ = pack(VALUE)
        data = pool.play(params, sizes, games=6, seed=1, crash_batches=[0])
        assert pool.replaced == 1
        assert sorted(set(data["game"].tolist())) == list(range(6))
        # every game's decisions once: the same as playing them without a crash
        again = pool.play(params, sizes, games=6, seed=1)
        assert len(again["chosen"]) == len(data["chosen"])
        pool.close()
    finally:
        ray.shutdown()
        cluster.shutdown()


@pytest.mark.slow
def test_a_run_resumes_without_replaying_finished_generations(tmp_path):
    import ray

    cfg = _cfg(generations=1, games=2, simulations=4, epochs=1, gate_games=2, eval_games=2)
    try:
        rows = X.run(cfg, tmp_path, log=lambda s: None)
        assert len(rows) == 2 and (tmp_path / "net-1.safetensors").exists()
        first = (tmp_path / "selfplay-1.npz").stat().st_mtime_ns
        cfg["expert_iteration"]["generations"] = 2
        rows = X.run(cfg, tmp_path, log=lambda s: None)
        assert [r["generation"] for r in rows] == [0, 1, 2]
        assert (tmp_path / "selfplay-1.npz").stat().st_mtime_ns == first
        PolicyAgent(tmp_path / "net-2.safetensors")  # an ordinary policy file
    finally:
        ray.shutdown()


def test_the_browser_game_offers_azsearch_with_the_servers_network_and_bounded_simulations():
    """A client names azsearch and its simulations (within the cap); the network is the
    server's shipped value network for the game, never a file the client names."""
    pytest.importorskip("starlette")
    from sorry_env import games
    from sorry_env.agents.play.serve.opponents import SETTING_CAPS, OpponentMenu
    from sorry_env.agents.play.serve.workers import MovePool, RemoteAgent, _maker

    menu = OpponentMenu(None, MovePool(1))  # (no worker starts before a move is asked for)
    board = games.load_game("sorry", "hasbro2003")
    label, choice = menu.choose(board, "azsearch:simulations=32", 2, 0)
    settings = dict(choice.settings)
    assert isinstance(choice, RemoteAgent) and label == "azsearch:simulations=32"  # a search: in the workers
    assert settings["simulations"] == 32 and settings["net"].endswith("value-2p.safetensors")
    low, high = SETTING_CAPS[AZSearchAgent]["simulations"]
    for refused, why in [
        (f"azsearch:simulations={high + 1}", "from 1 to 256"),
        (f"azsearch:net={VALUE}", "no setting"),
        ("azsearch:net=/etc/passwd", "no setting"),
    ]:
        with pytest.raises(ValueError, match=why):
            menu.choose(board, refused, 2, 0)
    with pytest.raises(ValueError, match="value network for"):
        menu.choose(board, "azsearch", 4, 0)
    agent = _maker(choice.game_id, choice.name)(**settings)  # as a worker builds it, from the server's own data
    assert agent.simulations == 32


def test_azsearch_is_a_training_opponent_for_its_game_only():
    from sorry_env.training.opponents import check_mix

    check_mix({f"azsearch:net={VALUE},simulations=4": 1.0}, "hasbro2003", 2)
    with pytest.raises(ValueError, match="4 players"):
        check_mix({f"azsearch:net={VALUE},simulations=4": 1.0}, "hasbro2003", 4)


def test_a_bare_azsearch_opponent_is_refused_in_a_config():
    from sorry_env.training.opponents import check_mix

    with pytest.raises(ValueError, match="net=FILE"):
        check_mix({"azsearch": 1.0}, "hasbro2003", 2)


def test_the_expit_configs_load_and_pass_their_checks():
    import pathlib

    paths = sorted(pathlib.Path("configs").glob("expit-*.yaml"))
    assert paths
    for path in paths:
        EXPIT.load(path)


def test_a_run_directorys_state_names_only_its_own_networks(tmp_path):
    """state.json is read bounded, and its current network is the config's init or a file of
    the run directory: a copied run cannot point the loader at another path."""
    init = "checkpoints/value-2p.safetensors"
    assert X._run_state(tmp_path / "state.json", tmp_path, init) == {"generation": 0, "current": init}
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"generation": 2, "current": str(tmp_path / "net-2.safetensors")}))
    assert X._run_state(state, tmp_path, init)["generation"] == 2
    for bad in ({"generation": 1, "current": "/etc/passwd"}, {"generation": -1, "current": init}, [1, 2]):
        state.write_text(json.dumps(bad))
        with pytest.raises(ValueError, match="state"):
            X._run_state(state, tmp_path, init)
    state.write_text("[" * 50_000)
    with pytest.raises(ValueError):
        X._run_state(state, tmp_path, init)


def test_the_value_target_blends_the_outcome_with_the_searchs_value():
    data = {"won": np.array([1.0, 0.0, 0.5], np.float32), "searched": np.array([0.6, 0.2, 0.9], np.float32)}
    idx = np.array([2, 0])
    np.testing.assert_allclose(X.value_labels(data, idx, 0.0), [0.5, 1.0])
    np.testing.assert_allclose(X.value_labels(data, idx, 1.0), [0.9, 0.6])
    np.testing.assert_allclose(X.value_labels(data, idx, 0.25), [0.75 * 0.5 + 0.25 * 0.9, 0.75 * 1.0 + 0.25 * 0.6])
    with pytest.raises(ValueError, match="search's values"):
        X.value_labels({"won": data["won"]}, idx, 0.5)  # an old self-play file cannot serve a blended target
    with pytest.raises(ValueError, match="value_target_mix"):
        EXPIT.validate(_cfg(value_target_mix=1.5))


def test_the_sparse_losses_equal_the_dense_network_and_diagnostics_do_not_depend_on_the_chunk(monkeypatch):
    from sorry_env.board.policy_input import afterstates

    params, sizes, _ = pack(VALUE)
    settings = {
        "simulations": 4, "c_puct": 0.25, "prior_temperature": 0.1, "noise_alpha": 0.3,
        "noise_fraction": 0.25, "sample_moves": 2, "lockstep_games": 2,
    }  # fmt: skip
    data = X.selfplay_games(params, sizes, "hasbro2003", 2, 400, settings, [0, 1], seed=5)
    ra = game.rules_array("hasbro2003")
    net = PolicyAgent(VALUE).actor.net
    idx = np.arange(len(data["chosen"]))
    with torch.no_grad():
        v, p, (scores, sparse_rows, sparse_actions) = X.losses(net, data, idx, ra, 0.1)
        obs, rows, actions = afterstates(data["states"].astype(np.int64), ra)
        logits = net(torch.from_numpy(obs))[:, 0]
        logp = X.segment_log_softmax(logits / 0.1, torch.from_numpy(rows), len(idx))
        dense_p = -(torch.from_numpy(data["policy"][rows, actions]) * logp).sum() / len(idx)
        chosen = torch.from_numpy(actions == data["chosen"][rows])
        dense_v = torch.nn.functional.binary_cross_entropy_with_logits(
            logits[chosen], torch.from_numpy(data["won"][rows])[chosen]
        )
    assert float(v) == pytest.approx(float(dense_v), rel=1e-5) and float(p) == pytest.approx(float(dense_p), rel=1e-5)
    assert (sparse_rows == rows).all() and (sparse_actions == actions).all()
    np.testing.assert_allclose(scores.numpy(), logits.numpy(), rtol=1e-5, atol=1e-5)
    whole = X.diagnostics(net, data, ra, 0.1)
    monkeypatch.setattr(X, "DIAGNOSTIC_CHUNK", 7)
    chunked = X.diagnostics(net, data, ra, 0.1)
    assert chunked["policy_agreement"] == whole["policy_agreement"]
    assert chunked["value_loss"] == pytest.approx(whole["value_loss"], rel=1e-5)
    assert chunked["policy_loss"] == pytest.approx(whole["policy_loss"], rel=1e-5)
