"""The trainer's batched rollout env (training/batched_env.py) and sparse first layer
(training/sb3_policy.py): agreement with the engine, batched snapshot forwards, seeds, and
training on it."""

import numpy as np
import pytest
import torch
from stable_baselines3.common.vec_env import DummyVecEnv

from sorry_env.agents import Agent
from sorry_env.board import engine as E
from sorry_env.board import game
from sorry_env.board.observation import OBS_SIZE
from sorry_env.board.policy_input import INPUT_SIZE, policy_input
from sorry_env.training import train as T
from sorry_env.training.batched_env import BatchedSelfPlayEnv
from sorry_env.training.config import load_config
from sorry_env.training.export import export_model
from sorry_env.training.opponents import OpponentPool
from sorry_env.training.sb3_policy import actor_logits, sparse_linear

SMOKE = "configs/smoke.yaml"


def smoke_cfg(**game):
    cfg = load_config(SMOKE)
    cfg["game"].update(game)
    return cfg


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory):
    """A policy file of the smoke config's (untrained) network."""
    cfg = smoke_cfg()
    path = tmp_path_factory.mktemp("snap") / "snapshot.safetensors"
    venv = DummyVecEnv([lambda: T.make_env(cfg, lambda rng, n: ["random"] * n)])
    export_model(T.make_model(cfg, venv, path.parent / "tb"), path, cfg, 0)
    return path


def random_actions(masks, rng):
    return np.array([rng.choice(np.flatnonzero(m)) for m in masks])


def play(env, steps, seed=0, check=None):
    """Random legal learner moves for `steps` steps; `check(obs, rewards, dones, infos)` after each."""
    rng = np.random.default_rng(seed)
    obs = env.reset()
    trace = [obs]
    for _ in range(steps):
        env.step_async(random_actions(env.action_masks(), rng))
        obs, rewards, dones, infos = env.step_wait()
        trace += [obs, rewards, dones]
        if check:
            check(obs, rewards, dones, infos)
    return trace


@pytest.mark.parametrize(
    "players, rules, mix, max_turns",
    [
        (2, "hasbro2003", {"heuristic": 0.4, "greedy": 0.3, "random": 0.3}, 120),
        (4, "hasbro2003_teams", {"heuristic": 0.5, "greedy": 0.5}, 250),
        (3, "hasbro2003", {"random": 1.0}, 250),
    ],
)
def test_learner_views_and_rewards_agree_with_the_engine(players, rules, mix, max_turns):
    cfg = smoke_cfg(num_players=players, rules=rules, max_turns=max_turns)
    cfg["envs"] = 12
    env = BatchedSelfPlayEnv(cfg, OpponentPool(mix, seed=0))
    env.seed(5)
    ra = game.rules_array(rules)
    seen = {"ended": 0, "won": 0, "lost": 0, "truncated": 0}

    def check(obs, rewards, dones, infos):
        assert obs.shape == (12, INPUT_SIZE)
        for b in range(12):
            state, learner = env.states[b], int(env.learners[b])
            assert game.to_move(state) == learner and E.is_running(state, env.max_turns)
            np.testing.assert_array_equal(obs[b], policy_input(state, ra, learner))
            np.testing.assert_array_equal(env.action_masks()[b], game.legal_mask(state, rules).astype(bool))
            if dones[b]:
                seen["ended"] += 1
                final = np.round(infos[b]["terminal_observation"][OBS_SIZE:]).astype(np.int64)
                winner = game.winner(final)
                seat = infos[b]["learner_seat"]
                if infos[b]["TimeLimit.truncated"]:
                    assert winner is None and rewards[b] == 0
                    seen["truncated"] += 1
                else:
                    expected = 1.0 if game.same_side(rules, seat, winner) else -1.0
                    assert rewards[b] == expected and infos[b]["episode"]["r"] == expected
                    seen["won" if expected > 0 else "lost"] += 1
            else:
                assert rewards[b] == 0

    play(env, 300, check=check)
    assert seen["won"] and seen["lost"] and seen["truncated"], seen


def test_a_partners_win_pays_the_learner():
    cfg = smoke_cfg(num_players=4, rules="hasbro2003_teams", max_turns=2000)
    cfg["envs"] = 16
    env = BatchedSelfPlayEnv(cfg, OpponentPool({"random": 1.0}, seed=0))
    env.seed(1)
    partner_wins = []

    def check(obs, rewards, dones, infos):
        for b in np.flatnonzero(dones):
            final = np.round(infos[b]["terminal_observation"][OBS_SIZE:]).astype(np.int64)
            winner, seat = game.winner(final), infos[b]["learner_seat"]
            if winner is not None and winner != seat and game.same_side("hasbro2003_teams", seat, winner):
                partner_wins.append(rewards[b])

    play(env, 250, check=check)
    assert partner_wins and all(r == 1.0 for r in partner_wins)


