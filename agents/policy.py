"""A trained policy of any registered game as an agent, read from a self-describing policy file
(one format for every game, keyed by the game: :attr:`sorry_env.games.GameType.policy_format`).

Policy input
------------
A policy sees one float32 vector per decision (:meth:`sorry_env.games.Game.policy_input`): the
game's observation of the acting seat, and for the board game
(:func:`sorry_env.board.policy_input.policy_input`) the
env's observation of the acting seat (``OBS_SIZE`` floats) followed by that seat's own view of
the engine state array (``STATE_SIZE`` small integers; the draw order and, with hands, the
other hands hidden). Nothing the seat cannot see enters it, so every preset, play for points
included, can have a policy. The Gymnasium env emits the same vector.

Actor kinds (``network.kind``; a game declares the kinds it plays in ``GameType.policy_kinds``)
----------------------------------------------------------------------------------------------
- ``mlp``: an MLP maps the observation to one logit per action.
- ``afterstate``: an MLP scores the observation of the position each legal move leads to
  (:mod:`sorry_env.board.policy_input`); the score is that move's logit. One small network, shared by
  all moves, that judges positions: what the heuristic agent does by hand.

Policy file format (one ``.safetensors`` file, loaded without executing code)
-----------------------------------------------------------------------------
Tensors ``net.layers.{k}.weight`` / ``net.layers.{k}.bias``: the actor's MLP. The header's
``__metadata__`` holds one key, the game's ``GameType.policy_format`` (so no reader can
mistake another game's file for its own, and each says which game a refused file is for), a
JSON object. The board game's (``sorry_policy``, version ``GameType.policy_format_version``)
records its rules (``GameType.policy_records_rules``)::

    {
      "format": "sorry_policy", "format_version": 2, "name": "2p@2500000",
      "layout": {"version": "sorry_v1", "obs_size": 1184, "state_size": 142, "n_actions": 142},
      "rules": {...Rules fields...}, "num_players": 2,
      "network": {"kind": "afterstate", "hidden": [256, 256], "activation": "relu",
                  "value_hidden": [256, 256]},
      "training": {"config": {...}, "timesteps": ..., "wall_seconds": ...},
      "evaluation": {...}
    }

A game of one rule set (``GameType.policy_records_rules`` False) records its id instead of
rules, in format version 1::

    {
      "format": <policy_format>, "format_version": 1, "game": <game id>,
      "name": "...", "num_players": 2,
      "layout": {"version": <GameType.layout_name>, "obs_size": ..., "n_actions": ...},
      "network": {"kind": "mlp", "hidden": [128, 128], "activation": "relu"},
      "training": {...}, "evaluation": {...}
    }

``network.value_hidden`` is optional: when present the file also holds the training run's
value network (tensors ``value.layers.{k}.*``, observation -> expected outcome, +1 win and
-1 loss), and :meth:`PolicyAgent.win_chance` gives its estimate of a position.

``layout`` (:meth:`sorry_env.games.Game.policy_layout`: the env's version name, e.g.
:data:`sorry_env.version.LAYOUT_VERSION`, and the input and action sizes) identifies the input
layout, so a file made for another layout is refused at load instead of playing nonsense. A
file is also refused for another game, other rules or another player count
(:meth:`PolicyAgent.check_game`).

Loading trusts nothing in the file (docs/hardening.md): the metadata and the header's tensor
names, dtypes and shapes are checked against each other, and every size the metadata gives
(layer counts, widths, the parameters they imply) against the caps of :mod:`sorry_env.checks`,
before anything is built from them, and non-finite weights are refused with the tensor's name.

Play needs plain torch only (no stable-baselines3). Illegal actions are masked out before the
argmax (or the sample, with ``sample=True``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any, cast

import numpy as np
import torch
from torch import nn

from sorry_env import checks, games
from sorry_env.board import game
from sorry_env.board.board_game import GAME_TYPE as _BOARD
from sorry_env.board.policy_input import afterstates
from sorry_env.board.rules import Rules
from sorry_env.checks import excerpt

from . import catalog, tensor_file
from .base import Agent, Turn
from .catalog import NetworkFiles, file_game, policy_game
from .catalog import check_trained_for as check_trained_for  # training.config reads it here

# The board game's file key and version (training.migrate_policy rewrites its older files).
FORMAT = _BOARD.policy_format
FORMAT_VERSION = _BOARD.policy_format_version
ACTIVATIONS = {"relu": nn.ReLU, "tanh": nn.Tanh}
KINDS = _BOARD.policy_kinds  # the board game's network kinds (its training configs name one)


class MLP(nn.Module):
    """Linear + activation per hidden layer, then a Linear."""

    def __init__(self, sizes: list[int], activation: str):
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, got {activation!r}")
        # an nn.ModuleList (registers the layers); its stubs type the items as Module, these are Linear
        self.layers = cast("Sequence[nn.Linear]", nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:])))
        self.activation = ACTIVATIONS[activation]()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers[:-1]:
            x = self.activation(layer(x))
        return self.layers[-1](x)


class Actor(nn.Module):
    """Policy inputs (batch, input size: :meth:`sorry_env.games.Game.policy_input`) -> action
    logits (batch, n_actions) of one game. `rules`: the :class:`sorry_env.games.Game`, or the
    board game's Rules or preset name. Logits of illegal actions are meaningless: mask them
    (:func:`masked_logits`)."""

    def __init__(
        self,
        kind: str,
        hidden: list[int],
        activation: str,
        rules: games.Game | Rules | str,
        value_hidden: list[int] | None = None,
    ):
        super().__init__()
        self.game = policy_game(rules)
        if kind not in self.game.game_type.policy_kinds:
            raise ValueError(f"network kind must be one of {self.game.game_type.policy_kinds}, got {kind!r}")
        self.kind = kind
        self.obs_size = self.game.observation_size
        self.n_actions = self.game.num_actions
        # the afterstate kind scores the board engine's afterstates (the one game declaring it)
        self.rules_array = game.rules_array(self.game.variant) if kind == "afterstate" else None
        self.net = MLP(actor_layers(kind, hidden, self.n_actions, None, self.obs_size)[0][1], activation)
        # Optional: the training run's critic, observation -> expected outcome (+1 win, -1 loss),
        # kept so the file can tell its estimate of a position (PolicyAgent.win_chance).
        self.value = None if value_hidden is None else MLP([self.obs_size, *value_hidden, 1], activation)

    @property
    def afterstate_rules(self) -> np.ndarray:
        """The rules array the afterstate kind scores its afterstates under."""
        if self.rules_array is None:
            raise ValueError(f"a {self.kind!r} network scores actions, not afterstates")
        return self.rules_array

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        if self.kind == "mlp":
            return self.net(inputs[:, : self.obs_size])
        states = inputs[:, self.obs_size :].detach().round().to(torch.int64).numpy()
        obs, rows, actions = afterstates(states, self.afterstate_rules)
        scores = self.net(torch.from_numpy(obs))[:, 0]
        logits = torch.zeros(len(inputs), self.n_actions, dtype=scores.dtype)
        return logits.index_put((torch.from_numpy(rows), torch.from_numpy(actions)), scores)


def masked_logits(logits: torch.Tensor, masks: np.ndarray | torch.Tensor) -> torch.Tensor:
    """Logits with illegal actions at -inf (masks: bool or 0/1, same shape)."""
    return logits.masked_fill(~torch.as_tensor(masks).bool(), float("-inf"))


def save_policy(
    path: str | os.PathLike,
    actor: Actor,
    *,
    num_players: int,
    network: dict,
    name: str,
    rules: games.Game | Rules | str | None = None,
    training: dict | None = None,
    evaluation: dict | None = None,
) -> None:
    """Write `actor` with the metadata that makes the file self-describing, in its game's
    format, atomically (a reader never sees half a file: it is written next to `path` and
    renamed into place) and readable by everyone (safetensors writes owner-only files; policy
    files are for sharing). `rules`: the game it plays (a Game, or the board game's rules;
    default: the actor's). The one writer of policy and value-network files."""
    played = actor.game if rules is None else policy_game(rules)
    kind = played.game_type
    if actor.value is not None:
        network = {**network, "value_hidden": [layer.out_features for layer in actor.value.layers[:-1]]}
    meta: dict[str, Any] = {"format": kind.policy_format, "format_version": kind.policy_format_version}
    if not kind.policy_records_rules:
        meta["game"] = kind.id
    meta.update(name=name, layout=played.policy_layout())
    if kind.policy_records_rules:
        meta["rules"] = played.variant_to_json()
    meta.update(
        num_players=int(kind.check_players(num_players)),
        network=network,
        training=training or {},
        evaluation=evaluation or {},
    )
    tensors = {k: v.detach().to(torch.float32).contiguous() for k, v in actor.state_dict().items()}
    tensor_file.save_atomic(path, tensors, kind.policy_format, meta)


def _read(path, game_id: str | None) -> tuple[games.GameType, dict, dict]:
    """(the file's game, metadata JSON, {tensor name: (dtype, shape)}) from the header only;
    ValueError if it is not a policy file (of `game_id`, if given)."""
    try:
        header, tensors = tensor_file.read_header(path, what="safetensors policy file")
    except ValueError as exc:
        if not os.path.exists(path):
            entry = catalog.named_like(path)
            hint = ""
            if entry is not None:
                hint = f"; the shipped {entry.file} is the catalog's {entry.name}, a name that works in any folder"
            raise ValueError(f"policy file {path} does not exist{hint}") from None
        hint = "; a training run's checkpoint becomes one with sorry-export" if str(path).endswith(".zip") else ""
        raise ValueError(f"{exc}{hint}") from None
    # Without a game asked for, the file's own; a file of none is refused as the board game's would be.
    game_id = game_id or games.game_of_policy_header(header) or _BOARD.id
    games.check_policy_game(header, path, game_id)
    kind = games.game_type(game_id)
    try:
        meta = json.loads(header[kind.policy_format])
    except (ValueError, RecursionError):
        raise ValueError(f"{path}: its {kind.policy_format} metadata is not JSON") from None
    if not isinstance(meta, dict):
        raise ValueError(f"{path}: its {kind.policy_format} metadata must be a JSON object, got {excerpt(meta)}")
    return kind, meta, tensors


def read_header(path, game: str | None = None) -> tuple[dict, dict]:
    """(metadata JSON, {tensor name: (dtype, shape)}) of a policy file (of registered game
    `game`, if given; else of whichever game it is), from its header only; ValueError if it is
    not a policy file."""
    return _read(path, game)[1:]


def read_metadata(path, game: str | None = None) -> dict:
    """The JSON metadata of a policy file (of registered game `game`, if given), checked
    (game, rules, layout, player count, network shape and size; tensors not read), or
    ValueError if it is not one."""
    return _checked_header(path, game)[0]


def check_network(path, network, game: games.GameType) -> dict:
    """The `network` metadata entry of a policy file of `game`, checked: kind (one the game
    plays), activation, and hidden widths as lists within the caps of
    :func:`sorry_env.checks.check_layer_widths` (the parameter count they imply is checked by
    the caller, who knows the input and output sizes)."""
    if not isinstance(network, dict):
        raise ValueError(f"{path}: 'network' must be an object, got {excerpt(network)}")
    kind, hidden, activation = network.get("kind"), network.get("hidden"), network.get("activation")
    if not isinstance(kind, str) or kind not in game.policy_kinds:
        kinds = " or ".join(map(repr, game.policy_kinds))
        raise ValueError(f"{path}: a {game.long_name} policy network is {kinds}, got {excerpt(kind)}")
    if not isinstance(activation, str) or activation not in ACTIVATIONS:
        raise ValueError(f"{path}: network activation must be one of {sorted(ACTIVATIONS)}, got {excerpt(activation)}")
    checks.check_layer_widths(hidden, f"{path}: network hidden")
    if network.get("value_hidden") is not None:
        checks.check_layer_widths(network["value_hidden"], f"{path}: network value_hidden")
    unknown = set(network) - {"kind", "hidden", "activation", "value_hidden"}
    if unknown:
        raise ValueError(f"{path}: unknown network entries {excerpt(sorted(unknown))}")
    return network


def actor_layers(
    kind: str, hidden: list[int], n_actions: int, value_hidden: list[int] | None = None, obs_size: int | None = None
) -> list[tuple[str, list[int]]]:
    """(tensor name prefix, layer sizes from input to output) of each MLP of an Actor
    (`obs_size`: its game's observation size; default: the board game's)."""
    obs_size = _BOARD.observation_size if obs_size is None else obs_size
    mlps = [("net", [obs_size, *hidden, n_actions if kind == "mlp" else 1])]
    if value_hidden is not None:
        mlps.append(("value", [obs_size, *value_hidden, 1]))
    return mlps


def actor_tensors(
    kind: str, hidden: list[int], n_actions: int, value_hidden: list[int] | None = None, obs_size: int | None = None
) -> dict[str, tuple[str, tuple]]:
    """name -> (dtype, shape) of the tensors an Actor of this shape holds (what a policy file
    must contain), computed without building it."""
    tensors: dict[str, tuple[str, tuple]] = {}
    for prefix, sizes in actor_layers(kind, hidden, n_actions, value_hidden, obs_size):
        for k, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
            tensors[f"{prefix}.layers.{k}.weight"] = ("F32", (b, a))
            tensors[f"{prefix}.layers.{k}.bias"] = ("F32", (b,))
    return tensors


def _checked_header(path, game_id: str | None = None):
    """(metadata, tensor header, Game, expected tensors) of a policy file whose metadata and
    header agree with each other and with this code; ValueError otherwise."""
    kind, meta, found = _read(path, game_id)
    if meta.get("format_version") != kind.policy_format_version:
        raise ValueError(
            f"{path}: {kind.long_name} policy file format version {excerpt(meta.get('format_version'))}, "
            f"this code reads version {kind.policy_format_version}. Export it again with this version."
        )
    played = file_game(path, meta)
    want, have = played.policy_layout(), meta.get("layout", {})
    if have != want:
        raise ValueError(
            f"{path} was made for input/action layout {excerpt(have, 200)} but this sorry_env uses "
            f"{want} ({kind.long_name} layout). Retrain or export it again with this version."
        )
    players = meta.get("num_players")
    if isinstance(players, bool) or players not in kind.player_counts:
        raise ValueError(
            f"{path}: num_players must be one of {', '.join(map(str, kind.player_counts))}, got {excerpt(players)}"
        )
    net_cfg = check_network(path, meta.get("network"), kind)
    shape = (net_cfg["kind"], net_cfg["hidden"], want["n_actions"], net_cfg.get("value_hidden"), want["obs_size"])
    layers = actor_layers(*shape)
    checks.check_parameter_count(f"{path}: its metadata", sum(checks.mlp_parameters(sizes) for _, sizes in layers))
    expected = actor_tensors(*shape)
    tensor_file.check_expected(path, found, expected, f"the network its metadata describes ({net_cfg['hidden']})")
    return meta, found, played, expected


def load_policy(path, game: str | None = None) -> tuple[Actor, dict]:
    """(actor, metadata) of a policy file (of registered game `game`, if given), after
    checking it matches this code's layout. Everything is checked from the header (metadata,
    tensor names, dtypes and shapes, the sizes against sorry_env.checks' caps) before any
    memory is set aside for the network; non-finite weights are refused with the tensor's name."""
    meta, found, played, expected = _checked_header(path, game)
    tensors = tensor_file.load_checked(path, list(expected))
    net_cfg = meta["network"]
    actor = Actor(net_cfg["kind"], list(net_cfg["hidden"]), net_cfg["activation"], played, net_cfg.get("value_hidden"))
    actor.load_state_dict(tensors)
    actor.eval()
    return actor, meta


class PolicyAgent(NetworkFiles, Agent):
    """Plays the masked argmax (or a masked sample) of a trained policy file of any registered
    game (`game`: the one it is asked to play, whose files alone are read; default: the file's)."""

    game_ids = None  # check_game compares the file's game with the one it is asked to play
    uses_torch = True  # evaluation code gives torch one thread per process (agents.set_torch_threads)

    def __init__(self, path: str | os.PathLike, seed: int | None = None, sample: bool = False, game: Any = None):
        self.path = str(path)
        game_id = game.game_type.id if isinstance(game, games.Game) else game
        self.actor, self.metadata = load_policy(path, game_id)
        self.game = self.actor.game
        self.rules = self.game.variant  # the board game's Rules (its agents' and envs' name for the variant)
        self.num_players = int(self.metadata["num_players"])
        self.sample = sample
        self.name = f"policy:{self.metadata.get('name', self.path)}"
        self.reset(seed)

    def network_files(self) -> list[tuple[str, dict]]:
        """The policy file: check_game refuses a game (a Game, or the board game's rules) and
        player count it was not trained for."""
        return [(self.path, self.metadata)]

    def act(self, turn: Any) -> int:
        if self.actor.kind == "afterstate" and not self.sample:
            self.check_turns([turn])
            return self._best_afterstate(turn)
        return int(self.act_turns([turn])[0])

    @property
    def has_value(self) -> bool:
        """True when the file holds its training run's value network (:meth:`win_chance`)."""
        return self.actor.value is not None

    @torch.no_grad()
    def win_chance(self, state: np.ndarray, rules: Any, seat: int) -> float | None:
        """The policy's estimate, in [0, 1], that `seat`'s side wins from `state` (read from
        the seat's own observation: nothing hidden from it), or None if the file holds no
        value network. The network learned the outcome (+1 win, -1 loss, discounted per
        move) of self-play games; (value + 1) / 2, clipped. Discounting pulls estimates far
        from the end slightly towards even."""
        if self.actor.value is None:
            return None
        self.check_game(rules, len(self.game.seats(state)))
        obs = self.game.policy_input(state, seat)[None, : self.actor.obs_size]
        value = float(self.actor.value(torch.from_numpy(obs))[0, 0])
        return min(1.0, max(0.0, (value + 1.0) / 2.0))

    @property
    def acts_in_batches(self) -> bool:
        """True when :meth:`act_turns` may decide many games' turns in one forward with the
        same choices as :meth:`act` one at a time: the argmax policy (a sampling one would
        draw from its generator in another order)."""
        return not self.sample

    def act_turns(self, turns: list[Turn]) -> np.ndarray:
        """int64 actions for a list of turns (of any games), one forward for all of them."""
        if not turns:
            return np.zeros(0, dtype=np.int64)
        self.check_turns(turns)
        masks = np.zeros((len(turns), self.actor.n_actions), dtype=bool)
        for k, turn in enumerate(turns):
            masks[k, turn.legal] = True
        inputs = np.stack([self.game.policy_input(turn.state, turn.seat) for turn in turns])
        return np.asarray(self.act_batch(inputs, masks), dtype=np.int64)

    @torch.no_grad()
    def _best_afterstate(self, turn: Turn) -> int:
        """act_batch's argmax for one decision, without the full logits row: score the legal
        moves' afterstates and keep the lowest action index among the best (argmax's tie
        rule). The public view's hidden parts do not matter: afterstates draw no card."""
        obs, _, actions = afterstates(turn.state[None], self.actor.afterstate_rules)
        scores = self.actor.net(torch.from_numpy(obs))[:, 0].numpy()
        return int(actions[scores == scores.max()].min())

    @torch.no_grad()
    def act_batch(self, inputs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Actions for a batch of (policy input, legal-action mask) rows."""
        logits = masked_logits(self.actor(torch.as_tensor(inputs)), masks)
        if not self.sample:
            return logits.argmax(dim=1).numpy()
        probs = torch.softmax(logits, dim=1).numpy().astype(np.float64)
        return np.array([self.rng.choice(len(p), p=p / p.sum()) for p in probs])
