"""The MaskablePPO policy of self-play: an :class:`sorry_env.agents.policy.Actor` plus a value MLP.

The actor is the very module a policy file stores, so export copies its weights unchanged
and the policy agent computes the same logits. The critic reads only the observation part
of the policy input; export stores it beside the actor (``training.export``) for agents that
value positions, while the policy agent itself plays from the actor alone.
"""

from __future__ import annotations

from typing import cast

import numpy as np
import torch
from numba import njit
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from torch import nn
from torch.nn import functional as F

from sorry_env.agents.policy import ACTIVATIONS, MLP, Actor
from sorry_env.board.policy_input import sparse_afterstates


@njit(cache=True)
def sparse_rows(x):
    """(columns, values, row offsets) of the nonzero entries of float32[n, d] `x`, row by row
    (compressed sparse rows: row i's entries are offsets[i] .. offsets[i + 1] - 1)."""
    n, d = x.shape
    offsets = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        count = 0
        for j in range(d):
            if x[i, j] != 0:
                count += 1
        offsets[i + 1] = offsets[i] + count
    columns = np.empty(offsets[n], dtype=np.int64)
    values = np.empty(offsets[n], dtype=np.float32)
    k = 0
    for i in range(n):
        for j in range(d):
            if x[i, j] != 0:
                columns[k] = j
                values[k] = x[i, j]
                k += 1
    return columns, values, offsets


@njit(cache=True)
def sparse_weight_gradient(columns, values, offsets, grad_out, grad_weight_t):
    """grad_weight_t[c] += x[i, c] * grad_out[i] over the nonzero entries x[i, c] (sparse_rows
    form): the weight gradient of x @ W.T, transposed, without touching the zero entries."""
    for i in range(offsets.shape[0] - 1):
        for k in range(offsets[i], offsets[i + 1]):
            column, value = columns[k], values[k]
            for j in range(grad_out.shape[1]):
                grad_weight_t[column, j] += value * grad_out[i, j]


class _SparseProduct(torch.autograd.Function):
    """x @ weight.T for a sparse x given as sparse_rows; the gradient flows to weight only."""

    @staticmethod
    def forward(ctx, weight, weight_t, columns, values, offsets):
        ctx.rows, ctx.in_features = (columns, values, offsets), weight.shape[1]
        return F.embedding_bag(
            torch.from_numpy(columns),
            weight_t,
            torch.from_numpy(offsets[:-1]),
            mode="sum",
            per_sample_weights=torch.from_numpy(values),
        )

    @staticmethod
    def backward(ctx, grad_out):
        columns, values, offsets = ctx.rows
        grad_weight_t = np.zeros((ctx.in_features, grad_out.shape[1]), dtype=np.float32)
        sparse_weight_gradient(columns, values, offsets, grad_out.contiguous().numpy(), grad_weight_t)
        return torch.from_numpy(grad_weight_t).t(), None, None, None, None


def _transposed(layer: nn.Linear) -> torch.Tensor:
    """layer.weight.T (in, out) as a contiguous copy, one row per input entry; kept until the
    weight changes (an optimizer step or a load bumps its version), so rollout steps reuse it."""
    version = layer.weight._version
    cached = getattr(layer, "_sparse_weight_t", None)
    if cached is None or cached[0] != version or cached[1].shape[::-1] != layer.weight.shape:
        cached = (version, layer.weight.detach().t().contiguous())
        # torch's stubs type Module.__setattr__'s value as Tensor | Module; any object is kept as a plain attribute
        layer._sparse_weight_t = cached  # type: ignore[assignment]
    return cached[1]


def forget_transposed(module: nn.Module) -> None:
    """Drop the :func:`_transposed` copies kept on `module`'s linear layers."""
    for layer in module.modules():
        if hasattr(layer, "_sparse_weight_t"):
            del layer._sparse_weight_t


def sparse_linear(layer: nn.Linear, x) -> torch.Tensor:
    """``layer(x)`` for observations `x` (float32[n, observation size], about 2% nonzero: one-hot
    encodings; or already as :func:`sparse_rows`) as a sum of the weight columns of the
    nonzero entries, with its gradient: the same function as the dense product, with much
    less work forward and backward on one thread (docs/research/2026-11-24-trainer-speed.md)."""
    if isinstance(x, np.ndarray):
        x = sparse_rows(np.ascontiguousarray(x, dtype=np.float32))
    columns, values, offsets = x
    return _SparseProduct.apply(layer.weight, _transposed(layer), columns, values, offsets) + layer.bias


def sparse_mlp(mlp: MLP, x) -> torch.Tensor:
    """``mlp(x)`` (agents.policy.MLP) with its first layer as :func:`sparse_linear`."""
    h = sparse_linear(mlp.layers[0], x)
    for layer in mlp.layers[1:]:
        h = layer(mlp.activation(h))
    return h


