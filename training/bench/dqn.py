"""A masked double DQN for sorry-bench, on the batched env (``VectorOpponentEnv``: the task's
opponents move inside the compiled loop), or in a self-play task against a frozen copy of
its network (its greedy moves) refreshed every ``self_play_snapshot_every`` learner steps
(:mod:`sorry_env.training.bench.selfplay_env`).

Masking: the greedy action and the bootstrap target take the maximum over legal actions
only (illegal actions' values are set to -inf); exploration picks a uniformly random legal
action. Target: double DQN (the online network chooses the next action, the target network
values it), Huber loss, a hard target update every ``target_every`` learner steps. The
reward is the env's: +1 / -1 at the end of a game (0 on truncation), 0 otherwise.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from .selfplay_env import SNAPSHOT_EVERY
from .tasks import Task

SETTINGS: dict[str, Any] = {
    "envs": 32,
    "hidden": [256, 256],
    "learning_rate": 1.0e-4,
    "gamma": 0.995,
    "buffer": 200_000,  # transitions
    "batch_size": 256,
    "learning_starts": 10_000,  # learner steps before the first update
    "train_every": 32,  # learner steps per gradient step (one per batched env step)
    "target_every": 4_000,  # learner steps between target-network copies
    "epsilon_start": 1.0,
    "epsilon_end": 0.05,
    "epsilon_fraction": 0.2,  # of the budget over which epsilon decays linearly
    "self_play_snapshot_every": SNAPSHOT_EVERY,  # learner steps between refreshes of the opponents' copy
}


def _network(obs_size: int, n_actions: int):
    from torch import nn

    sizes = [obs_size, *SETTINGS["hidden"]]
    layers = []
    for a, b in zip(sizes, sizes[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    return nn.Sequential(*layers, nn.Linear(sizes[-1], n_actions))


def _masked(q, masks):
    import torch

    return q.masked_fill(~masks, -torch.inf)


def agent(path: str = "", seed: int | None = None):
    """A network this baseline trained (its run's ``q_network.safetensors``) as an agent:
    ``sorry_env.training.bench.dqn:agent:path=FILE`` wherever an agent spec goes."""
    from sorry_env.board.observation import OBS_SIZE

    from .network_agent import SavedNetworkAgent, load_network

    net, game = load_network(lambda n_actions, _record: _network(OBS_SIZE, n_actions), path, "dqn")
    return SavedNetworkAgent(net, "dqn", game)


def train(task: Task, seed: int, budget: int, run_dir: Path, curve, curve_every: int):
    import torch

    from .network_agent import NetworkAgent, save_network
    from .selfplay_env import task_env

    torch.set_num_threads(1)
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    s = SETTINGS
    frozen = None  # self-play: the opponents' copy of the network
    env, opponent = task_env(task, s["envs"], seed, "dqn")  # the copy's network is set below, before any game
    B, obs_size, n_actions = env.num_envs, env.observation_space.shape[0], env.action_space.n
    online, target = _network(obs_size, n_actions), _network(obs_size, n_actions)
    target.load_state_dict(online.state_dict())
    if opponent is not None:
        frozen = _network(obs_size, n_actions).requires_grad_(False)
        frozen.load_state_dict(online.state_dict())
        opponent.scores = frozen
    obs, masks = env.reset().copy(), env.action_masks()
    optimizer = torch.optim.Adam(online.parameters(), lr=s["learning_rate"])
    size = s["buffer"]
    # the replay buffer: observation, next observation, its mask, action, reward, done
    buffer = [
        np.zeros((size, obs_size), dtype=np.float32),
        np.zeros((size, obs_size), dtype=np.float32),
        np.zeros((size, n_actions), dtype=bool),
        np.zeros(size, dtype=np.int64),
        np.zeros(size, dtype=np.float32),
        np.zeros(size, dtype=np.float32),
    ]
    filled, cursor, steps, last_target, last_refresh = 0, 0, 0, 0, 0
    agent = NetworkAgent(online, "dqn")  # its masked greedy move, in lockstep batches
    while steps < budget:
        curve.check(steps, agent, curve_every)
        epsilon = max(
            s["epsilon_end"],
            s["epsilon_start"] - (s["epsilon_start"] - s["epsilon_end"]) * steps / (s["epsilon_fraction"] * budget),
        )
        with torch.no_grad():
            greedy = _masked(online(torch.as_tensor(obs)), torch.as_tensor(masks)).argmax(1).numpy()
        # a uniformly random legal action: the argmax of random keys over the legal ones
        random_legal = np.where(masks, rng.random(masks.shape), -1.0).argmax(1)
        actions = np.where(rng.random(B) < epsilon, random_legal, greedy)
        next_obs, rewards, done, infos = env.step(actions)
        next_masks = env.action_masks()
        # After a game ends the env has already started the next one: store the finished
        # game's last observation. It is never bootstrapped (done): a truncated game counts
        # as ended with reward 0, as the evaluation counts it a draw.
        stored_next = next_obs.copy()
        ended = np.flatnonzero(done)
        if len(ended):
            stored_next[ended] = np.stack([infos[b]["terminal_observation"] for b in ended])
        index = (cursor + np.arange(B)) % size
        for column, values in zip(buffer, (obs, stored_next, next_masks, actions, rewards, done)):
            column[index] = values
        cursor, filled, steps = (cursor + B) % size, min(filled + B, size), steps + B
        obs, masks = next_obs.copy(), next_masks
        if steps >= s["learning_starts"] and steps % s["train_every"] < B:
            batch = rng.integers(filled, size=s["batch_size"])
            o, n, nm, a, r, d = (torch.as_tensor(column[batch]) for column in buffer)
            with torch.no_grad():
                choice = _masked(online(n), nm).argmax(1, keepdim=True)
                next_value = target(n).gather(1, choice).squeeze(1)
                goal = r + s["gamma"] * next_value * (1 - d)
            q = online(o).gather(1, a[:, None]).squeeze(1)
            loss = torch.nn.functional.smooth_l1_loss(q, goal)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(online.parameters(), 10.0)
            optimizer.step()
        if steps - last_target >= s["target_every"]:
            target.load_state_dict(online.state_dict())
            last_target = steps
        if frozen is not None and steps - last_refresh >= s["self_play_snapshot_every"]:
            frozen.load_state_dict(online.state_dict())
            last_refresh = steps
    curve.finish(steps, agent)
    save_network(online, run_dir / "q_network.safetensors", "dqn", task.preset, task.players)
    return agent
