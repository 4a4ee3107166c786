"""A trained Sorry! Express policy as an agent, read from a self-describing policy file.

The network is a masked MLP: the Express env's observation of the acting seat
(``OBS_SIZE`` = 55 floats, :func:`sorry_env.express.engine.observe`) in, one logit per
action (``N_ACTIONS`` = 57) out; illegal actions are masked out before the argmax (or the
sample, with ``sample=True``). ``training/express_train.py`` trains one.

Express policy file format (one ``.safetensors`` file, loaded without executing code)
------------------------------------------------------------------------------------
Tensors ``net.layers.{k}.weight`` / ``net.layers.{k}.bias``: the MLP. The header's
``__metadata__`` holds one key, ``sorry_express_policy`` (not the board game's
``sorry_policy``: neither loader can mistake the other game's file for its own, and each
says which game a refused file is for), a JSON object::

    {
      "format": "sorry_express_policy", "format_version": 1, "game": "express",
      "name": "express-2p", "num_players": 2,
      "layout": {"version": "sorry_express_v0", "obs_size": 55, "n_actions": 57},
      "network": {"kind": "mlp", "hidden": [128, 128], "activation": "relu"},
      "training": {...}, "evaluation": {...}
    }

A file is refused for another player count (:meth:`ExpressPolicyAgent.check_game`) and for
another layout. The header is checked (metadata, tensor names, dtypes, shapes, the size
cap) before any tensor is read, and non-finite weights are refused with the tensor's name,
as for board-game policy files (docs/hardening.md).
"""

from __future__ import annotations

import json
import math
import os

import numpy as np
import torch
from torch import nn

from sorry_env import games
from sorry_env.express import engine as E
from sorry_env.express.env import raw_env

from . import tensor_file
from .base import Agent
from .policy import MAX_PARAMETERS, MLP, check_network, masked_logits
from .tensor_file import excerpt

GAME = "express"
FORMAT = games.game_type(GAME).policy_format
FORMAT_VERSION = 1
LAYOUT = {"version": raw_env.metadata["name"], "obs_size": E.OBS_SIZE, "n_actions": E.N_ACTIONS}


class ExpressActor(nn.Module):
    """Express observations (batch, OBS_SIZE) -> action logits (batch, N_ACTIONS); mask the
    illegal ones (:func:`sorry_env.agents.policy.masked_logits`)."""

    def __init__(self, hidden: list[int], activation: str = "relu"):
        super().__init__()
        self.net = MLP([E.OBS_SIZE, *hidden, E.N_ACTIONS], activation)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.net(obs)


def actor_tensors(hidden: list[int]) -> dict[str, tuple[str, tuple]]:
    """name -> (dtype, shape) of the tensors an ExpressActor of these widths holds."""
    sizes = [E.OBS_SIZE, *hidden, E.N_ACTIONS]
    tensors = {}
    for k, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        tensors[f"net.layers.{k}.weight"] = ("F32", (b, a))
        tensors[f"net.layers.{k}.bias"] = ("F32", (b,))
    return tensors


def save_express_policy(
    path: str | os.PathLike,
    actor: ExpressActor,
    *,
    num_players: int,
    hidden: list[int],
    activation: str,
    name: str,
    training: dict | None = None,
    evaluation: dict | None = None,
) -> None:
    """Write `actor` with the metadata that makes the file self-describing, atomically (written
    next to `path`, then renamed) and readable by everyone."""
    meta = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "game": GAME,
        "name": name,
        "num_players": int(num_players),
        "layout": LAYOUT,
        "network": {"kind": "mlp", "hidden": list(hidden), "activation": activation},
        "training": training or {},
        "evaluation": evaluation or {},
    }
    tensors = {k: v.detach().to(torch.float32).contiguous() for k, v in actor.state_dict().items()}
    tensor_file.save_atomic(path, tensors, FORMAT, meta)


