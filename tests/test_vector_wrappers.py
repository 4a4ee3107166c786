"""SorrySeatVectorEnv: one seat's scalar rewards and NEXT_STEP autoreset, so Gymnasium's vector
wrappers accept it (SorryVectorEnv's per-seat rewards and SAME_STEP autoreset do not)."""

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from gymnasium.wrappers.vector import NormalizeReward, RecordEpisodeStatistics

from sorry_env import raw_env
from sorry_env.vector import SorrySeatVectorEnv, SorryVectorEnv


def random_actions(obs, rng):
    return np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in obs["action_mask"]])


def test_record_episode_statistics_counts_every_finished_game():
    B = 4
    env = RecordEpisodeStatistics(SorrySeatVectorEnv(B, num_players=2, max_turns=300, reward_seat=0))
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    episodes, returns, lengths = 0, [], []
    steps = np.zeros(B, dtype=int)
    for _ in range(1500):
        obs, rewards, term, trunc, infos = env.step(random_actions(obs, rng))
        steps += 1
        assert rewards.shape == (B,) and rewards.dtype == np.float32
        if "episode" in infos:
            done = infos["_episode"]
            episodes += int(done.sum())
            returns += infos["episode"]["r"][done].tolist()
            lengths += infos["episode"]["l"][done].tolist()
            assert np.array_equal(done, term | trunc)
            assert np.all(infos["episode"]["l"][done] == steps[done])  # moves of that game, reset step excluded
        steps[term | trunc] = -1  # the next step is the reset step, which is not part of any episode
    assert episodes >= 4
    assert set(returns) <= {-1.0, 0.0, 1.0} and 1.0 in returns and -1.0 in returns


def test_normalize_reward_accepts_it():
    env = NormalizeReward(SorrySeatVectorEnv(3, num_players=3, max_turns=200))
    obs, _ = env.reset(seed=1)
    rng = np.random.default_rng(1)
    seen = []
    for _ in range(800):
        obs, rewards, term, trunc, _ = env.step(random_actions(obs, rng))
        seen.append(rewards[term])
    seen = np.concatenate(seen)
    assert len(seen) > 0 and np.all(np.isfinite(seen)) and np.any(seen != 0)


def test_the_per_seat_env_is_what_the_wrappers_refuse():
    env = SorryVectorEnv(4)
    assert env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert SorrySeatVectorEnv(4).metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    wrapped = RecordEpisodeStatistics(env)
    obs, _ = wrapped.reset(seed=0)
    with pytest.raises(ValueError, match="broadcast"):  # issue 27's failure: rewards (B, 4)
        for _ in range(300):
            obs, *_ = wrapped.step(random_actions(obs, np.random.default_rng(0)))


def test_next_step_autoreset_and_rewards_follow_the_single_env():
    """Game i plays as raw_env seeded i (episode 0) for the same actions: same observations,
    the chosen seat's reward at the end, then one reset step that ignores its action."""
    B, seat = 3, 2
    vec = SorrySeatVectorEnv(B, num_players=2, reward_seat=seat, max_turns=400)
    obs, infos = vec.reset(seed=10)
    singles = [raw_env(num_players=2, max_turns=400) for _ in range(B)]
    for i, e in enumerate(singles):
        e.reset(seed=10 + i)
    rng = np.random.default_rng(2)
    done = np.zeros(B, dtype=bool)
    reset_seen = np.zeros(B, dtype=bool)
    for _ in range(3000):
        actions = random_actions(obs, rng)
        was_done = done.copy()
        for i, e in enumerate(singles):
            if not done[i]:
                agent = e.agent_selection
                assert agent == f"player_{infos['to_move'][i]}"
                assert np.array_equal(e.observe(agent)["observation"], obs["observation"][i])
                e.step(int(actions[i]))
        obs, rewards, term, trunc, infos = vec.step(actions)
        for i, e in enumerate(singles):
            if was_done[i]:  # the reset step
                assert rewards[i] == 0 and not term[i] and not trunc[i]
                assert obs["action_mask"][i].any()
                reset_seen[i] = True
                continue
            if done[i]:
                continue
            if term[i] or trunc[i]:
                assert term[i] == any(e.terminations.values()) and trunc[i] == any(e.truncations.values())
                assert rewards[i] == e._cumulative_rewards[f"player_{seat}"]
                assert not obs["action_mask"][i].any()
                done[i] = True
            else:
                assert rewards[i] == 0
        if reset_seen.all():
            break
    assert reset_seen.all()


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match=r"reward_seat must be a seat in play \[0, 2\] or None, got 1"):
        SorrySeatVectorEnv(2, num_players=2, reward_seat=1)
    env = SorrySeatVectorEnv(2)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="shape"):
        env.step(np.zeros(3, dtype=int))
    with pytest.raises(ValueError, match="game 1: action 141 is illegal"):
        env.step(np.array([random_actions(env._observation(), np.random.default_rng(0))[0], 141]))
