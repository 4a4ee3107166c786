"""A trained policy of any registered game other than the board game, as an agent, read from a
self-describing policy file (the board game keeps its own format: :mod:`sorry_env.agents.policy`).

The network is a masked MLP: the game's observation of the acting seat
(``GameType.observation_size`` floats, ``Game.observation``) in, one logit per action
(``GameType.num_actions``) out; illegal actions are masked out before the argmax (or the
sample, with ``sample=True``). ``sorry_env.training.game_ppo`` trains one.

Policy file format (one ``.safetensors`` file, loaded without executing code)
----------------------------------------------------------------------------
Tensors ``net.layers.{k}.weight`` / ``net.layers.{k}.bias``: the MLP. The header's
``__metadata__`` holds one key, the game's ``GameType.policy_format`` (never the board
game's ``sorry_policy``: no loader can mistake another game's file for its own, and each
says which game a refused file is for), a JSON object::

    {
      "format": <policy_format>, "format_version": 1, "game": <game id>,
      "name": "...", "num_players": 2,
      "layout": {"version": <GameType.layout_name>, "obs_size": ..., "n_actions": ...},
      "network": {"kind": "mlp", "hidden": [128, 128], "activation": "relu"},
      "training": {...}, "evaluation": {...}
    }

A file is refused for another game, another player count (:meth:`GamePolicyAgent.check_game`)
and another layout. The header is checked (metadata, tensor names, dtypes, shapes, the size
cap) before any tensor is read, and non-finite weights are refused with the tensor's name, as
for board-game policy files (docs/hardening.md).
"""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np
import torch
from torch import nn

from sorry_env import checks, games
from sorry_env.agent import Agent, GameTurn
from sorry_env.checks import excerpt

from . import tensor_file
from .policy import MLP, check_network, masked_logits

FORMAT_VERSION = 1


def layout(kind: games.GameType) -> dict:
    """The observation/action layout a policy file of this game records and is checked against."""
    return {"version": kind.layout_name, "obs_size": kind.observation_size, "n_actions": kind.num_actions}


class GameActor(nn.Module):
    """Observations (batch, obs_size) -> action logits (batch, n_actions) of one game; mask the
    illegal ones (:func:`sorry_env.agents.policy.masked_logits`)."""

    def __init__(self, kind: games.GameType, hidden: list[int], activation: str = "relu"):
        super().__init__()
        self.net = MLP([kind.observation_size, *hidden, kind.num_actions], activation)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.net(obs)


def actor_tensors(kind: games.GameType, hidden: list[int]) -> dict[str, tuple[str, tuple]]:
    """name -> (dtype, shape) of the tensors a GameActor of these widths holds."""
    sizes = [kind.observation_size, *hidden, kind.num_actions]
    tensors: dict[str, tuple[str, tuple]] = {}
    for k, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        tensors[f"net.layers.{k}.weight"] = ("F32", (b, a))
        tensors[f"net.layers.{k}.bias"] = ("F32", (b,))
    return tensors