def test_same_seed_same_games_and_another_seed_others(snapshot):
    def trace(seed):
        pool = OpponentPool({"snapshots": 0.5, "heuristic": 0.3, "random": 0.2}, seed=0)
        pool.add_snapshot(snapshot)
        cfg = smoke_cfg()
        cfg["envs"] = 8
        env = BatchedSelfPlayEnv(cfg, pool)
        env.seed(seed)
        return play(env, 60)

    a, b, c = trace(3), trace(3), trace(4)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not np.array_equal(a[0], c[0])


def snapshots_only_env(add, opponent, envs: int) -> BatchedSelfPlayEnv:
    """`envs` smoke-config games, seeded 0, whose opponents are all one snapshot: `opponent`
    added to the pool by `add` (OpponentPool.add_snapshot or add_agent)."""
    pool = OpponentPool({"snapshots": 1.0}, seed=0)
    add(pool, opponent)
    cfg = smoke_cfg()
    cfg["envs"] = envs
    env = BatchedSelfPlayEnv(cfg, pool)
    env.seed(0)
    return env


def test_snapshots_are_evaluated_in_batches(snapshot):
    env = snapshots_only_env(OpponentPool.add_snapshot, snapshot, 32)
    pool = env.pool
    actor = pool.snapshot_agents[0].actor
    batches = []
    hook = actor.net.layers[1].register_forward_hook(lambda module, args, out: batches.append(len(args[0])))
    try:
        play(env, 40)
    finally:
        hook.remove()
    assert len(batches) == env.forwards > 0
    assert env.external_moves >= 2 * env.forwards  # many games' moves per forward
    assert max(batches) > 32  # afterstate rows of several games in one forward


class CountingBatchAgent(Agent):
    """A batched agent (``acts_in_batches``) playing each turn's first legal move, or, when
    `illegal`, an action outside the turn's legal ones."""

    acts_in_batches = True
    name = "first legal"

    def __init__(self, illegal=False):
        self.illegal, self.calls, self.turns = illegal, 0, 0

    def act_turns(self, turns):
        self.calls += 1
        self.turns += len(turns)
        legal = [int(t.legal[0]) for t in turns]
        return np.array([-1 if self.illegal else a for a in legal], dtype=np.int64)


def test_agents_that_act_in_batches_are_asked_once_a_round_and_checked():
    agent = CountingBatchAgent()
    env = snapshots_only_env(OpponentPool.add_agent, agent, 16)
    play(env, 30)
    assert env.external_moves == agent.turns > 0
    assert agent.turns >= 4 * agent.calls  # many games' moves per call
    env = snapshots_only_env(OpponentPool.add_agent, CountingBatchAgent(illegal=True), 16)
    with pytest.raises(ValueError, match="opponent 'first legal' .* chose illegal action -1"):
        play(env, 30)


def test_bad_actions_are_refused_naming_the_game():
    cfg = smoke_cfg()
    cfg["envs"] = 4
    env = BatchedSelfPlayEnv(cfg, OpponentPool({"random": 1.0}, seed=0))
    env.seed(0)
    env.reset()
    actions = env.action_masks().argmax(axis=1)
    actions[2] = np.flatnonzero(~env.action_masks()[2])[0]
    env.step_async(actions)
    with pytest.raises(ValueError, match="game 2: action .* is illegal"):
        env.step_wait()


def test_sparse_first_layer_equals_the_dense_one():
    torch.manual_seed(0)
    layer = torch.nn.Linear(OBS_SIZE, 32)
    x = np.zeros((50, OBS_SIZE), dtype=np.float32)
    rng = np.random.default_rng(0)
    x[rng.integers(0, 50, 600), rng.integers(0, OBS_SIZE, 600)] = rng.random(600).astype(np.float32)
    x[7] = 0  # an all-zero row
    sparse = sparse_linear(layer, x)
    dense = layer(torch.from_numpy(x))
    torch.testing.assert_close(sparse, dense, rtol=1e-5, atol=1e-5)
    sparse.sum().backward()
    grad = layer.weight.grad.clone()
    layer.weight.grad = None
    dense.sum().backward()
    torch.testing.assert_close(grad, layer.weight.grad, rtol=1e-5, atol=1e-5)


def test_sparse_first_layer_follows_optimizer_steps_and_loads():
    torch.manual_seed(0)
    layer = torch.nn.Linear(OBS_SIZE, 8)
    x = np.zeros((4, OBS_SIZE), dtype=np.float32)
    x[:, [3, 70, 900]] = 1.0
    optimizer = torch.optim.Adam(layer.parameters(), lr=0.1)
    for _ in range(2):  # the cached transposed weight must follow each step
        sparse_linear(layer, x).square().sum().backward()
        optimizer.step()
        optimizer.zero_grad()
        torch.testing.assert_close(sparse_linear(layer, x), layer(torch.from_numpy(x)))
    layer.load_state_dict(torch.nn.Linear(OBS_SIZE, 8).state_dict())
    torch.testing.assert_close(sparse_linear(layer, x), layer(torch.from_numpy(x)))


