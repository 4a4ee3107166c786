"""sb3-contrib MaskablePPO (its own ``MlpPolicy``) on the batched env: ``VectorOpponentEnv``
(the task's opponents moving inside the compiled loop) through :class:`sorry_env.training.vector_sb3.SB3VecEnv`,
or in a self-play task against a frozen copy of its policy (moves sampled from it) refreshed
every ``self_play_snapshot_every`` learner steps (:mod:`sorry_env.training.bench.selfplay_env`).
The observation is the env's (``sorry_env.board.observation``), the same vector a
:class:`agents.Turn` gives (:meth:`agents.Turn.observation`), so the trained policy plays
tournaments as a batched network agent in this process."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from .selfplay_env import SNAPSHOT_EVERY
from .tasks import Task

# sb3-contrib's defaults except the rollout shape (64 games x 64 steps) and gamma (games are
# long: about 60 learner moves in 2-player games).
SETTINGS: dict[str, Any] = {
    "envs": 64,
    "n_steps": 64,
    "batch_size": 512,
    "gamma": 0.995,
    "policy": "MlpPolicy (64, 64) tanh",
    "self_play_snapshot_every": SNAPSHOT_EVERY,
}


def actor_logits(policy):
    """The MlpPolicy's action logits as a function of a batch of observations."""

    def logits(obs):
        return policy.action_net(policy.mlp_extractor.forward_actor(policy.extract_features(obs)))

    return logits


def train(task: Task, seed: int, budget: int, run_dir: Path, curve, curve_every: int):
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback

    from .network_agent import NetworkAgent
    from .selfplay_env import task_env

    torch.set_num_threads(1)
    frozen = None  # self-play: the opponents' copy of the policy
    # The copy's network is set once the model exists (MaskablePPO needs the env first; no game
    # starts before learn()).
    env, opponent = task_env(task, SETTINGS["envs"], seed, "maskable_ppo", sample=True)
    model = MaskablePPO(
        "MlpPolicy",
        env,
        n_steps=SETTINGS["n_steps"],
        batch_size=SETTINGS["batch_size"],
        gamma=SETTINGS["gamma"],
        seed=seed,
        device="cpu",
        verbose=0,
    )
    env.seed(seed)  # MaskablePPO(seed=...) reseeded the env
    agent = NetworkAgent(actor_logits(model.policy), "maskable_ppo")  # its masked argmax, in lockstep batches
    if opponent is not None:
        frozen = copy.deepcopy(model.policy).requires_grad_(False)
        opponent.scores = actor_logits(frozen)

    class Evaluations(BaseCallback):
        refreshed = 0

        def _on_rollout_start(self) -> None:
            curve.check(self.num_timesteps, agent, curve_every)
            if frozen is not None and self.num_timesteps - self.refreshed >= SETTINGS["self_play_snapshot_every"]:
                frozen.load_state_dict(model.policy.state_dict())
                self.refreshed = self.num_timesteps

        def _on_step(self) -> bool:
            return True

    model.learn(budget, callback=Evaluations())
    curve.finish(model.num_timesteps, agent)
    model.save(run_dir / "model.zip")  # plays again as an sb3 spec (its space records the game)
    return agent
