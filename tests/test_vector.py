"""The batched env (sorry_env.vector) and its compiled-opponent mode (sorry_env.vector_opponents):
the same trajectories as the single env for the same seeds and actions, seeds independent of
the batch split, masks equal to legal_actions, invariants, and clear errors on bad input."""

import numpy as np
import pytest

from sorry_env import vector as V
from sorry_env.agents import GreedyAgent, HeuristicAgent, Turn
from sorry_env.board import engine as E
from sorry_env.board import game
from sorry_env.board.env import raw_env
from sorry_env.board.observation import OBS_SIZE, observe
from sorry_env.board.policy_input import INPUT_SIZE, policy_input
from sorry_env.board.rules import PRESETS
from sorry_env.vector_opponents import VectorOpponentEnv, opponent_codes

CASES = [(name, n) for name, rules in PRESETS.items() for n in ((4,) if rules.teams != "none" else (2, 3, 4))]


def random_actions(masks, rng):
    return np.array([rng.choice(np.flatnonzero(row)) for row in masks], dtype=np.int64)


def record_selfplay(env, seed, steps, action_seed=0):
    """Play random legal actions; every step's (obs, mask, to_move, action, rewards, term, trunc)."""
    rng = np.random.default_rng(action_seed)
    obs, info = env.reset(seed=seed)
    to_move = info["to_move"]
    log = []
    for _ in range(steps):
        actions = random_actions(obs["action_mask"], rng)
        new_obs, rewards, term, trunc, info = env.step(actions)
        log.append((obs, to_move, actions, rewards, term, trunc))
        obs, to_move = new_obs, info["to_move"]
    return log


def test_episode_seed_is_numpy_seed_sequence():
    for game_seed in (0, 1, 7, 123456789, 2**32 - 1):
        for episode in (0, 1, 2, 1000):
            want = int(np.random.SeedSequence(game_seed + episode * 2**32).generate_state(1)[0])
            assert V.episode_seed(game_seed, episode) == want


@pytest.mark.parametrize("preset,players", CASES)
def test_selfplay_equals_single_env(preset, players):
    """Game i, episode k of the batch = raw_env reset with seed (seed + i) + k * 2**32, step by
    step: observation, mask (= legal_actions), seat to move, rewards, end flags."""
    B, seed, max_turns = 3, 40, 70  # short games: every game truncates and resets at least once
    env = V.SorryVectorEnv(B, players, rules=preset, max_turns=max_turns)
    log = record_selfplay(env, seed, 160)
    for i in range(B):
        single = raw_env(players, rules=preset, max_turns=max_turns)
        episode = 0
        single.reset(seed=seed + i)
        for obs, to_move, actions, rewards, term, trunc in log:
            agent = single.agent_selection
            assert int(agent.split("_")[1]) == to_move[i]
            view = single.observe(agent)
            np.testing.assert_array_equal(view["observation"], obs["observation"][i])
            np.testing.assert_array_equal(view["action_mask"], obs["action_mask"][i])
            legal = game.legal_actions(single.state_array, preset)
            assert np.flatnonzero(obs["action_mask"][i]).tolist() == legal.tolist()
            single.step(int(actions[i]))
            done = any(single.terminations.values()) or any(single.truncations.values())
            assert (bool(term[i]), bool(trunc[i])) == (
                any(single.terminations.values()),
                any(single.truncations.values()),
            )
            for a, r in single.rewards.items():
                assert rewards[i, int(a.split("_")[1])] == r
            if done:
                episode += 1
                single.reset(seed=seed + i + episode * 2**32)
        assert env.episodes[i] == episode >= 1


def test_wins_reward_the_winning_side_and_reset():
    env = V.SorryVectorEnv(4, 2, rules="hasbro2003_fast")
    log = record_selfplay(env, 0, 400)
    finished = 0
    for _obs, _to_move, _actions, rewards, term, _trunc in log:
        for i in np.flatnonzero(term):
            finished += 1
            assert sorted(rewards[i].tolist()) == [-1.0, 0.0, 0.0, 1.0]
            assert rewards[i, 1] == rewards[i, 3] == 0.0  # seats 1 and 3 are not in a 2-player game
        assert not term[~term].any() and (rewards[~term] == 0).all()
    assert finished >= 4