@pytest.mark.parametrize("kind", ["afterstate", "mlp"])
def test_training_forward_gives_the_actors_logits(kind):
    from sorry_env.agents.policy import Actor, masked_logits

    cfg = smoke_cfg()
    cfg["envs"] = 20
    env = BatchedSelfPlayEnv(cfg, OpponentPool({"random": 1.0}, seed=0))
    env.seed(0)
    trace = play(env, 9)
    inputs = np.concatenate([trace[0], *trace[1::3]])  # observations of 10 steps of 20 games
    masks = np.array([game.legal_mask(np.round(x[OBS_SIZE:]).astype(np.int64), "hasbro2003") for x in inputs])
    actor = Actor(kind, [32], "relu", "hasbro2003")
    with torch.no_grad():
        fast = masked_logits(actor_logits(actor, torch.from_numpy(inputs)), masks)
        plain = masked_logits(actor(torch.from_numpy(inputs)), masks)
    torch.testing.assert_close(fast, plain, rtol=1e-5, atol=1e-5)


def test_config_rollout_key(tmp_path):
    cfg = load_config(SMOKE)
    assert cfg["rollout"] == "batched"
    venv = T.make_envs(cfg, OpponentPool({"random": 1.0}), seed=0)
    assert isinstance(venv, BatchedSelfPlayEnv) and venv.num_envs == cfg["envs"]
    cfg["rollout"] = "per_game"
    assert isinstance(T.make_envs(cfg, OpponentPool({"random": 1.0}), seed=0), DummyVecEnv)
    bad = tmp_path / "bad.yaml"
    bad.write_text(open(SMOKE).read() + "rollout: compiled\n")
    with pytest.raises(ValueError, match="rollout must be one of"):
        load_config(bad)


def test_per_game_rollouts_still_train_and_a_run_from_before_the_key_resumes_batched(tmp_path):
    import json

    cfg = load_config(SMOKE)
    cfg.update(rollout="per_game", name="smoke-per-game")
    cfg["budget"]["timesteps"] = 1024
    run = T.train(cfg, tmp_path)
    assert run.last["checkpoint"] >= 1024
    state = json.loads(run.state_path.read_text())
    del state["config"]["rollout"]  # as run_state.json files written before the key existed
    run.state_path.write_text(json.dumps(state))
    cfg.update(rollout="batched")
    cfg["budget"]["timesteps"] = 2048
    assert T.train(cfg, tmp_path, resume=True).last["checkpoint"] >= 2048


@pytest.mark.parametrize("rules, players", [("hasbro2003", 2), ("hasbro2003_points", 4), ("hasbro2013_fire_ice", 3)])
def test_afterstates_are_the_observations_after_each_legal_move(rules, players):
    """sparse_afterstates (and afterstates, its dense form) against the engine move by move:
    each legal move played before the draw, then observed by the mover."""
    from sorry_env.board.observation import observe
    from sorry_env.board.policy_input import afterstates, sparse_afterstate_observations, sparse_afterstates
    from sorry_env.training.sb3_policy import sparse_rows

    cfg = smoke_cfg(rules=rules, num_players=players)
    cfg["envs"] = 16
    env = BatchedSelfPlayEnv(cfg, OpponentPool({"random": 1.0}, seed=0))
    env.seed(3)
    trace = play(env, 6)
    states = np.round(np.concatenate([trace[0], *trace[1::3]])[:, OBS_SIZE:]).astype(np.int64)
    rules_array = game.rules_array(rules)
    want_obs, want_rows, want_actions = [], [], []
    for b, state in enumerate(states):
        for action in np.flatnonzero(game.legal_mask(state, rules)):
            child = state.copy()
            E.play_before_draw(child, rules_array, action)
            want_obs.append(np.empty(OBS_SIZE, dtype=np.float32))
            observe(child, rules_array, E.to_move(state), want_obs[-1])
            want_rows.append(b)
            want_actions.append(action)
    sparse, rows, actions = sparse_afterstates(states, rules_array)
    order = np.lexsort((actions, rows))  # the engine's listing order of a state's moves may differ from the mask's
    np.testing.assert_array_equal(rows[order], want_rows)
    np.testing.assert_array_equal(actions[order], want_actions)
    for got, want in zip(sparse, sparse_rows(np.array(want_obs)[np.argsort(order)])):
        np.testing.assert_array_equal(got, want)
    obs, dense_rows, dense_actions = afterstates(states, rules_array)
    np.testing.assert_array_equal(obs[order], np.array(want_obs))
    np.testing.assert_array_equal(dense_rows, rows)
    np.testing.assert_array_equal(dense_actions, actions)
    # Too little room for the entries: the compiled function says so instead of writing past it.
    n = len(rows)
    short = np.empty(len(sparse[0]) - 1, dtype=np.int64)
    args = (np.empty(n + 1, np.int64), np.empty(n, np.int64), np.empty(n, np.int64), short, short.astype(np.float32))
    assert sparse_afterstate_observations(states, rules_array, *args) == -1