def segment_log_softmax(scores: torch.Tensor, rows: torch.Tensor, n: int) -> torch.Tensor:
    """log softmax of `scores` within each sample's moves (rows[i]: the sample, 0..n-1, of
    score i): a masked categorical's log probabilities, computed on the legal moves only."""
    peak = torch.full((n,), -torch.inf, dtype=scores.dtype)
    peak = peak.scatter_reduce(0, rows, scores.detach(), "amax")  # the shift does not change the result
    shifted = scores - peak[rows]
    total = torch.zeros(n, dtype=scores.dtype).index_add(0, rows, shifted.exp())
    return shifted - total.log()[rows]


def actor_logits(actor: Actor, inputs: torch.Tensor) -> torch.Tensor:
    """``actor(inputs)`` (the same logits) with the first layer's product sparse."""
    if actor.kind == "mlp":
        return sparse_mlp(actor.net, inputs[:, : actor.obs_size].detach().numpy())
    states = inputs[:, actor.obs_size :].detach().round().to(torch.int64).numpy()
    obs, rows, actions = sparse_afterstates(states, actor.afterstate_rules)
    scores = sparse_mlp(actor.net, obs)[:, 0]
    logits = torch.zeros(len(inputs), actor.n_actions, dtype=scores.dtype)
    return logits.index_put((torch.from_numpy(rows), torch.from_numpy(actions)), scores)


class ActorCritic(nn.Module):
    """sb3's mlp_extractor slot: latent_pi is the logits, latent_vf the critic's features."""

    def __init__(self, actor: Actor, value_hidden: list[int], activation: str):
        super().__init__()
        self.actor = actor
        layers, size = [], actor.obs_size
        for width in value_hidden:
            layers += [nn.Linear(size, width), ACTIVATIONS[activation]()]
            size = width
        self.critic = nn.Sequential(*layers)
        self.latent_dim_pi = actor.n_actions
        self.latent_dim_vf = size

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        return actor_logits(self.actor, features)

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        if len(self.critic) == 0:  # value_hidden: []
            return features[:, : self.actor.obs_size]
        first = cast(nn.Linear, self.critic[0])  # nn.Sequential's stubs type its items as Module
        h = sparse_linear(first, features[:, : self.actor.obs_size].detach().numpy())
        return self.critic[1:](h)

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

    def evaluate_actions(self, obs, actions, action_masks=None):
        """sb3's (values, log_prob, entropy) for PPO's update. An afterstate actor's masked
        categorical is computed over the legal moves' scores only: the same values as sb3's
        (log softmax of the masked logits; masked moves add nothing to the entropy) without
        its dense [batch, actions] tensors, which were a fifth of the update's time
        (docs/research/2026-11-24-trainer-speed.md). An mlp actor takes sb3's path."""
        actor = self.mlp_extractor.actor
        if actor.kind != "afterstate":
            return super().evaluate_actions(obs, actions, action_masks)
        features = self.extract_features(obs)
        n = len(features)
        states = features[:, actor.obs_size :].detach().round().to(torch.int64).numpy()
        after_obs, rows, moves = sparse_afterstates(states, actor.afterstate_rules)
        taken = moves == actions.detach().to(torch.int64).numpy()[rows]
        if not np.array_equal(np.bincount(rows[taken], minlength=n), np.ones(n, dtype=np.int64)) or (
            action_masks is not None
            and not np.array_equal(np.bincount(rows, minlength=n), np.asarray(action_masks).reshape(n, -1).sum(1))
        ):
            raise ValueError("evaluate_actions: the actions or masks do not match the states' legal moves")
        rows_t = torch.from_numpy(rows)
        log_p = segment_log_softmax(sparse_mlp(actor.net, after_obs)[:, 0], rows_t, n)
        log_prob = torch.zeros(n, dtype=log_p.dtype).index_add(0, rows_t[taken], log_p[taken])
        entropy = -torch.zeros(n, dtype=log_p.dtype).index_add(0, rows_t, log_p.exp() * log_p)
        return self.value_net(self.mlp_extractor.forward_critic(features)), log_prob, entropy

    def _build(self, lr_schedule):
        if self.optimizer_class is torch.optim.Adam:
            # One fused kernel per step instead of a dozen ops per parameter: the same update.
            self.optimizer_kwargs = {**self.optimizer_kwargs, "fused": True}
        super()._build(lr_schedule)
        # The actor already yields one logit per action: no extra layer (and none to export).
        self.action_net = nn.Identity()
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)
        # A fused step changes the weights in place without bumping their version counter,
        # which _transposed's cache reads: drop the cached copies after every step.
        self.optimizer.register_step_post_hook(lambda *_: forget_transposed(self))
