"""sorry_env.wrappers.ObservationKeys, and RLlib's env checker on RLlib's own PettingZooEnv."""

import numpy as np
import pytest
from pettingzoo.test import api_test

from sorry_env import env, raw_env
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