def read_express_metadata(path) -> tuple[dict, dict]:
    """(metadata, tensor header) of an Express policy file, checked against this code, or a
    ValueError naming the problem (a board-game policy file is refused as such)."""
    try:
        header, found = tensor_file.read_header(path, what="safetensors policy file")
    except ValueError as exc:
        if not os.path.exists(path):
            raise ValueError(f"policy file {path} does not exist") from None
        raise ValueError(str(exc)) from None
    games.check_policy_game(header, path, GAME)
    try:
        meta = json.loads(header[FORMAT])
    except (ValueError, RecursionError):
        raise ValueError(f"{path}: its sorry_express_policy metadata is not JSON") from None
    if not isinstance(meta, dict):
        raise ValueError(f"{path}: its sorry_express_policy metadata must be a JSON object, got {excerpt(meta)}")
    if meta.get("format_version") != FORMAT_VERSION or meta.get("game") != GAME:
        raise ValueError(
            f"{path}: Express policy format version {excerpt(meta.get('format_version'))} for game "
            f"{excerpt(meta.get('game'))}; this code reads version {FORMAT_VERSION} for {GAME!r}"
        )
    if meta.get("layout") != LAYOUT:
        raise ValueError(
            f"{path} was made for the Express layout {excerpt(meta.get('layout'), 200)}, this env uses "
            f"{LAYOUT}; train it again with this version"
        )
    players = meta.get("num_players")
    if isinstance(players, bool) or players not in (2, 3, 4):
        raise ValueError(f"{path}: num_players must be 2, 3 or 4, got {excerpt(players)}")
    network = check_network(path, meta.get("network"))
    if network["kind"] != "mlp":
        raise ValueError(f"{path}: an Express policy network is an 'mlp', got {excerpt(network['kind'])}")
    expected = actor_tensors(network["hidden"])
    parameters = sum(math.prod(shape) for _, shape in expected.values())
    if parameters > MAX_PARAMETERS:
        raise ValueError(
            f"{path}: its metadata describes a network of {parameters:,} parameters, more than the "
            f"{MAX_PARAMETERS:,} a policy file may hold"
        )
    tensor_file.check_expected(path, found, expected, f"the network its metadata describes ({network['hidden']})")
    return meta, expected


def load_express_policy(path) -> tuple[ExpressActor, dict]:
    """(actor, metadata) of an Express policy file; every check of read_express_metadata
    runs before any tensor is read."""
    meta, expected = read_express_metadata(path)
    tensors = tensor_file.load_checked(path, list(expected))
    actor = ExpressActor(list(meta["network"]["hidden"]), meta["network"]["activation"])
    actor.load_state_dict(tensors)
    actor.eval()
    return actor, meta


class ExpressPolicyAgent(Agent):
    """Plays the masked argmax (or a masked sample) of a trained Express policy file."""

    plays_express = True
    uses_torch = True  # evaluation code gives torch one thread per process (agents.set_torch_threads)

    def __init__(self, path: str | os.PathLike, seed: int | None = None, sample: bool = False):
        self.path = str(path)
        self.actor, self.metadata = load_express_policy(path)
        self.num_players = int(self.metadata["num_players"])
        self.sample = sample
        self.name = f"policy:{self.metadata.get('name', self.path)}"
        self.reset(seed)

    def check_game(self, rules, num_players: int) -> None:
        """ValueError unless this is Sorry! Express (`rules` "express") with the file's
        player count."""
        if rules != GAME:
            raise ValueError(f"{self.path} is a Sorry! Express policy; it cannot play the board game ({rules!r})")
        if num_players != self.num_players:
            raise ValueError(f"{self.path} was trained for {self.num_players} players, not {num_players}")

    @torch.no_grad()
    def act(self, turn) -> int:
        self.check_game(GAME, int(turn.state[E.N_PLAYERS]))
        obs = turn.observation()
        logits = masked_logits(
            self.actor(torch.from_numpy(obs["observation"][None])), torch.from_numpy(obs["action_mask"][None])
        )[0]
        if not self.sample:
            return int(logits.argmax())
        probs = torch.softmax(logits, dim=0).numpy().astype(np.float64)
        return int(self.rng.choice(len(probs), p=probs / probs.sum()))
