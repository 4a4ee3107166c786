"""Warm start before self-play: behaviour cloning of a scripted teacher.

PPO from a random policy spends millions of steps rediscovering what the heuristic agent
already knows (bump the leader, use slides, get into safety). Cloning it first starts PPO
near the heuristic's strength; PPO then only has to find where the heuristic is wrong.

The teacher plays the learner's seat in the Gymnasium env against the configured opponent
mix. The policy head learns the teacher's moves (masked cross-entropy) and the value head
learns the discounted outcome of the teacher's games, so PPO's first advantages are not
noise. Data is generated and consumed in chunks to bound memory.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, SupportsFloat, cast

import numpy as np
import torch
from torch.nn import functional as F

from sorry_env.agents import Agent, make_agent

from .opponents import OpponentPool

if TYPE_CHECKING:
    from sb3_contrib import MaskablePPO

    from sorry_env.gym_env import PolicyInputWrapper


def teacher_demonstrations(
    env: PolicyInputWrapper, teacher: Agent, samples: int, gamma: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(observations, masks, actions, returns) of at least `samples` teacher moves; returns
    are the learner's outcome discounted by gamma per learner move to the game's end."""
    actions: list[int]
    returns: list[float]
    obs_rows, mask_rows, actions, returns = [], [], [], []
    while len(actions) < samples:
        obs, _ = env.reset()
        game_start = len(actions)
        reward: SupportsFloat
        done, reward = False, 0.0
        while not done:
            mask = env.action_masks()
            action = teacher.act(env.core.turn())
            obs_rows.append(obs)
            mask_rows.append(mask)
            actions.append(action)
            obs, reward, terminated, truncated, _ = env.step(action)
            done = terminated or truncated
        moves = len(actions) - game_start
        returns.extend(float(reward) * gamma ** np.arange(moves - 1, -1, -1))
    return (np.array(obs_rows), np.array(mask_rows), np.array(actions), np.array(returns, dtype=np.float32))


def pretrain(model: MaskablePPO, cfg: dict, log: Callable[[str], object] = print) -> dict:
    """Clone cfg["imitation"]["teacher"] into the model's policy and value heads."""
    im = cfg["imitation"]
    from .learner_env import make_env  # imports sb3 and the Gymnasium env: only when imitating

    env = make_env(cfg, OpponentPool(im["mix"]).sample)
    env.reset(seed=cfg["seed"] + 2_000_000)
    teacher = make_agent(im["teacher"], seed=cfg["seed"])
    policy = model.policy
    optimizer = torch.optim.Adam(policy.parameters(), lr=im["learning_rate"])
    policy.set_training_mode(True)
    seen, stats = 0, {}
    while seen < im["samples"]:
        obs, masks, actions, returns = teacher_demonstrations(env, teacher, im["chunk"], model.gamma)
        seen += len(actions)
        for _ in range(im["epochs"]):
            order = np.random.default_rng(seen).permutation(len(actions))
            correct, losses = 0, []
            for start in range(0, len(order), im["batch_size"]):
                idx = order[start : start + im["batch_size"]]
                obs_t, act_t = torch.as_tensor(obs[idx]), torch.as_tensor(actions[idx])
                dist = policy.get_distribution(obs_t, action_masks=masks[idx])
                values = policy.predict_values(obs_t).flatten()
                loss = -dist.log_prob(act_t).mean() + cfg["ppo"]["vf_coef"] * F.mse_loss(
                    values, torch.as_tensor(returns[idx])
                )
                optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(policy.parameters(), cfg["ppo"]["max_grad_norm"])
                optimizer.step()
                losses.append(loss.item())
                categorical = cast(torch.distributions.Categorical, dist.distribution)  # Discrete actions
                correct += int((categorical.logits.argmax(1) == act_t).sum())
        stats = {"samples": seen, "loss": float(np.mean(losses)), "agreement": correct / len(actions)}
        log(
            f"imitation of {im['teacher']}: {seen} samples, loss {stats['loss']:.3f}, "
            f"agreement {stats['agreement']:.1%} (last epoch, training data)"
        )
    policy.set_training_mode(False)
    return stats