@pytest.mark.parametrize("players", [2, 4])
def test_the_updates_distribution_equals_sb3s(players):
    """PPO's update scores only the legal moves (SelfPlayPolicy.evaluate_actions): the same
    values, log probabilities, entropies and gradients as sb3's masked distribution."""
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    cfg = smoke_cfg(num_players=players)
    cfg["envs"] = 16
    env = BatchedSelfPlayEnv(cfg, OpponentPool({"random": 1.0}, seed=0))
    env.seed(1)
    model = T.make_model(cfg, env, "unused")
    trace = play(env, 4)
    obs = torch.from_numpy(np.concatenate([trace[0], *trace[1::3]]))
    states = np.round(obs[:, OBS_SIZE:].numpy()).astype(np.int64)
    masks = np.array([game.legal_mask(s, "hasbro2003") for s in states])
    actions = torch.from_numpy(random_actions(masks, np.random.default_rng(0)))
    policy = model.policy
    params = list(policy.parameters())
    ours = policy.evaluate_actions(obs, actions, action_masks=masks)
    theirs = MaskableActorCriticPolicy.evaluate_actions(policy, obs, actions, action_masks=masks)
    for a, b in zip(ours, theirs):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5)

    def gradients(out):
        values, log_prob, entropy = out
        grads = torch.autograd.grad((log_prob * 0.7 + entropy * 0.3 + values[:, 0]).sum(), params, allow_unused=True)
        return [torch.zeros_like(p) if g is None else g for p, g in zip(params, grads)]

    for a, b in zip(gradients(ours), gradients(theirs)):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)
    wrong = actions.clone()
    wrong[3] = int(np.flatnonzero(masks[3] == 0)[0])
    with pytest.raises(ValueError, match="do not match the states' legal moves"):
        policy.evaluate_actions(obs, wrong, action_masks=masks)


def test_the_rollout_forward_follows_the_fused_optimizers_steps():
    """The fused Adam step does not bump the weights' version, which the sparse layer's cached
    transposed weight reads; the optimizer's hook drops the cache instead."""
    cfg = smoke_cfg()
    cfg["envs"] = 8
    env = BatchedSelfPlayEnv(cfg, OpponentPool({"random": 1.0}, seed=0))
    env.seed(0)
    model = T.make_model(cfg, env, "unused")
    assert model.policy.optimizer.defaults["fused"]
    actor = model.policy.mlp_extractor.actor
    inputs = torch.from_numpy(env.reset())
    for _ in range(2):
        actor_logits(actor, inputs)  # fills the cache
        (actor_logits(actor, inputs).square().sum() + 1).backward()
        model.policy.optimizer.step()
        model.policy.optimizer.zero_grad()
        with torch.no_grad():
            torch.testing.assert_close(actor_logits(actor, inputs), actor(inputs))


def test_the_game_api_env_plays_the_compiled_envs_games(snapshot):
    """SelfPlayEnv, the rollout env of every registered game (over the Game API: game_ppo's),
    deals and plays the board game as BatchedSelfPlayEnv's compiled loops do when no opponent
    is compiled: the same seed gives the same observations, masks, rewards and ends."""
    from sorry_env.agents.catalog import policy_game
    from sorry_env.training.batched_env import SelfPlayEnv

    def trace(make):
        pool = OpponentPool({"snapshots": 1.0}, seed=0)
        pool.add_snapshot(snapshot)
        env = make(pool)
        env.seed(5)
        masks = []
        trace = play(env, 80, check=lambda *_: masks.append(env.action_masks()))
        return trace + masks

    cfg = smoke_cfg()
    cfg["envs"] = 6
    g = cfg["game"]
    compiled = trace(lambda pool: BatchedSelfPlayEnv(cfg, pool))
    generic = trace(lambda pool: SelfPlayEnv(policy_game(g["rules"]), g["num_players"], g["max_turns"], 6, pool))
    assert len(compiled) == len(generic) and all(np.array_equal(x, y) for x, y in zip(compiled, generic))
    assert any(trace_dones.any() for trace_dones in compiled[3 : 3 * 80 + 1 : 3])  # games ended and were dealt again
