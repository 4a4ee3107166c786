"""The MaskablePPO policy of self-play: an :class:`agents.policy.Actor` plus a value MLP.

The actor is the very module a policy file stores, so export copies its weights unchanged
and the policy agent computes the same logits. The critic reads only the observation part
of the policy input; it is a training aid and is never exported.
"""

from __future__ import annotations

import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from torch import nn

from agents.policy import ACTIVATIONS, Actor
from sorry_env.observation import OBS_SIZE


class ActorCritic(nn.Module):
    """sb3's mlp_extractor slot: latent_pi is the logits, latent_vf the critic's features."""

    def __init__(self, actor: Actor, value_hidden: list[int], activation: str):
        super().__init__()
        self.actor = actor
        layers, size = [], OBS_SIZE
        for width in value_hidden:
            layers += [nn.Linear(size, width), ACTIVATIONS[activation]()]
            size = width
        self.critic = nn.Sequential(*layers)
        self.latent_dim_pi = actor.n_actions
        self.latent_dim_vf = size

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        return self.actor(features)

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        return self.critic(features[:, :OBS_SIZE])

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)


class SelfPlayPolicy(MaskableActorCriticPolicy):
    def __init__(self, *args, kind: str, hidden: list[int], value_hidden: list[int], activation: str, rules, **kwargs):
        self.network = {"kind": kind, "hidden": list(hidden), "activation": activation}
        self.value_hidden = list(value_hidden)
        self.rules = rules
        kwargs["ortho_init"] = False  # torch's default init; sb3's gains assume its own layout
        super().__init__(*args, **kwargs)

    def _build_mlp_extractor(self):
        actor = Actor(self.network["kind"], self.network["hidden"], self.network["activation"], self.rules)
        self.mlp_extractor = ActorCritic(actor, self.value_hidden, self.network["activation"])

    def _build(self, lr_schedule):
        super()._build(lr_schedule)
        # The actor already yields one logit per action: no extra layer (and none to export).
        self.action_net = nn.Identity()
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)