def save_game_policy(
    path: str | os.PathLike,
    game_id: str,
    actor: GameActor,
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
    kind = games.game_type(game_id)
    meta = {
        "format": kind.policy_format,
        "format_version": FORMAT_VERSION,
        "game": kind.id,
        "name": name,
        "num_players": int(kind.check_players(num_players)),
        "layout": layout(kind),
        "network": {"kind": "mlp", "hidden": list(hidden), "activation": activation},
        "training": training or {},
        "evaluation": evaluation or {},
    }
    tensors = {k: v.detach().to(torch.float32).contiguous() for k, v in actor.state_dict().items()}
    tensor_file.save_atomic(path, tensors, kind.policy_format, meta)


def read_game_metadata(path: str | os.PathLike, game_id: str) -> tuple[dict, dict]:
    """(metadata, tensor header) of a policy file of `game_id`, checked against this code, or a
    ValueError naming the problem (a file of another game is refused as such)."""
    kind = games.game_type(game_id)
    try:
        header, found = tensor_file.read_header(path, what="safetensors policy file")
    except ValueError as exc:
        if not os.path.exists(path):
            raise ValueError(f"policy file {path} does not exist") from None
        raise ValueError(str(exc)) from None
    games.check_policy_game(header, path, kind.id)
    key = kind.policy_format
    try:
        meta = json.loads(header[key])
    except (ValueError, RecursionError):
        raise ValueError(f"{path}: its {key} metadata is not JSON") from None
    if not isinstance(meta, dict):
        raise ValueError(f"{path}: its {key} metadata must be a JSON object, got {excerpt(meta)}")
    if meta.get("format_version") != FORMAT_VERSION or meta.get("game") != kind.id:
        raise ValueError(
            f"{path}: {kind.long_name} policy format version {excerpt(meta.get('format_version'))} for game "
            f"{excerpt(meta.get('game'))}; this code reads version {FORMAT_VERSION} for {kind.id!r}"
        )
    if meta.get("layout") != layout(kind):
        raise ValueError(
            f"{path} was made for the {kind.long_name} layout {excerpt(meta.get('layout'), 200)}, this env uses "
            f"{layout(kind)}; train it again with this version"
        )
    players = meta.get("num_players")
    if isinstance(players, bool) or players not in kind.player_counts:
        counts = ", ".join(map(str, kind.player_counts))
        raise ValueError(f"{path}: num_players must be one of {counts}, got {excerpt(players)}")
    network = check_network(path, meta.get("network"))
    if network["kind"] != "mlp":
        raise ValueError(f"{path}: a {kind.long_name} policy network is an 'mlp', got {excerpt(network['kind'])}")
    sizes = [kind.observation_size, *network["hidden"], kind.num_actions]
    checks.check_parameter_count(f"{path}: its metadata", checks.mlp_parameters(sizes))
    expected = actor_tensors(kind, network["hidden"])
    tensor_file.check_expected(path, found, expected, f"the network its metadata describes ({network['hidden']})")
    return meta, expected


def load_game_policy(path: str | os.PathLike, game_id: str) -> tuple[GameActor, dict]:
    """(actor, metadata) of a policy file of `game_id`; every check of read_game_metadata runs
    before any tensor is read."""
    meta, expected = read_game_metadata(path, game_id)
    tensors = tensor_file.load_checked(path, list(expected))
    actor = GameActor(games.game_type(game_id), list(meta["network"]["hidden"]), meta["network"]["activation"])
    actor.load_state_dict(tensors)
    actor.eval()
    return actor, meta


class GamePolicyAgent(Agent):
    """Plays the masked argmax (or a masked sample) of a trained policy file of one game."""

    game_ids = None  # check_game compares the file's game with the one it is asked to play
    uses_torch = True  # evaluation code gives torch one thread per process (agents.set_torch_threads)

    def __init__(self, path: str | os.PathLike, game: str | games.Game, seed: int | None = None, sample: bool = False):
        self.game = game if isinstance(game, games.Game) else games.load_game(game)
        self.path = str(path)
        self.actor, self.metadata = load_game_policy(path, self.game.game_type.id)
        self.num_players = int(self.metadata["num_players"])
        self.sample = sample
        self.name = f"policy:{self.metadata.get('name', self.path)}"
        self.reset(seed)

    def check_game(self, rules: Any, num_players: int) -> None:
        """ValueError unless `rules` is this file's game (a :class:`sorry_env.games.Game`) with
        the file's player count."""
        kind = self.game.game_type
        if not isinstance(rules, games.Game) or rules.game_type.id != kind.id:
            other = rules.game_type.long_name if isinstance(rules, games.Game) else "the board game"
            raise ValueError(f"{self.path} is a {kind.long_name} policy; it cannot play {other} ({excerpt(rules)})")
        if num_players != self.num_players:
            raise ValueError(f"{self.path} was trained for {self.num_players} players, not {num_players}")

    @torch.no_grad()
    def act(self, turn: GameTurn) -> int:
        self.check_game(turn.game, turn.num_players)
        obs = turn.observation()
        logits = masked_logits(
            self.actor(torch.from_numpy(obs["observation"][None])), torch.from_numpy(obs["action_mask"][None])
        )[0]
        if not self.sample:
            return int(logits.argmax())
        probs = torch.softmax(logits, dim=0).numpy().astype(np.float64)
        return int(self.rng.choice(len(probs), p=probs / probs.sum()))
