"""Masked PPO self-play for Sorry! in one file of plain torch (CleanRL style).

    python examples/selfplay_ppo.py --total-timesteps 500000

The learner plays a random seat of `sorry_env/Sorry-v1`; every other seat is a frozen copy
of the learner (a function from the observation dict to an action, refreshed every
`--snapshot-every` updates). Illegal actions get a logit of -1e9, so they are never sampled.
Steps per second are logged every update; at the end the greedy policy plays a tournament
against the heuristic and random agents (`sorry_env.agents.arena.tournament.run_tournament`, which takes
Agent objects as well as specs).
"""

import argparse
import copy
import time

import gymnasium
import numpy as np
import torch
from torch import nn
from torch.distributions import Categorical

import sorry_env  # noqa: F401  (registers sorry_env/Sorry-v1)
from sorry_env import agents
from sorry_env.agents.arena.tournament import run_tournament


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--total-timesteps", type=int, default=500_000)
    p.add_argument("--num-envs", type=int, default=8)
    p.add_argument("--num-steps", type=int, default=256, help="steps per env per rollout")
    p.add_argument("--num-players", type=int, default=2)
    p.add_argument("--learning-rate", type=float, default=3e-4)
    p.add_argument("--gamma", type=float, default=0.995)
    p.add_argument("--gae-lambda", type=float, default=0.95)
    p.add_argument("--update-epochs", type=int, default=4)
    p.add_argument("--num-minibatches", type=int, default=4)
    p.add_argument("--clip-coef", type=float, default=0.2)
    p.add_argument("--ent-coef", type=float, default=0.01)
    p.add_argument("--vf-coef", type=float, default=0.5)
    p.add_argument("--max-grad-norm", type=float, default=0.5)
    p.add_argument("--snapshot-every", type=int, default=5, help="updates between refreshes of the opponents' copy")
    p.add_argument("--eval-games", type=int, default=400, help="games against each of heuristic and random")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args(argv)


class Network(nn.Module):
    def __init__(self, obs_size: int, n_actions: int, hidden: int = 256):
        super().__init__()
        self.actor = nn.Sequential(
            nn.Linear(obs_size, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(), nn.Linear(hidden, n_actions)
        )
        self.critic = nn.Sequential(
            nn.Linear(obs_size, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(), nn.Linear(hidden, 1)
        )

    def value(self, obs):
        return self.critic(obs).squeeze(-1)

    def policy(self, obs, mask):
        return Categorical(logits=self.actor(obs).masked_fill(~mask, -1e9))


def as_player(net: Network, greedy: bool):
    """The network as an opponent function: observation dict -> action."""

    def play(observation: dict) -> int:
        with torch.no_grad():
            obs = torch.as_tensor(observation["observation"])[None]
            mask = torch.as_tensor(observation["action_mask"], dtype=torch.bool)[None]
            dist = net.policy(obs, mask)
            return int(dist.probs.argmax() if greedy else dist.sample())

    return play


def main(argv=None) -> None:
    args = parse_args(argv)
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)  # small networks on 2 cores: one thread is fastest
    batch_size = args.num_envs * args.num_steps
    minibatch_size = batch_size // args.num_minibatches
    updates = max(1, args.total_timesteps // batch_size)

    probe = gymnasium.make("sorry_env/Sorry-v1", num_players=args.num_players, opponents="random")
    obs_size, n_actions = probe.observation_space["observation"].shape[0], probe.action_space.n
    net = Network(obs_size, n_actions)
    frozen = copy.deepcopy(net)  # the opponents: refreshed in place, so every env sees the new copy
    optimizer = torch.optim.Adam(net.parameters(), lr=args.learning_rate, eps=1e-5)
    envs = gymnasium.vector.SyncVectorEnv(
        [
            lambda: gymnasium.make(
                "sorry_env/Sorry-v1", num_players=args.num_players, opponents=[as_player(frozen, greedy=False)]
            )
        ]
        * args.num_envs,
        autoreset_mode=gymnasium.vector.AutoresetMode.SAME_STEP,
    )

    obs_buf = torch.zeros(args.num_steps, args.num_envs, obs_size)
    mask_buf = torch.zeros(args.num_steps, args.num_envs, n_actions, dtype=torch.bool)
    action_buf = torch.zeros(args.num_steps, args.num_envs, dtype=torch.long)
    logprob_buf, reward_buf, done_buf, value_buf = (torch.zeros(args.num_steps, args.num_envs) for _ in range(4))

    next_obs, _ = envs.reset(seed=args.seed)
    next_done = torch.zeros(args.num_envs)
    returns_seen, start, global_step = [], time.perf_counter(), 0
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
        print(
            f"update {update}/{updates}: {global_step} steps, "
            f"{global_step / (time.perf_counter() - start):.0f} steps/s, "
            f"mean final reward vs its copy (last {len(recent)} games) {np.mean(recent) if recent else 0:+.2f}, "
            f"loss {loss.item():.3f}",
            flush=True,
        )
    envs.close()

    learner = agents.CallableAgent(as_player(net, greedy=True), name="selfplay_ppo")
    for opponent in ("heuristic", "random"):
        results = run_tournament(
            [learner, *[opponent] * (args.num_players - 1)], games=args.eval_games, seed=args.seed, workers=1
        )
        row = results["agents"][0]
        print(
            f"vs {opponent}: won {row['wins']}/{row['games']} = {row['win_rate']:.1%} "
            f"[{row['ci_low']:.1%}, {row['ci_high']:.1%}]"
        )


if __name__ == "__main__":
    main()
