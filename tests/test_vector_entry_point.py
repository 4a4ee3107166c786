"""gymnasium.make_vec("sorry_env/Sorry-v1", ...) with the vector entry point: the compiled batched
env against compiled opponents (sorry_env.vector_opponents.gym_vector_env), issue 39."""

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space
from gymnasium.wrappers.vector import NormalizeReward, RecordEpisodeStatistics

import sorry_env
from sorry_env.board import engine as E
from sorry_env.vector_opponents import VectorOpponentEnv

ID = "sorry_env/Sorry-v1"


def make(num_envs=4, mode="vector_entry_point", **kwargs):
    return gymnasium.make_vec(ID, num_envs=num_envs, vectorization_mode=mode, **kwargs)


def test_make_vec_returns_the_compiled_env_which_declares_its_autoreset_and_keeps_its_spaces():
    env = make(4, num_players=2, opponents=["heuristic"])
    assert isinstance(env, VectorOpponentEnv) and isinstance(make(2), VectorOpponentEnv)  # also without a mode
    assert env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert env.num_envs == 4 and env.observation_space == batch_space(env.single_observation_space, 4)
    assert env.action_space == batch_space(env.single_action_space, 4)
    single = gymnasium.make(ID, num_players=2, opponents=["heuristic"])
    assert env.single_observation_space == single.observation_space
    assert env.single_action_space == single.action_space
    obs, infos = env.reset(seed=3)
    again, _ = make(4, num_players=2, opponents=["heuristic"]).reset(seed=3)
    np.testing.assert_array_equal(obs["observation"], again["observation"])
    rng = np.random.default_rng(0)
    for _ in range(200):
        assert env.observation_space.contains(obs)
        actions = np.array([rng.choice(np.flatnonzero(mask)) for mask in obs["action_mask"]])
        obs, rewards, terminated, truncated, infos = env.step(actions)
        assert rewards.dtype == np.float32 and rewards.shape == (4,) and terminated.dtype == bool
        assert set(np.unique(rewards)) <= {-1.0, 0.0, 1.0} and not (rewards[~terminated] != 0).any()


def test_gymnasiums_vector_wrappers_take_it():
    env = NormalizeReward(RecordEpisodeStatistics(make(8, opponents="random", max_turns=60)))
    obs, _ = env.reset(seed=0)
    finished = 0
    for _ in range(120):
        actions = np.array([np.flatnonzero(mask)[0] for mask in obs["action_mask"]])
        obs, _, terminated, truncated, infos = env.step(actions)
        if "episode" in infos:
            finished += int(infos["_episode"].sum())
    assert finished >= 8  # every game truncated at 60 cards at least once


def decision_streams(env, same_step: bool, steps: int) -> list[list[tuple]]:
    """Per game, what the learner sees, in order: ("obs", observation, mask) at each decision
    and ("end", last observation, reward, terminated, truncated) when an episode ends, whatever
    the autoreset mode. The learner plays its n-th decision's (n mod #legal)-th legal action."""
    obs, _ = env.reset(seed=11)
    n = env.num_envs
    streams: list[list[tuple]] = [
        [("obs", obs["observation"][i].copy(), obs["action_mask"][i].copy())] for i in range(n)
    ]
    resetting = np.zeros(n, dtype=bool)  # NEXT_STEP: this game's next step is its reset
    for _ in range(steps):
        actions = []
        for i in range(n):
            legal = np.flatnonzero(obs["action_mask"][i])
            actions.append(int(legal[len(streams[i]) % len(legal)]) if len(legal) else 0)
        obs, rewards, terminated, truncated, infos = env.step(np.array(actions))
        for i in range(n):
            seen = ("obs", obs["observation"][i].copy(), obs["action_mask"][i].copy())
            ended = bool(terminated[i] or truncated[i])
            if same_step:
                if ended:
                    end = infos["final_obs"][i]
                    streams[i].append(("end", end, float(rewards[i]), bool(terminated[i]), bool(truncated[i])))
                streams[i].append(seen)
            elif resetting[i]:
                assert rewards[i] == 0.0 and not ended
                resetting[i] = False
                streams[i].append(seen)
            elif ended:
                assert not obs["action_mask"][i].any()  # the last position: nothing is legal
                streams[i].append(("end", seen[1], float(rewards[i]), bool(terminated[i]), bool(truncated[i])))
                resetting[i] = True
            else:
                streams[i].append(seen)
    return streams


@pytest.mark.parametrize(
    "kwargs",
    [
        {"num_players": 2, "opponents": ["heuristic"], "seat": 2, "max_turns": 90},
        {"num_players": 3, "opponents": ["greedy", "heuristic"], "seat": 1, "max_turns": 2000},
    ],
)
def test_same_observations_and_rewards_as_the_sync_mode_for_the_same_seeds(kwargs):
    """Where the modes agree (a fixed seat, deterministic opponents, rules without hands), the
    compiled env and make_vec's sync mode of the single env play the same games, episode after
    episode: the same learner observations, masks, rewards and endings."""
    compiled = decision_streams(make(3, **kwargs), same_step=True, steps=150)
    single = decision_streams(make(3, "sync", **kwargs), same_step=False, steps=150)
    ends = 0
    for a, b in zip(compiled, single):
        k = min(len(a), len(b))
        assert k > 100
        for x, y in zip(a[:k], b[:k]):
            assert x[0] == y[0]
            np.testing.assert_array_equal(x[1], y[1])
            if x[0] == "obs":
                np.testing.assert_array_equal(x[2], y[2])
            else:
                assert x[2:] == y[2:]
                ends += 1
    assert ends >= 3  # the comparison crossed episode boundaries


def test_the_single_envs_episodes_deal_as_raw_env_seeded_per_episode():
    """Episode k after reset(seed=s) shuffles the pack as raw_env.reset(seed=s + k * 2**32)."""
    env = gymnasium.make(ID, opponents=["random"], seat=0).unwrapped
    for k in range(3):
        env.reset(seed=9 if k == 0 else None)
        raw = sorry_env.raw_env(num_players=2)
        raw.reset(seed=9 + k * 2**32)
        np.testing.assert_array_equal(env.state[E.DECK : E.HANDS], raw.state_array[E.DECK : E.HANDS])


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"opponents": ["trained"]}, r"only the opponents \['random', 'greedy', 'heuristic'\].*not \['trained'\]"),
        ({"opponents": ["montecarlo:iterations=10"]}, r"not \['montecarlo:iterations=10'\].*'sync' or 'async'"),
        ({"opponents": [lambda obs: 0]}, r"plays opponents named .*'sync' or 'async'"),
        ({"reward": "points", "rules": "hasbro2003_points"}, r"reward other than 'win' \(reward='points'\)"),
        ({"illegal_action": "lose"}, r"illegal_action='lose'"),
        ({"render_mode": "rgb_array"}, r"no rendering"),
        ({"opponent_sampler": lambda rng, n: ["random"] * n}, r"no opponent pools"),
        ({"seat": 1}, r"learner_seat must be a seat in play \[0, 2\] or None, got 1"),
    ],
)
def test_what_the_compiled_env_cannot_play_is_refused_naming_the_way(kwargs, message):
    with pytest.raises(ValueError, match=message):
        make(2, **kwargs)
