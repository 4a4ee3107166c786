"""A trained policy as an agent, read from a self-describing policy file.

Policy input
------------
A policy sees one float32 vector per decision (:func:`sorry_env.policy_input.policy_input`): the
env's observation of the acting seat (``OBS_SIZE`` floats) followed by that seat's own view of
the engine state array (``STATE_SIZE`` small integers; the draw order and, with hands, the
other hands hidden). Nothing the seat cannot see enters it, so every preset, play for points
included, can have a policy. The Gymnasium env emits the same vector.

Actor kinds (``network.kind``)
------------------------------
- ``mlp``: an MLP maps the observation to one logit per action.
- ``afterstate``: an MLP scores the observation of the position each legal move leads to
  (:mod:`sorry_env.policy_input`); the score is that move's logit. One small network, shared by
  all moves, that judges positions: what the heuristic agent does by hand.

Policy file format (one ``.safetensors`` file, loaded without executing code)
-----------------------------------------------------------------------------
Tensors ``net.layers.{k}.weight`` / ``net.layers.{k}.bias``: the actor's MLP. The header's
``__metadata__`` holds one key, ``sorry_policy``, a JSON object::

    {
      "format": "sorry_policy", "format_version": 2, "name": "2p@2500000",
      "layout": {"version": "sorry_v1", "obs_size": 1184, "state_size": 142, "n_actions": 142},
      "rules": {...Rules fields...}, "num_players": 2,
      "network": {"kind": "afterstate", "hidden": [256, 256], "activation": "relu",
                  "value_hidden": [256, 256]},
      "training": {"config": {...}, "timesteps": ..., "wall_seconds": ...},
      "evaluation": {...}
    }

``network.value_hidden`` is optional: when present the file also holds the training run's
value network (tensors ``value.layers.{k}.*``, observation -> expected outcome, +1 win and
-1 loss), and :meth:`PolicyAgent.win_chance` gives its estimate of a position.

``layout.version`` is the layout id (:data:`sorry_env.version.LAYOUT_VERSION`, the env's
version name ``raw_env.metadata["name"]``); with
the observation and state sizes it identifies the input layout, so a file made for another
layout is refused at load instead of playing nonsense. A file is also refused for other
rules or another player count (:meth:`PolicyAgent.check_game`).

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

import numpy as np
import torch
from torch import nn

from sorry_env import checks, game, games
from sorry_env.checks import excerpt
from sorry_env.observation import OBS_SIZE
from sorry_env.policy_input import INPUT_SIZE, afterstates, layout, policy_input, rules_dict, rules_from_dict
from sorry_env.rules import Rules, get_rules

from . import catalog, tensor_file
from .base import Agent, Turn

FORMAT = games.game_type("sorry").policy_format
FORMAT_VERSION = 2
ACTIVATIONS = {"relu": nn.ReLU, "tanh": nn.Tanh}
KINDS = ("mlp", "afterstate")


class MLP(nn.Module):
    """Linear + activation per hidden layer, then a Linear."""

    def __init__(self, sizes: list[int], activation: str):
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, got {activation!r}")
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))
        self.activation = ACTIVATIONS[activation]()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers[:-1]:
            x = self.activation(layer(x))
        return self.layers[-1](x)


class Actor(nn.Module):
    """Policy inputs (batch, INPUT_SIZE) -> action logits (batch, n_actions). Logits of
    illegal actions are meaningless: mask them (:func:`masked_logits`)."""

    def __init__(
        self, kind: str, hidden: list[int], activation: str, rules: Rules | str, value_hidden: list[int] | None = None
    ):
        super().__init__()
        if kind not in KINDS:
            raise ValueError(f"network kind must be one of {KINDS}, got {kind!r}")
        self.kind = kind
        self.rules_array = game.rules_array(rules)
        self.n_actions = game.num_actions(rules)
        self.net = MLP([OBS_SIZE, *hidden, self.n_actions if kind == "mlp" else 1], activation)
        # Optional: the training run's critic, observation -> expected outcome (+1 win, -1 loss),
        # kept so the file can tell its estimate of a position (PolicyAgent.win_chance).
        self.value = None if value_hidden is None else MLP([OBS_SIZE, *value_hidden, 1], activation)

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        if self.kind == "mlp":
            return self.net(inputs[:, :OBS_SIZE])
        states = inputs[:, OBS_SIZE:].detach().round().to(torch.int64).numpy()
        obs, rows, actions = afterstates(states, self.rules_array)
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
    rules: Rules | str,
    num_players: int,
    network: dict,
    name: str,
    training: dict | None = None,
    evaluation: dict | None = None,
) -> None:
    """Write `actor` with the metadata that makes the file self-describing, atomically (a
    reader never sees half a file: it is written next to `path` and renamed into place) and
    readable by everyone (safetensors writes owner-only files; policy files are for sharing).
    The one writer of policy and value-network files."""
    if actor.value is not None:
        network = {**network, "value_hidden": [layer.out_features for layer in actor.value.layers[:-1]]}
    meta = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "name": name,
        "layout": layout(rules),
        "rules": rules_dict(rules),
        "num_players": int(num_players),
        "network": network,
        "training": training or {},
        "evaluation": evaluation or {},
    }
    tensors = {k: v.detach().to(torch.float32).contiguous() for k, v in actor.state_dict().items()}
    tensor_file.save_atomic(path, tensors, FORMAT, meta)


def read_header(path) -> tuple[dict, dict]:
    """(metadata JSON, {tensor name: (dtype, shape)}) of a policy file, from its header only;
    ValueError if it is not a policy file."""
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
    games.check_policy_game(header, path, "sorry")
    try:
        meta = json.loads(header[FORMAT])
    except (ValueError, RecursionError):
        raise ValueError(f"{path}: its sorry_policy metadata is not JSON") from None
    if not isinstance(meta, dict):
        raise ValueError(f"{path}: its sorry_policy metadata must be a JSON object, got {excerpt(meta)}")
    return meta, tensors


def read_metadata(path) -> dict:
    """The JSON metadata of a policy file, checked (rules, layout, player count, network
    shape and size; tensors not read), or ValueError if it is not one."""
    return _checked_header(path)[0]


def check_network(path, network) -> dict:
    """The `network` metadata entry, checked: kind, activation, and hidden widths as lists
    within the caps of :func:`sorry_env.checks.check_layer_widths` (the parameter count they
    imply is checked by the caller, who knows the input and output sizes)."""
    if not isinstance(network, dict):
        raise ValueError(f"{path}: 'network' must be an object, got {excerpt(network)}")
    kind, hidden, activation = network.get("kind"), network.get("hidden"), network.get("activation")
    if not isinstance(kind, str) or kind not in KINDS:
        raise ValueError(f"{path}: network kind must be one of {KINDS}, got {excerpt(kind)}")
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
    kind: str, hidden: list[int], n_actions: int, value_hidden: list[int] | None = None
) -> list[tuple[str, list[int]]]:
    """(tensor name prefix, layer sizes from input to output) of each MLP of an Actor."""
    mlps = [("net", [OBS_SIZE, *hidden, n_actions if kind == "mlp" else 1])]
    if value_hidden is not None:
        mlps.append(("value", [OBS_SIZE, *value_hidden, 1]))
    return mlps


def actor_tensors(
    kind: str, hidden: list[int], n_actions: int, value_hidden: list[int] | None = None
) -> dict[str, tuple[str, tuple]]:
    """name -> (dtype, shape) of the tensors an Actor of this shape holds (what a policy file
    must contain), computed without building it."""
    tensors = {}
    for prefix, sizes in actor_layers(kind, hidden, n_actions, value_hidden):
        for k, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
            tensors[f"{prefix}.layers.{k}.weight"] = ("F32", (b, a))
            tensors[f"{prefix}.layers.{k}.bias"] = ("F32", (b,))
    return tensors


def _checked_header(path):
    """(metadata, tensor header, Rules, expected tensors) of a policy file whose metadata and
    header agree with each other and with this code; ValueError otherwise."""
    meta, found = read_header(path)
    if meta.get("format_version") != FORMAT_VERSION:
        raise ValueError(
            f"{path}: policy file format version {excerpt(meta.get('format_version'))}, "
            f"this code reads version {FORMAT_VERSION}. Export it again with this version."
        )
    rules = rules_from_dict(meta.get("rules"), path)
    want, have = layout(rules), meta.get("layout", {})
    if have != want:
        raise ValueError(
            f"{path} was made for input/action layout {excerpt(have, 200)} but this sorry_env uses "
            f"{want}. Retrain or export it again with this version."
        )
    players = meta.get("num_players")
    if isinstance(players, bool) or players not in (2, 3, 4):
        raise ValueError(f"{path}: num_players must be 2, 3 or 4, got {excerpt(players)}")
    net_cfg = check_network(path, meta.get("network"))
    shape = (net_cfg["kind"], net_cfg["hidden"], want["n_actions"], net_cfg.get("value_hidden"))
    layers = actor_layers(*shape)
    checks.check_parameter_count(f"{path}: its metadata", sum(checks.mlp_parameters(sizes) for _, sizes in layers))
    expected = actor_tensors(*shape)
    tensor_file.check_expected(path, found, expected, f"the network its metadata describes ({net_cfg['hidden']})")
    return meta, found, rules, expected


def load_policy(path) -> tuple[Actor, dict]:
    """(actor, metadata) of a policy file, after checking it matches this code's layout.
    Everything is checked from the header (metadata, tensor names, dtypes and shapes, the
    sizes against sorry_env.checks' caps) before any memory is set aside for the network;
    non-finite weights are refused with the tensor's name."""
    meta, found, rules, expected = _checked_header(path)
    tensors = tensor_file.load_checked(path, list(expected))
    net_cfg = meta["network"]
    actor = Actor(net_cfg["kind"], list(net_cfg["hidden"]), net_cfg["activation"], rules, net_cfg.get("value_hidden"))
    actor.load_state_dict(tensors)
    actor.eval()
    return actor, meta


def check_trained_for(path: str | os.PathLike, meta: dict, rules: Rules | str, num_players: int) -> None:
    """ValueError unless the network of file `path` (metadata `meta`) was trained for these
    rules and player count; the message names what it was trained for and the shipped file
    that fits the game asked for (:mod:`sorry_env.agents.catalog`)."""
    from .catalog import fitting_hint

    r = get_rules(rules)
    if rules_dict(r) != meta["rules"]:
        differs = sorted(k for k, v in rules_dict(r).items() if meta["rules"].get(k) != v)
        raise ValueError(
            f"network {path} was trained for rules {meta['rules']['name']!r} with {meta['num_players']} players, "
            f"not {r.name!r} (rules differing: {', '.join(differs)}); {fitting_hint(r, num_players)}"
        )
    if num_players != int(meta["num_players"]):
        raise ValueError(
            f"network {path} was trained for {meta['num_players']} players, not {num_players} "
            f"(rules {meta['rules']['name']!r}); {fitting_hint(r, num_players)}"
        )


class PolicyAgent(Agent):
    """Plays the masked argmax (or a masked sample) of a trained policy file."""

    uses_torch = True  # evaluation code gives torch one thread per process (agents.set_torch_threads)

    def __init__(self, path: str | os.PathLike, seed: int | None = None, sample: bool = False):
        self.path = str(path)
        self.actor, self.metadata = load_policy(path)
        self.rules = rules_from_dict(self.metadata["rules"])
        self.num_players = int(self.metadata["num_players"])
        self.sample = sample
        self.name = f"policy:{self.metadata.get('name', self.path)}"
        self._checked = None  # the last (rules, num_players) found compatible
        self.reset(seed)

    def check_game(self, rules: Rules | str, num_players: int) -> None:
        """ValueError unless this policy was trained for these rules and player count."""
        if (rules, num_players) == self._checked:
            return
        check_trained_for(self.path, self.metadata, rules, num_players)
        self._checked = (rules, num_players)

    def act(self, turn: Turn) -> int:
        self.check_game(turn.rules, len(game.seats(turn.state)))
        if self.actor.kind == "afterstate" and not self.sample:
            return self._best_afterstate(turn)
        inputs = policy_input(turn.state, game.rules_array(turn.rules), turn.seat)
        mask = np.zeros(self.actor.n_actions, dtype=bool)
        mask[turn.legal] = True
        return int(self.act_batch(inputs[None], mask[None])[0])

    @property
    def has_value(self) -> bool:
        """True when the file holds its training run's value network (:meth:`win_chance`)."""
        return self.actor.value is not None

    @torch.no_grad()
    def win_chance(self, state: np.ndarray, rules: Rules | str, seat: int) -> float | None:
        """The policy's estimate, in [0, 1], that `seat`'s side wins from `state` (read from
        the seat's own observation: nothing hidden from it), or None if the file holds no
        value network. The network learned the outcome (+1 win, -1 loss, discounted per
        move) of self-play games; (value + 1) / 2, clipped. Discounting pulls estimates far
        from the end slightly towards even."""
        if self.actor.value is None:
            return None
        self.check_game(rules, len(game.seats(state)))
        obs = policy_input(state, game.rules_array(rules), seat)[None, :OBS_SIZE]
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
        rules = turns[0].rules
        self.check_game(rules, len(game.seats(turns[0].state)))
        rules_array = game.rules_array(rules)
        inputs = np.empty((len(turns), INPUT_SIZE), dtype=np.float32)
        masks = np.zeros((len(turns), self.actor.n_actions), dtype=bool)
        for k, turn in enumerate(turns):
            if turn.rules != rules:
                raise ValueError(
                    f"act_turns: every turn must be of the same rules ({rules.name!r}), turn {k} is {turn.rules.name!r}"
                )
            policy_input(turn.state, rules_array, turn.seat, inputs[k])
            masks[k, turn.legal] = True
        return np.asarray(self.act_batch(inputs, masks), dtype=np.int64)

    @torch.no_grad()
    def _best_afterstate(self, turn: Turn) -> int:
        """act_batch's argmax for one decision, without the full logits row: score the legal
        moves' afterstates and keep the lowest action index among the best (argmax's tie
        rule). The public view's hidden parts do not matter: afterstates draw no card."""
        obs, _, actions = afterstates(turn.state[None], game.rules_array(turn.rules))
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
