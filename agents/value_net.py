"""A learned position value inside compiled search: an afterstate network run by numba.

An ``afterstate`` policy file (:mod:`sorry_env.agents.policy`) holds an MLP that scores the observation
of a position after a move (the next card not drawn). A value network is such an MLP trained
to give the logit of the viewer's chance of winning (:mod:`sorry_env.training.value_fit`); search
agents use it instead of the hand-written evaluation to score the positions where their
lookahead stops (``montecarlo:value=PATH``).

The weights are packed into one float32 array (each layer's weight matrix, stored input-major
so that a row is one input's fan-out, then its bias) with the layer sizes beside it, so the
compiled code needs no Python objects. The observation is mostly one-hot, so the first layer
adds up the rows of the inputs that are not zero instead of multiplying a dense matrix.

:func:`net_logit` scores one input (the Monte Carlo and expectimax agents' leaves);
:func:`net_logits` scores a batch of them (the positions a batched search collected from many
games' trees), each row exactly as :func:`net_logit` would, on any CPU.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import numpy as np
from numba import njit

from sorry_env.board.observation import observe

from .catalog import NetworkFiles

if TYPE_CHECKING:
    from .policy import MLP

# No network: search agents take an empty packed array to mean "use the hand-written evaluation".
NO_NET: tuple[np.ndarray, np.ndarray] = (np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.int64))


def pack(path: str | os.PathLike) -> tuple[np.ndarray, np.ndarray, dict]:
    """(params, sizes, metadata) of the afterstate network in policy file `path`."""
    from .specs import needs_torch

    actor, meta = needs_torch("policy").load_policy(path)  # torch is imported only when a network is asked for
    if meta["network"]["kind"] != "afterstate":
        raise ValueError(
            f"{path} holds a {meta['network']['kind']!r} network; a value network must be an "
            "'afterstate' one (it scores positions, not actions)"
        )
    if meta["network"]["activation"] != "relu":
        raise ValueError(f"{path}: compiled value networks use relu, this one uses {meta['network']['activation']!r}")
    return (*pack_mlp(actor.net), meta)


def pack_mlp(mlp: MLP) -> tuple[np.ndarray, np.ndarray]:
    """(params, sizes) of a relu MLP with one output (agents.policy.MLP); its input is the
    observation, or for an experiment a longer vector that starts with it."""
    parts, sizes = [], [mlp.layers[0].in_features]
    for layer in mlp.layers:
        weight = layer.weight.detach().numpy()  # (out, in)
        parts += [weight.T.ravel(), layer.bias.detach().numpy()]
        sizes.append(weight.shape[0])
    return np.concatenate(parts).astype(np.float32), np.array(sizes, dtype=np.int64)


@njit(cache=True)
def _add_row(acc, scale, params, first):
    """acc += scale * params[first:first + len(acc)] (in place: no temporary arrays; through a
    slice of the weights, which LLVM vectorizes: indexing params directly ran 3x slower)."""
    row = params[first : first + acc.shape[0]]
    for k in range(acc.shape[0]):
        acc[k] += scale * row[k]


@njit(cache=True)
def net_logit(params, sizes, x):
    """The MLP's output for input x (relu between layers): :func:`net_logits` of one row, so
    a position scores the same alone as in any batch."""
    out = np.empty(1, dtype=np.float32)
    net_logits(params, sizes, x.reshape((1, x.shape[0])), 1, out)
    return out[0]


@njit(cache=True)
def net_logits(params, sizes, x, n, out):
    """out[:n] := the MLP's output for each input row x[:n] (float32), each row's the same
    whatever the batch: every output starts from its bias and adds the same products in the
    same order (inputs in index order, zeros skipped). No BLAS: sgemm's
    blocking and fused multiply-add differ between OpenBLAS's CPU kernels (Haswell, Zen,
    SkylakeX), so its rows changed with the batch and the CPU. The loop runs input-major so
    that a weight row is read once per batch, not once per position (issue 36)."""
    n_in = sizes[0]
    n_out = sizes[1]
    h = np.empty((n, n_out), dtype=np.float32)
    for b in range(n):
        h[b, :] = params[n_in * n_out : n_in * n_out + n_out]
    for j in range(n_in):
        for b in range(n):
            if x[b, j] != 0.0:
                _add_row(h[b], x[b, j], params, j * n_out)
    off = n_in * n_out + n_out
    for layer in range(2, sizes.shape[0]):
        n_in = n_out
        n_out = sizes[layer]
        nxt = np.empty((n, n_out), dtype=np.float32)
        for b in range(n):
            nxt[b, :] = params[off + n_in * n_out : off + n_in * n_out + n_out]  # the bias
        for j in range(n_in):
            for b in range(n):
                if h[b, j] > 0.0:  # relu of the previous layer
                    _add_row(nxt[b], h[b, j], params, off + j * n_out)
        off += n_in * n_out + n_out
        h = nxt
    for b in range(n):
        out[b] = h[b, 0]


@njit(cache=True)
def net_win_chance(state, rules, params, sizes, viewer, obs):
    """The network's chance that `viewer`'s side wins from `state` (a position with no card in
    play); obs is scratch space of OBS_SIZE float32."""
    observe(state, rules, viewer, obs)
    return 1.0 / (1.0 + np.exp(-net_logit(params, sizes, obs)))


class ValueLeaves(NetworkFiles):
    """For a search agent whose leaves an optional value network scores (``value=FILE``, the
    Monte Carlo and expectimax agents): the network packed for compiled code, or
    :data:`NO_NET` for the hand-written evaluation, and the check that it fits the game."""

    def load_value(self, value: str | None) -> None:
        self.value = value
        self.params, self.sizes, self.value_meta = (*NO_NET, {}) if value is None else pack(value)

    def network_files(self) -> list[tuple[str, dict]]:
        return [] if self.value is None else [(self.value, self.value_meta)]
