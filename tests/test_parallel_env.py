"""sorry_env.parallel_env: the board game through PettingZoo's Parallel API, turn-based (issue 39)."""

import numpy as np
import pytest
from pettingzoo.test import parallel_api_test, parallel_seed_test

import sorry_env
from sorry_env.parallel import SorryParallelEnv


@pytest.mark.parametrize(
    "kwargs",
    [{"num_players": 2}, {"num_players": 4, "rules": "hasbro2003_teams"}, {"num_players": 3, "rules": "hasbro2013"}],
)
def test_pettingzoo_parallel_api_and_seed_tests_pass(kwargs):
    parallel_api_test(sorry_env.parallel_env(**kwargs), num_cycles=400)
    parallel_seed_test(lambda: sorry_env.parallel_env(**kwargs), num_cycles=200)


def test_registered_with_pettingzoo_and_exported():
    import pettingzoo

    env = pettingzoo.make("parallel", sorry_env.ENV_ID, num_players=2)
    assert isinstance(env, SorryParallelEnv) and "parallel_env" in sorry_env.__all__


def test_only_the_player_to_move_acts_and_the_game_is_the_aec_envs():
    """Same seed, same moves as the AEC env; the others' actions (garbage) change nothing; their
    masks are all zero and every info names the player to move."""
    par = sorry_env.parallel_env(num_players=3)
    aec = sorry_env.raw_env(num_players=3)
    obs, infos = par.reset(seed=7)
    aec.reset(seed=7)
    rng = np.random.default_rng(0)
    total = dict.fromkeys(par.possible_agents, 0.0)
    steps = 0
    while par.agents:
        mover = aec.agent_selection
        assert all(info["active_agent"] == mover for info in infos.values())
        for agent in par.agents:
            expected = aec.observe(agent)
            np.testing.assert_array_equal(obs[agent]["observation"], expected["observation"])
            np.testing.assert_array_equal(obs[agent]["action_mask"], expected["action_mask"])
            assert obs[agent]["action_mask"].any() == (agent == mover)
        action = int(rng.choice(np.flatnonzero(obs[mover]["action_mask"])))
        others = {agent: 10_000 for agent in par.agents if agent != mover}  # out of range: ignored
        obs, rewards, terminations, truncations, infos = par.step({**others, mover: action})
        aec.step(action)
        for agent, reward in rewards.items():
            total[agent] += reward
            assert reward == aec.rewards[agent]
        steps += 1
    assert aec.terminations[aec.agent_selection] or aec.truncations[aec.agent_selection]
    assert sorted(total.values()) in ([-1.0, -1.0, 1.0], [0.0, 0.0, 0.0]) and steps > 20
    assert all(terminations.values()) or all(truncations.values())


def test_an_illegal_move_ends_the_game_as_env_does_and_bad_calls_are_refused():
    par = sorry_env.parallel_env(num_players=2)
    with pytest.raises(Exception, match="reset"):
        par.step({})
    obs, _ = par.reset(seed=0)
    mover = next(agent for agent in par.agents if obs[agent]["action_mask"].any())
    with pytest.raises(ValueError, match=f"no action for {mover}, the player to move"):
        par.step({agent: 0 for agent in par.agents if agent != mover})
    with pytest.raises(TypeError, match="a dict from agent names"):
        par.step([0, 0])
    illegal = int(np.flatnonzero(obs[mover]["action_mask"] == 0)[0])
    _, rewards, terminations, _, _ = par.step({mover: illegal})
    assert rewards[mover] == -1.0 and all(terminations.values()) and par.agents == []
    with pytest.raises(RuntimeError, match="the game is over"):
        par.step({mover: 0})


def test_state_render_and_truncation():
    par = sorry_env.parallel_env(num_players=2, max_turns=3, render_mode="ansi")
    obs, _ = par.reset(seed=1)
    assert par.state().shape == par.state_space.shape and "Red" in par.render()
    while par.agents:
        mover = next(agent for agent in par.agents if obs[agent]["action_mask"].any())
        obs, rewards, terminations, truncations, _ = par.step(
            {mover: int(np.flatnonzero(obs[mover]["action_mask"])[0])}
        )
    assert all(truncations.values()) and not any(terminations.values()) and set(rewards.values()) == {0.0}
