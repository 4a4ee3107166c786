"""sorry_env.wrappers.ObservationKeys, and RLlib's env checker on RLlib's own PettingZooEnv."""

import numpy as np
import pytest
from pettingzoo.test import api_test

from sorry_env import env, raw_env
from sorry_env.express import raw_env as express_raw_env
from sorry_env.game_env import wrap_env as env_of
from sorry_env.wrappers import ObservationKeys


def test_keys_renamed_and_mask_cast():
    e = ObservationKeys(env(num_players=2), observation="observations", mask_dtype="float32")
    e.reset(seed=0)
    agent = e.agent_selection
    obs = e.observe(agent)
    inner = e.unwrapped.observe(agent)
    assert set(obs) == {"observations", "action_mask"}
    assert obs["action_mask"].dtype == np.float32
    assert np.array_equal(obs["observations"], inner["observation"])
    assert np.array_equal(obs["action_mask"], inner["action_mask"].astype(np.float32))
    assert e.observation_space(agent).contains(obs)


def test_pettingzoo_api_test_passes_through_the_wrapper():
    # api_test samples actions with the mask it finds under "action_mask", which Gymnasium wants as int8
    api_test(ObservationKeys(env(num_players=3), mask_dtype="int8"), num_cycles=20)


@pytest.mark.parametrize(
    "kwargs,words",
    [
        ({"observation": ""}, "observation key must be a non-empty string"),
        ({"observation": "x", "action_mask": "x"}, "the two keys must differ"),
        ({"mask_dtype": "U3"}, "mask_dtype must be a numeric dtype"),
    ],
)
def test_bad_settings_are_refused(kwargs, words):
    with pytest.raises(ValueError, match=words):
        ObservationKeys(env(num_players=2), **kwargs)


@pytest.mark.slow  # importing RLlib takes about 25 s here
def test_rllib_env_checker():
    """env() passes RLlib's checker on RLlib's own PettingZooEnv; raw_env() does not (the
    checker plays an unmasked random move, which raw_env refuses), hence the documented
    disable_env_checking=True for raw_env (docs/integrations.md)."""
    pytest.importorskip("ray.rllib", reason="ray[rllib] is not installed (the rllib extra)")
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
    from ray.rllib.utils.pre_checks.env import check_multiagent_environments

    check_multiagent_environments(PettingZooEnv(ObservationKeys(env(num_players=2))))
    with pytest.raises(ValueError, match="gymnasium-style API"):
        check_multiagent_environments(PettingZooEnv(ObservationKeys(raw_env(num_players=2))))


def pettingzoo_chain(raw):
    """PettingZoo's three classic-game wrappers, as env() stacked them before ClassicChecks."""
    from pettingzoo.utils import wrappers

    return wrappers.OrderEnforcingWrapper(
        wrappers.AssertOutOfBoundsWrapper(wrappers.TerminateIllegalWrapper(raw, illegal_reward=-1))
    )


def stepped(env, action):
    """(outcome, PettingZoo's warnings) of env.step(action)."""
    from pettingzoo.utils.env_logger import EnvLogger

    EnvLogger.mqueue.clear()
    return outcome(lambda: env.step(action)), [str(message) for message in EnvLogger.mqueue]


def outcome(call):
    """What a call did: its value, or its exception's type and message."""
    try:
        return ("ok", call())
    except Exception as error:  # noqa: BLE001 (the type and message are what is compared)
        return (type(error).__name__, str(error))


@pytest.mark.parametrize("make_raw", [lambda: raw_env(num_players=3), lambda: express_raw_env(num_players=2)])
def test_the_one_wrapper_does_what_pettingzoos_three_did(make_raw):
    """env() checks with sorry_env.game_env.ClassicChecks: the same errors before reset, the
    same out-of-bounds assertion, the same illegal-move ending and the same games as the chain."""
    from pettingzoo.utils.wrappers import OrderEnforcingWrapper

    ours, theirs = env_of(make_raw()), pettingzoo_chain(make_raw())
    assert isinstance(ours, OrderEnforcingWrapper)
    for probe in (lambda e: e.step(0), lambda e: e.observe("player_0"), lambda e: e.agents, lambda e: e.rewards):
        assert outcome(lambda: probe(ours)) == outcome(lambda: probe(theirs)) != ("ok", None)
    rng, illegal_endings = np.random.default_rng(0), 0
    for game in range(6):
        ours.reset(seed=game)
        theirs.reset(seed=game)
        for step in range(400):
            assert ours.agents == theirs.agents and ours.agent_selection == theirs.agent_selection
            if not ours.agents:
                break
            mine, other = ours.last(), theirs.last()
            np.testing.assert_array_equal(mine[0]["observation"], other[0]["observation"])
            assert mine[1:] == other[1:]
            assert ours.rewards == theirs.rewards and ours.infos == theirs.infos
            legal = np.flatnonzero(mine[0]["action_mask"])
            if mine[2] or mine[3]:
                action = None
            elif step == 4 + 3 * game and game % 2:  # an illegal move ends the game
                action = int(np.flatnonzero(mine[0]["action_mask"] == 0)[0])
                illegal_endings += 1
            elif step == 2 and game == 2:
                action = 10**6  # out of the action space: an AssertionError, nothing happens
            else:
                action = int(rng.choice(legal))
            assert stepped(ours, action) == stepped(theirs, action)
    after_the_end = stepped(ours, 0)
    assert after_the_end == stepped(theirs, 0) and "after all agents are terminated" in after_the_end[1][0]
    assert illegal_endings == 3
