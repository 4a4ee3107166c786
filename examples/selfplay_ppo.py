"""Masked PPO self-play for Sorry! in one file of plain torch (CleanRL style): copy it, edit it, run it.

    cp examples/selfplay_ppo.py . && python selfplay_ppo.py --total-timesteps 500000 --save mine.safetensors
    sorry-eval "sorry_env.training.bench.selfplay_ppo:agent:path=mine.safetensors" heuristic --games 2000

It needs sorry_env, torch and safetensors (``pip install 'sorry-env[train]'``) and nothing else
from this repository: it imports only the env (``sorry_env/Sorry-v1``, Gymnasium). The learner
plays a random seat; its opponents are a frozen copy of the learner (self-play: a function from
the observation dict to an action, refreshed every ``--snapshot-every`` updates) or named agents
(``--opponents heuristic``). Illegal actions get a logit of -1e9, so they are never sampled.
Steps per second are logged every update. At the end the greedy network plays ``--eval-games``
games against the heuristic and against random, batched in the compiled vector env
(``gymnasium.make_vec`` of the same id). ``--save`` writes the network with the game it was
trained for; it plays again wherever an agent spec goes, as above.

sorry-bench's ``selfplay_ppo`` baseline runs this very file (it is installed as
``sorry_env.examples.selfplay_ppo``; the adapter is ``training/bench/selfplay_ppo.py``).
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import os
import time
from collections.abc import Callable
from pathlib import Path

import gymnasium
import numpy as np
import torch
from torch import nn
from torch.distributions import Categorical

import sorry_env  # noqa: F401  (registers sorry_env/Sorry-v1)
from sorry_env.board.rules import DEFAULT_PRESET
from sorry_env.files import make_writable_dir
from sorry_env.games import BENCH_NETWORK_KEY  # the metadata key of the saved network

ENV_ID = "sorry_env/Sorry-v1"

# Hyperparameters (CleanRL's PPO defaults except gamma: a 2-player game lasts about 60 of
# the learner's moves). sorry-bench records these with every result.
SETTINGS = {
    "num_envs": 8,
    "num_steps": 256,
    "learning_rate": 3e-4,
    "gamma": 0.995,
    "gae_lambda": 0.95,
    "update_epochs": 4,
    "num_minibatches": 4,
    "clip_coef": 0.2,
    "ent_coef": 0.01,
    "vf_coef": 0.5,
    "max_grad_norm": 0.5,
    "snapshot_every": 5,
    "hidden": 256,
}


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--total-timesteps", type=int, default=500_000)
    p.add_argument("--num-players", type=int, default=2)
    p.add_argument("--rules", default=DEFAULT_PRESET, help=f"a rules preset (default: {DEFAULT_PRESET})")
    p.add_argument("--opponents", nargs="*", default=None, help="agent specs instead of self-play")
    for name, value in SETTINGS.items():
        p.add_argument(f"--{name.replace('_', '-')}", type=type(value), default=value)
    p.add_argument("--eval-games", type=int, default=400, help="games against each of heuristic and random")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--save", metavar="FILE", help="write the trained network here (.safetensors)")
    args = p.parse_args(argv)
    for name in ("total_timesteps", "num_envs", "num_steps", "num_minibatches", "snapshot_every", "eval_games"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.save is not None:  # checked before training: a trained network must not be lost to a bad path
        if not args.save.endswith(".safetensors"):
            raise SystemExit(f"--save {args.save}: the network file's name must end in .safetensors")
        try:
            make_writable_dir(Path(args.save).parent)
        except ValueError as error:
            raise SystemExit(f"--save {args.save}: {error}") from None
    return args


class Network(nn.Module):
    """Actor and critic, two tanh layers each, over the env's observation."""

    def __init__(self, obs_size: int, n_actions: int, hidden: int):
        super().__init__()
        self.actor = nn.Sequential(
            nn.Linear(obs_size, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(), nn.Linear(hidden, n_actions)
        )
        self.critic = nn.Sequential(
            nn.Linear(obs_size, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(), nn.Linear(hidden, 1)
        )

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        return self.critic(obs).squeeze(-1)

    def policy(self, obs: torch.Tensor, mask: torch.Tensor) -> Categorical:
        return Categorical(logits=self.actor(obs).masked_fill(~mask, -1e9))


def as_player(net: Network, greedy: bool) -> Callable[[dict], int]:
    """The network as an opponent function: observation dict -> action."""

    def play(observation: dict) -> int:
        with torch.no_grad():
            obs = torch.as_tensor(observation["observation"])[None]
            mask = torch.as_tensor(observation["action_mask"], dtype=torch.bool)[None]
            dist = net.policy(obs, mask)
            return int(dist.probs.argmax() if greedy else dist.sample())

    return play


def train_ppo(args: argparse.Namespace, on_update: Callable[[int, Network], None] | None = None, log: Callable = print):
    """Train the network for args.total_timesteps learner steps; `on_update(steps, net)` runs
    before the first rollout and after every update. Returns the network."""
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)  # small networks on few cores: one thread is fastest
    batch_size = args.num_envs * args.num_steps
    minibatch_size = max(1, batch_size // args.num_minibatches)
    updates = max(1, args.total_timesteps // batch_size)
    env_kwargs = {"num_players": args.num_players, "rules": args.rules}

    probe = gymnasium.make(ENV_ID, opponents="random", **env_kwargs)
    obs_size, n_actions = probe.observation_space["observation"].shape[0], probe.action_space.n
    probe.close()
    net = Network(obs_size, n_actions, args.hidden)
    frozen = copy.deepcopy(net)  # self-play opponents: refreshed in place, so every env sees the new copy
    opponents = list(args.opponents) if args.opponents else [as_player(frozen, greedy=False)]
    optimizer = torch.optim.Adam(net.parameters(), lr=args.learning_rate, eps=1e-5)
    envs = gymnasium.vector.SyncVectorEnv(
        [lambda: gymnasium.make(ENV_ID, opponents=opponents, **env_kwargs)] * args.num_envs,
        autoreset_mode=gymnasium.vector.AutoresetMode.SAME_STEP,
    )

    obs_buf = torch.zeros(args.num_steps, args.num_envs, obs_size)
    mask_buf = torch.zeros(args.num_steps, args.num_envs, n_actions, dtype=torch.bool)
    action_buf = torch.zeros(args.num_steps, args.num_envs, dtype=torch.long)
    logprob_buf, reward_buf, done_buf, value_buf = (torch.zeros(args.num_steps, args.num_envs) for _ in range(4))

    next_obs, _ = envs.reset(seed=args.seed)
    next_done = torch.zeros(args.num_envs)
    returns_seen, start, global_step = [], time.perf_counter(), 0
    if on_update is not None:
        on_update(0, net)  # the untrained network
    for update in range(1, updates + 1):
        for step in range(args.num_steps):  # rollout
            obs = torch.as_tensor(next_obs["observation"])
            mask = torch.as_tensor(next_obs["action_mask"], dtype=torch.bool)
            with torch.no_grad():
                dist, value = net.policy(obs, mask), net.value(obs)
                action = dist.sample()
            obs_buf[step], mask_buf[step], action_buf[step] = obs, mask, action
            logprob_buf[step], value_buf[step], done_buf[step] = dist.log_prob(action), value, next_done
            next_obs, reward, terminated, truncated, _ = envs.step(action.numpy())
            reward_buf[step] = torch.as_tensor(reward, dtype=torch.float32)
            next_done = torch.as_tensor(terminated | truncated, dtype=torch.float32)
            returns_seen += reward[terminated].tolist()
            global_step += args.num_envs

        with torch.no_grad():  # generalized advantage estimation
            next_value = net.value(torch.as_tensor(next_obs["observation"]))
            advantages = torch.zeros_like(reward_buf)
            last = torch.zeros(args.num_envs)
            for t in reversed(range(args.num_steps)):
                not_done = 1.0 - (next_done if t == args.num_steps - 1 else done_buf[t + 1])
                following = next_value if t == args.num_steps - 1 else value_buf[t + 1]
                delta = reward_buf[t] + args.gamma * following * not_done - value_buf[t]
                last = delta + args.gamma * args.gae_lambda * not_done * last
                advantages[t] = last
            returns = advantages + value_buf

        b_obs, b_mask = obs_buf.reshape(batch_size, obs_size), mask_buf.reshape(batch_size, n_actions)
        b_action, b_logprob = action_buf.reshape(-1), logprob_buf.reshape(-1)
        b_adv, b_ret = advantages.reshape(-1), returns.reshape(-1)
        for _ in range(args.update_epochs):  # PPO update
            for idx in torch.randperm(batch_size).split(minibatch_size):
                dist = net.policy(b_obs[idx], b_mask[idx])
                ratio = (dist.log_prob(b_action[idx]) - b_logprob[idx]).exp()
                adv = (b_adv[idx] - b_adv[idx].mean()) / (b_adv[idx].std() + 1e-8)
                pg_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
                v_loss = 0.5 * ((net.value(b_obs[idx]) - b_ret[idx]) ** 2).mean()
                loss = pg_loss + args.vf_coef * v_loss - args.ent_coef * dist.entropy().mean()
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(net.parameters(), args.max_grad_norm)
                optimizer.step()

        if update % args.snapshot_every == 0:
            frozen.load_state_dict(net.state_dict())
        recent = returns_seen[-200:]
        log(
            f"update {update}/{updates}: {global_step} steps, "
            f"{global_step / (time.perf_counter() - start):.0f} steps/s, "
            f"mean final reward (last {len(recent)} games) {np.mean(recent) if recent else 0:+.2f}, "
            f"loss {loss.item():.3f}",
            flush=True,
        )
        if on_update is not None:
            on_update(global_step, net)
    envs.close()
    return net


def evaluate(net: Network, args: argparse.Namespace, opponent: str) -> tuple[int, int]:
    """(wins, games) of the greedy network in args.eval_games games against `opponent`
    ("heuristic" or "random"), one game in each slot of the compiled batched env."""
    envs = gymnasium.make_vec(
        ENV_ID, num_envs=args.eval_games, num_players=args.num_players, rules=args.rules, opponents=[opponent]
    )
    obs, _ = envs.reset(seed=args.seed)
    wins, running = 0, np.ones(args.eval_games, dtype=bool)  # a slot's first game only
    while running.any():
        with torch.no_grad():
            logits = net.actor(torch.as_tensor(obs["observation"]))
            actions = logits.masked_fill(~torch.as_tensor(obs["action_mask"], dtype=torch.bool), -1e9).argmax(1)
        obs, reward, terminated, truncated, _ = envs.step(actions.numpy())
        ended = running & (terminated | truncated)
        wins += int((reward[ended] > 0).sum())
        running &= ~ended
    envs.close()
    return wins, args.eval_games


def wilson(wins: int, games: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of a win rate."""
    p, n = wins / games, games
    centre, half = p + z * z / (2 * n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - half) / (1 + z * z / n), (centre + half) / (1 + z * z / n)


def save(net: Network, args: argparse.Namespace) -> None:
    """The weights in a safetensors file, with what the loader needs to rebuild the network
    in its metadata: the game it plays and its width (written whole or not at all)."""
    from safetensors.torch import save_file

    record = {"algorithm": "selfplay_ppo", "rules": args.rules, "players": args.num_players, "hidden": args.hidden}
    partial = f"{args.save}.partial"
    save_file(
        {k: v.contiguous() for k, v in net.state_dict().items()}, partial, {BENCH_NETWORK_KEY: json.dumps(record)}
    )
    os.replace(partial, args.save)


def main(argv=None) -> None:
    args = parse_args(argv)
    net = train_ppo(args)
    if args.save is not None:
        save(net, args)
        print(f"wrote {args.save}")
    for opponent in ("heuristic", "random"):
        wins, games = evaluate(net, args, opponent)
        low, high = wilson(wins, games)
        print(f"vs {opponent}: won {wins}/{games} = {wins / games:.1%} [{low:.1%}, {high:.1%}]")


if __name__ == "__main__":
    main()
