"""A network trained by a sorry-bench baseline as an agent that plays tournaments in
lockstep batches (``acts_in_batches``: :meth:`sorry_env.agents.arena.play.Table.play_lockstep`): one
forward for the pending turns of every game, the masked argmax of its scores (or, with
``sample=True``, a move drawn from the softmax of its scores: the self-play opponents of
sorry-bench's MaskablePPO).

:func:`save_network` and :func:`load_network` keep such a network in a safetensors file with
the game it was trained for, so a baseline's weights play again as an agent spec, e.g.
``sorry_env.training.bench.dqn:agent:path=runs/bench/2p-heuristic/dqn/seed-0/q_network.safetensors``."""

from __future__ import annotations

import json
from collections.abc import Callable

import numpy as np

from sorry_env.agents.base import Agent, Turn
from sorry_env.board.policy_input import rules_dict
from sorry_env.board.rules import get_rules
from sorry_env.games import BENCH_NETWORK_KEY

# The metadata key of a baseline's network file: JSON {"algorithm", "rules", "players"}.
GAME_KEY = BENCH_NETWORK_KEY


class NetworkAgent(Agent):
    """`scores` maps float32[N, OBS_SIZE] observations (the env's, as :meth:`Turn.observation`
    builds them) to a torch tensor [N, n_actions] of action scores (logits or Q-values).
    ``sample=True`` draws each move from softmax(scores) with the agent's generator (Gumbel-max)
    instead of taking the argmax."""

    acts_in_batches = True

    def __init__(self, scores: Callable | None, name: str, sample: bool = False):
        self.scores = scores  # None until it is set, before the first game (a self-play opponent's copy)
        self.name = name
        self.sample = sample
        self.reset(None)

    def act_turns(self, turns: list[Turn]) -> np.ndarray:
        import torch

        if not turns:
            return np.zeros(0, dtype=np.int64)
        if self.scores is None:
            raise RuntimeError(f"agent {self.name!r} has no network yet")
        views = [turn.observation() for turn in turns]
        obs = torch.as_tensor(np.stack([v["observation"] for v in views]))
        masks = torch.as_tensor(np.stack([v["action_mask"] for v in views]).astype(bool))
        with torch.no_grad():
            values = self.scores(obs).masked_fill(~masks, -torch.inf).numpy()
        if self.sample:
            values = values + self.rng.gumbel(size=values.shape)
        return values.argmax(1).astype(np.int64)

    def act(self, turn: Turn) -> int:
        return int(self.act_turns([turn])[0])


def save_network(net, path, algorithm: str, rules: str, players: int, **shape) -> None:
    """`net`'s weights in safetensors file `path`, with the game it plays (rules preset name,
    player count) and the settings that shape it (`shape`, e.g. ``hidden=256``) in the
    metadata: :func:`load_network` builds the network from them and refuses another game."""
    from sorry_env.agents import tensor_file

    record = {"algorithm": algorithm, "rules": rules, "players": players, **shape}
    tensor_file.save_atomic(path, {k: v.contiguous() for k, v in net.state_dict().items()}, GAME_KEY, record)


def load_network(build: Callable, path: str, algorithm: str):
    """(network, game) from `path`, written by :func:`save_network` for `algorithm`:
    ``build(n_actions, record)`` makes the network for the game the file records (`record`:
    the metadata, whose shape settings `build` checks before it allocates anything); the
    header is checked first (a bounded regular file; exactly that network's tensor names,
    dtypes and shapes), then the finite weights are read. `game`: {"rules", "players"}."""
    from sorry_env.agents import tensor_file
    from sorry_env.board import game as engine

    what = f"sorry-bench {algorithm} network file"
    if not path:
        raise ValueError(f"{algorithm} agent: give its network file, path=FILE")
    meta, found = tensor_file.read_header(path, what=what)
    try:
        record = json.loads(meta[GAME_KEY])
        rules, players, made_by = get_rules(record["rules"]), record["players"], record["algorithm"]
    except (KeyError, TypeError, ValueError, RecursionError):
        made_by = players = None
    if made_by != algorithm or type(players) is not int or not 2 <= players <= 4:
        raise ValueError(f"{path} is not a {what}: its metadata does not name the {algorithm} game it plays")
    import torch

    from sorry_env import checks

    n_actions = engine.num_actions(rules)
    with torch.device("meta"):  # shapes only: nothing is allocated before the sizes are checked
        shaped = build(n_actions, record).state_dict()
    expected = {name: tensor_file.spec(tensor) for name, tensor in shaped.items()}
    checks.check_parameter_count(f"{path}: its metadata", sum(tensor.numel() for tensor in shaped.values()))
    tensor_file.check_expected(path, found, expected, what)
    net = build(n_actions, record)
    net.load_state_dict(tensor_file.load_checked(path, expected))
    return net, {"rules": rules, "players": players}


class SavedNetworkAgent(NetworkAgent):
    """A :class:`NetworkAgent` loaded from a file: it plays only the game the file records."""

    def __init__(self, scores: Callable, name: str, game: dict, sample: bool = False):
        super().__init__(scores, name, sample)
        self.trained_for = game

    def check_game(self, rules, num_players: int) -> None:
        asked, trained = get_rules(rules), self.trained_for["rules"]
        if rules_dict(asked) != rules_dict(trained) or num_players != self.trained_for["players"]:
            raise ValueError(
                f"agent {self.name!r} was trained for {trained.name} with "
                f"{self.trained_for['players']} players, not {asked.name} with {num_players}"
            )
