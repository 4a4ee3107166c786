"""The learner's Gymnasium env of a training run (one game per env; config ``rollout:
per_game``, and the imitation warm start), apart from the trainer so both can use it."""

from __future__ import annotations

from sorry_env.agents.gym_factory import make_gym_env
from sorry_env.gym_env import PolicyInputWrapper


def make_env(cfg: dict, opponent_sampler) -> PolicyInputWrapper:
    """The learner's env: the Gymnasium env (random seat each game, opponents drawn from
    `opponent_sampler` at every reset) with the policy input as observation."""
    game = cfg["game"]
    # torch_threads=None: the run sets torch's threads itself (config torch_threads).
    return PolicyInputWrapper(
        make_gym_env(
            game["num_players"],
            rules=game["rules"],
            max_turns=game["max_turns"],
            opponent_sampler=opponent_sampler,
            illegal_action="raise",
            torch_threads=None,
        )
    )