def test_batch_split_changes_nothing():
    """A batch of 6 seeded 5 = batches of 2 and 4 seeded 5 and 7 (same actions per game)."""
    whole = V.SorryVectorEnv(6, 4, rules="hasbro2003", max_turns=50)
    parts = [V.SorryVectorEnv(2, 4, max_turns=50), V.SorryVectorEnv(4, 4, max_turns=50)]
    obs, _ = whole.reset(seed=5)
    part_obs = [parts[0].reset(seed=5)[0], parts[1].reset(seed=[7, 8, 9, 10])[0]]
    rng = np.random.default_rng(1)
    for _ in range(120):
        np.testing.assert_array_equal(obs["observation"], np.concatenate([p["observation"] for p in part_obs]))
        np.testing.assert_array_equal(obs["action_mask"], np.concatenate([p["action_mask"] for p in part_obs]))
        actions = random_actions(obs["action_mask"], rng)
        obs, rewards, *_ = whole.step(actions)
        results = [parts[0].step(actions[:2]), parts[1].step(actions[2:])]
        part_obs = [r[0] for r in results]
        np.testing.assert_array_equal(rewards, np.concatenate([r[1] for r in results]))
    np.testing.assert_array_equal(whole.states, np.concatenate([p.states for p in parts]))


@pytest.mark.ci_slow  # over 10 s: CI runs it after the README's test command
def test_parallel_equals_serial():
    logs = [record_selfplay(V.SorryVectorEnv(16, 3, max_turns=60, parallel=p), 3, 150) for p in (True, False)]
    for a, b in zip(*logs):
        np.testing.assert_array_equal(a[0]["observation"], b[0]["observation"])
        np.testing.assert_array_equal(a[3], b[3])


def test_invariants_over_many_games():
    env = V.SorryVectorEnv(64, 4, rules="hasbro2003_fast", copy=False)
    rng = np.random.default_rng(2)
    obs, info = env.reset(seed=0)
    ended = 0
    for _ in range(600):
        masks = obs["action_mask"]
        assert (masks.sum(axis=1) >= 1).all()
        assert obs["observation"].min() >= 0.0 and obs["observation"].max() <= 1.0
        # the observation is the seat to move's own view (its pawns in player slot 0)
        assert (env.states[np.arange(64), E.TO_MOVE] == info["to_move"]).all()
        obs, rewards, term, trunc, info = env.step(random_actions(masks, rng))
        assert (rewards.sum(axis=1)[term] == -2.0).all()  # 4 players: one +1, three -1
        assert list(np.flatnonzero(info["_final_obs"])) == list(np.flatnonzero(term | trunc))
        ended += int(term.sum())
    assert ended > 10
    assert (env.states[:, E.WINNER] < 0).all()  # every finished game was replaced by a new one


def test_final_obs_is_the_last_position():
    env = V.SorryVectorEnv(2, 2, max_turns=5)
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(5):  # each step plays one card: the fifth reaches max_turns
        before = env.states.copy()
        actions = random_actions(obs["action_mask"], rng)
        obs, _, _, trunc, info = env.step(actions)
    assert trunc.all()
    for i in range(2):
        last = before[i].copy()
        mover = last[E.TO_MOVE]
        E.step(last, game.rules_array("hasbro2003"), int(actions[i]))
        want = np.empty(OBS_SIZE, dtype=np.float32)
        observe(last, game.rules_array("hasbro2003"), mover, want)
        np.testing.assert_array_equal(info["final_obs"][i], want)


