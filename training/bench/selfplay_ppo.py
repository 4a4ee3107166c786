"""Masked PPO for Sorry! in one file of plain torch (CleanRL style), read top to bottom.

    python -m sorry_env.training.bench.selfplay_ppo --total-timesteps 500000
    sorry-bench run selfplay_ppo 2p-selfplay --seed 0      # the same loop as a benchmark baseline

The learner plays a random seat of `sorry_env/Sorry-v1` (Gymnasium). Its opponents are a
frozen copy of the learner (self-play: a function from the observation dict to an action,
refreshed every `--snapshot-every` updates) or named agents (`--opponents heuristic`).
Illegal actions get a logit of -1e9, so they are never sampled. Steps per second are logged
every update; at the end the greedy policy plays a tournament against the heuristic and
random agents. `examples/selfplay_ppo.py` runs this file.
"""

from __future__ import annotations

import argparse
import copy
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from sorry_env import files
from sorry_env.rules import DEFAULT_PRESET

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
    p.add_argument(
        "--save",
        metavar="FILE",
        help="write the trained network here (.safetensors); it plays again as the agent spec "
        "sorry_env.training.bench.selfplay_ppo:agent:path=FILE",
    )
    args = p.parse_args(argv)
    for name in ("total_timesteps", "num_envs", "num_steps", "num_minibatches", "snapshot_every", "eval_games"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    return args


MAX_HIDDEN = 8192  # the widest network a saved file may ask for (a crafted header must not allocate gigabytes)


def make_network(obs_size: int, n_actions: int, hidden: int):
    import torch
    from torch import nn
    from torch.distributions import Categorical

    class Network(nn.Module):
        def __init__(self):
            super().__init__()
            self.actor = nn.Sequential(
                nn.Linear(obs_size, hidden),
                nn.Tanh(),
                nn.Linear(hidden, hidden),
                nn.Tanh(),
                nn.Linear(hidden, n_actions),
            )
            self.critic = nn.Sequential(
                nn.Linear(obs_size, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(), nn.Linear(hidden, 1)
            )

        def value(self, obs: torch.Tensor) -> torch.Tensor:
            return self.critic(obs).squeeze(-1)

        def policy(self, obs: torch.Tensor, mask: torch.Tensor) -> Categorical:
            return Categorical(logits=self.actor(obs).masked_fill(~mask, -1e9))

    return Network()


def as_player(net, greedy: bool) -> Callable[[dict], int]:
    """The network as an opponent function: observation dict -> action."""
    import torch

    def play(observation: dict) -> int:
        with torch.no_grad():
            obs = torch.as_tensor(observation["observation"])[None]
            mask = torch.as_tensor(observation["action_mask"], dtype=torch.bool)[None]
            dist = net.policy(obs, mask)
            return int(dist.probs.argmax() if greedy else dist.sample())

    return play


def train_ppo(args: argparse.Namespace, on_update: Callable[[int, object], None] | None = None, log: Callable = print):
    """Train the network for args.total_timesteps learner steps; `on_update(steps, net)` runs
    before the first rollout and after every update. Returns the network."""
    import gymnasium
    import torch
    from torch import nn

    import sorry_env  # noqa: F401  (registers sorry_env/Sorry-v1)

    torch.manual_seed(args.seed)
    torch.set_num_threads(1)  # small networks on few cores: one thread is fastest
    batch_size = args.num_envs * args.num_steps
    minibatch_size = max(1, batch_size // args.num_minibatches)
    updates = max(1, args.total_timesteps // batch_size)
    env_kwargs = {"num_players": args.num_players, "rules": args.rules}

    probe = gymnasium.make("sorry_env/Sorry-v1", opponents="random", **env_kwargs)
    obs_size, n_actions = probe.observation_space["observation"].shape[0], probe.action_space.n
    probe.close()
    net = make_network(obs_size, n_actions, args.hidden)
    frozen = copy.deepcopy(net)  # self-play opponents: refreshed in place, so every env sees the new copy
    opponents = list(args.opponents) if args.opponents else [as_player(frozen, greedy=False)]
    optimizer = torch.optim.Adam(net.parameters(), lr=args.learning_rate, eps=1e-5)
    envs = gymnasium.vector.SyncVectorEnv(
        [lambda: gymnasium.make("sorry_env/Sorry-v1", opponents=opponents, **env_kwargs)] * args.num_envs,
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


def agent(path: str = "", seed: int | None = None):
    """A network saved by this file (``--save``, or a sorry-bench run's
    ``network.safetensors``) as an agent: ``sorry_env.training.bench.selfplay_ppo:agent:path=FILE``
    wherever an agent spec goes. It plays its greedy (argmax) move."""
    from sorry_env.observation import OBS_SIZE

    from .network_agent import SavedNetworkAgent, load_network

    def build(n_actions: int, record: dict):
        hidden = record.get("hidden")  # the width it was trained with, checked before anything is allocated
        if type(hidden) is not int or not 1 <= hidden <= MAX_HIDDEN:
            raise ValueError(f"{path}: its metadata gives no network width from 1 to {MAX_HIDDEN} (hidden)")
        return make_network(OBS_SIZE, n_actions, hidden)

    net, game = load_network(build, path, "selfplay_ppo")
    return SavedNetworkAgent(lambda obs: net.actor(obs), "selfplay_ppo", game)


def main(argv=None) -> None:
    from sorry_env import agents
    from sorry_env.agents.arena.tournament import run_tournament
    from sorry_env.rules import get_rules

    from .network_agent import save_network

    args = parse_args(argv)
    if args.save is not None:  # checked before training: a trained network must not be lost to a bad path
        if not args.save.endswith(".safetensors"):
            raise SystemExit(f"--save {args.save}: the network file's name must end in .safetensors")
        try:
            files.make_writable_dir(Path(args.save).parent)
        except ValueError as error:
            raise SystemExit(f"--save {args.save}: {error}") from None
    net = train_ppo(args)
    if args.save is not None:
        save_network(net, args.save, "selfplay_ppo", get_rules(args.rules).name, args.num_players, hidden=args.hidden)
        print(f"wrote {args.save}")
    learner = agents.CallableAgent(as_player(net, greedy=True), name="selfplay_ppo")
    for opponent in ("heuristic", "random"):
        lineup = [learner, *[opponent] * (args.num_players - 1)]
        results = run_tournament(lineup, games=args.eval_games, seed=args.seed, workers=1, rules=args.rules)
        row = results["agents"][0]
        print(
            f"vs {opponent}: won {row['wins']}/{row['games']} = {row['win_rate']:.1%} "
            f"[{row['ci_low']:.1%}, {row['ci_high']:.1%}]"
        )


# ---- the same loop as a sorry-bench baseline ------------------------------------------------


def train(task, seed: int, budget: int, run_dir: Path, curve, curve_every: int):
    """sorry-bench's entry: self-play tasks against the frozen copy, others against the
    task's opponents; the greedy network evaluated every `curve_every` learner steps."""
    from .network_agent import NetworkAgent, save_network
    from .tasks import SELF_PLAY

    args = argparse.Namespace(
        **SETTINGS,
        total_timesteps=budget,
        num_players=task.players,
        rules=task.rules,
        opponents=None if task.learner == SELF_PLAY else list(task.opponents),
        seed=seed,
    )
    last = [-1]

    def agent_of(net) -> NetworkAgent:
        return NetworkAgent(lambda obs: net.actor(obs), "selfplay_ppo")

    def on_update(steps: int, net) -> None:
        if last[0] < 0 or steps - last[0] >= curve_every:
            curve.evaluate(steps, agent_of(net))
            last[0] = steps

    def quiet(*_args, **_kwargs) -> None:
        pass

    net = train_ppo(args, on_update=on_update, log=quiet)
    steps = max(1, budget // (args.num_envs * args.num_steps)) * args.num_envs * args.num_steps
    if last[0] != steps:
        curve.evaluate(steps, agent_of(net))
    save_network(net, run_dir / "network.safetensors", "selfplay_ppo", task.rules, task.players, hidden=args.hidden)
    return agent_of(net)


if __name__ == "__main__":
    main()
