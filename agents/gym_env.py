"""Deprecated: the Gymnasium env moved to :mod:`sorry_env.gym_env` (it takes Agent objects or
functions); opponent specs are turned into agents by :mod:`sorry_env.agents.gym_factory`
(``gymnasium.make("sorry_env/Sorry-v1", ...)`` calls its ``make_gym_env``). Importing this
name warns once; its :class:`SorryGymEnv` still takes specs as before."""

import warnings

from sorry_env import gym_env as _moved
from sorry_env.gym_env import ENV_ID, ILLEGAL_REWARD, PolicyInputWrapper, game_tag, observation_space  # noqa: F401

from .gym_factory import OpponentMaker

warnings.warn(
    "sorry_env.agents.gym_env moved to sorry_env.gym_env (opponents as agents or functions); "
    "use gymnasium.make('sorry_env/Sorry-v1', ...) or sorry_env.agents.gym_factory.make_gym_env for specs",
    DeprecationWarning,
    stacklevel=2,
)


class SorryGymEnv(_moved.SorryGymEnv):
    """:class:`sorry_env.gym_env.SorryGymEnv` taking opponent specs, with the old signature
    (``opponents=("heuristic",)`` by default, and ``torch_threads``)."""

    def __init__(
        self,
        num_players=2,
        opponents=("heuristic",),
        rules=_moved.DEFAULT_PRESET,
        seat=None,
        max_turns=_moved.DEFAULT_MAX_TURNS,
        reward="win",
        illegal_action="lose",
        opponent_sampler=None,
        torch_threads=1,
        render_mode=None,
    ):
        super().__init__(
            num_players,
            opponents,
            rules,
            seat,
            max_turns,
            reward,
            illegal_action,
            opponent_sampler,
            render_mode,
            make_opponent=OpponentMaker(torch_threads, rules, num_players),
        )