# ---- compiled opponents ---------------------------------------------------------------------
def reference_opponent_games(preset, players, kinds, game_seed, learner_actions):
    """The learner's (policy input, mask) before each of its moves and its rewards, replayed
    with the Python agents from the same seeds."""
    rules = PRESETS[preset]
    seats = game.seats_for(players, rules=rules)
    agents_by_kind = {"greedy": GreedyAgent(0), "heuristic": HeuristicAgent(0)}
    view_rng = np.random.default_rng(0)
    episode, rows = 0, []
    state = learner = None

    def start():
        nonlocal state, learner
        state = game.new_state(rules, seats=seats, seed=int(V.episode_seed(game_seed, episode)))
        learner = seats[(game_seed + episode) % players]

    def play_opponents():
        while state[E.WINNER] < 0 and state[E.TO_MOVE] != learner and state[E.TURN] < 2000:
            seat = int(state[E.TO_MOVE])
            order = [s for s in ((learner + k) % 4 for k in range(1, 4)) if s in seats]
            agent = agents_by_kind[kinds[order.index(seat)]]
            E.step(state, game.rules_array(rules), agent.act(Turn.from_state(state, rules, view_rng)))

    start()
    play_opponents()
    for action in learner_actions:
        rows.append((policy_input(state, game.rules_array(rules), learner), game.legal_mask(state, rules), None))
        E.step(state, game.rules_array(rules), int(action))
        play_opponents()
        if state[E.WINNER] >= 0:
            rows[-1] = rows[-1][:2] + (1.0 if game.same_side(rules, learner, state[E.WINNER]) else -1.0,)
            episode += 1
            start()
            play_opponents()
        else:
            rows[-1] = rows[-1][:2] + (0.0,)
    return rows


@pytest.mark.parametrize(
    "preset,players,kinds",
    [
        ("hasbro2003_fast", 2, ["heuristic"]),
        ("hasbro2003", 3, ["greedy", "heuristic"]),
        ("parker1958_teams", 4, ["heuristic", "greedy", "heuristic"]),
    ],
)
def test_compiled_opponents_equal_python_agents(preset, players, kinds):
    B, seed = 2, 11
    env = VectorOpponentEnv(B, players, opponents=kinds, rules=preset, policy_input=True)
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(0)
    log = []
    for _ in range(250):
        actions = random_actions(obs["action_mask"], rng)
        new_obs, rewards, *_ = env.step(actions)
        log.append((obs, actions, rewards))
        obs = new_obs
    assert env.episodes.min() >= 1  # some games ended and were reset
    for i in range(B):
        rows = reference_opponent_games(preset, players, kinds, seed + i, [a[i] for _, a, _ in log])
        for (obs, _, rewards), (inputs, mask, reward) in zip(log, rows):
            np.testing.assert_array_equal(obs["observation"][i], inputs)
            np.testing.assert_array_equal(obs["action_mask"][i], mask)
            assert rewards[i] == reward


def test_random_opponents_and_learner_seats():
    env = VectorOpponentEnv(32, 4, opponents="random", rules="hasbro2003_fast")
    obs, info = env.reset(seed=0)
    assert obs["observation"].shape == (32, OBS_SIZE)
    assert sorted(set(info["learner_seat"].tolist())) == [0, 1, 2, 3]  # seats[(seed + i) % 4]
    rng = np.random.default_rng(0)
    wins = games = 0
    for _ in range(500):
        assert (env.states[np.arange(32), E.TO_MOVE] == env.learners).all()
        obs, rewards, term, _, info = env.step(random_actions(obs["action_mask"], rng))
        assert (info["opponent_moves"] >= 0).all()
        wins += int((rewards > 0).sum())
        games += int(term.sum())
    assert games > 20 and 0.1 < wins / games < 0.45  # a random learner among 4 random players: ~1/4


def test_policy_input_width():
    env = VectorOpponentEnv(2, 2, policy_input=True)
    obs, _ = env.reset(seed=0)
    assert obs["observation"].shape == (2, INPUT_SIZE)


# ---- bad input ------------------------------------------------------------------------------
def test_bad_actions_are_refused_before_any_game_moves():
    env = V.SorryVectorEnv(3, 2)
    obs, _ = env.reset(seed=0)
    legal = np.array([np.flatnonzero(m)[0] for m in obs["action_mask"]])
    before = env.states.copy()
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        env.step(legal[:2])
    with pytest.raises(ValueError, match="integers"):
        env.step(legal.astype(np.float32))
    bad = legal.copy()
    bad[1] = env.n_actions
    with pytest.raises(ValueError, match="game 1: action 142 is illegal"):
        env.step(bad)
    illegal = legal.copy()
    illegal[2] = next(a for a in range(env.n_actions) if not obs["action_mask"][2, a])
    with pytest.raises(ValueError, match=r"game 2: action \d+ is illegal .*legal: \["):
        env.step(illegal)
    np.testing.assert_array_equal(env.states, before)  # nothing half-written
    env.step(legal)


def test_bad_construction_and_seeds():
    with pytest.raises(ValueError, match="num_envs"):
        V.SorryVectorEnv(0)
    with pytest.raises(ValueError, match="num_envs"):
        V.SorryVectorEnv(2.5)
    with pytest.raises(ValueError, match="num_players"):
        V.SorryVectorEnv(2, 5)
    with pytest.raises(ValueError, match="team rules"):
        V.SorryVectorEnv(2, 2, rules="hasbro2003_teams")
    with pytest.raises(ValueError, match="max_turns"):
        V.SorryVectorEnv(2, max_turns=0)
    env = V.SorryVectorEnv(2)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.zeros(2, dtype=np.int64))
    with pytest.raises(ValueError, match="one per game"):
        env.reset(seed=[1, 2, 3])
    with pytest.raises(ValueError, match="below 2\\*\\*32"):
        env.reset(seed=2**32 - 1)
    with pytest.raises(ValueError, match="non-negative"):
        env.reset(seed=-1)
    with pytest.raises(ValueError, match="unknown compiled opponents"):
        VectorOpponentEnv(2, 2, opponents="mcts")
    with pytest.raises(ValueError, match=r"for 3 players: give 1 \(for every seat\) or 2, got 3"):
        VectorOpponentEnv(2, 3, opponents=["random", "greedy", "heuristic"])
    assert list(opponent_codes(["greedy"], 3)) == list(opponent_codes("greedy", 3)) == [1, 1]  # one for every seat


@pytest.mark.ci_slow  # over 10 s: CI runs it after the README's test command
def test_sb3_adapter_with_maskable_ppo():
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks

    from sorry_env.training.vector_sb3 import SB3VecEnv

    env = SB3VecEnv(
        VectorOpponentEnv(8, 2, opponents="random", rules="hasbro2003_fast", max_turns=40, policy_input=True)
    )
    env.seed(0)
    obs = env.reset()
    masks = get_action_masks(env)
    assert obs.shape == (8, INPUT_SIZE) and masks.shape == (8, 142) and masks.dtype == bool
    model = MaskablePPO(
        "MlpPolicy", env, n_steps=32, batch_size=64, n_epochs=1, seed=0, policy_kwargs={"net_arch": [16]}
    )
    model.learn(8 * 64)
    assert model.num_timesteps == 8 * 64
    env.step_async(np.array([np.flatnonzero(m)[0] for m in get_action_masks(env)]))
    _, rewards, dones, infos = env.step_wait()
    assert rewards.shape == (8,) and all("terminal_observation" in infos[i] for i in np.flatnonzero(dones))


def test_bench_vector_runs():
    """benchmarks/bench_vector.py's timing loop on a tiny batch of each mode."""
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).parent.parent / "benchmarks" / "bench_vector.py"
    spec = importlib.util.spec_from_file_location("bench_vector", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    rate, per_step = bench.timed_steps(V.SorryVectorEnv(4, 2), 0.05)
    assert rate > 0 and per_step == 0
    rate, per_step = bench.timed_steps(VectorOpponentEnv(4, 2, opponents="random"), 0.05)
    assert rate > 0 and 0.5 < per_step < 2
