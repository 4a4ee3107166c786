"""Self-play for sorry-bench's single-agent learners (MaskablePPO, DQN): the learner plays one
seat of each game (drawn game by game) and every other seat is a frozen copy of it, which the
learner's trainer refreshes in place every ``self_play_snapshot_every`` learner steps (a
setting of each, ``SNAPSHOT_EVERY`` by default; ``selfplay_ppo`` likewise refreshes its copy
every few updates).

The games are the trainer's batched env (:class:`sorry_env.training.batched_env.BatchedSelfPlayEnv`)
with an opponent pool holding only the copy, an agent that acts in batches (one forward a
round for every game waiting on it). Its observations are cut to the env's observation (the
first ``OBS_SIZE`` entries of the policy input), the input these learners see against fixed
opponents (``VectorOpponentEnv``), so one network shape serves every task.
"""

from __future__ import annotations

from .tasks import SELF_PLAY, Task

# Learner steps between refreshes of the frozen copy (the native PPO baseline's snapshot interval).
SNAPSHOT_EVERY = 50_000


def task_env(task: Task, envs: int, seed: int, name: str, sample: bool = False) -> tuple:
    """(an SB3 VecEnv of `envs` games of `task`, seeded with `seed`; the frozen copy's agent
    or None) for a single-agent learner called `name`: the task's fixed opponents moving in
    the compiled loop (``VectorOpponentEnv``), or in a self-play task every other seat played
    by a frozen copy (a :class:`NetworkAgent` sampling its moves if `sample`, whose network the
    trainer sets before the first game)."""
    from sorry_env.training.vector_sb3 import SB3VecEnv
    from sorry_env.vector_opponents import VectorOpponentEnv

    from .network_agent import NetworkAgent

    if task.learner == SELF_PLAY:
        opponent = NetworkAgent(None, f"{name} (frozen copy)", sample=sample)
        return selfplay_env(task, envs, seed, opponent), opponent
    env = SB3VecEnv(VectorOpponentEnv(envs, task.players, opponents=list(task.opponents), rules=task.rules))
    env.seed(seed)
    return env, None


def selfplay_env(task: Task, envs: int, seed: int, opponent):
    """An SB3 VecEnv of `envs` games of `task` (seeded with `seed`) whose other seats are all
    played by the agent `opponent` (one that acts in batches)."""
    import numpy as np
    from stable_baselines3.common.vec_env.base_vec_env import VecEnvWrapper

    from sorry_env.board.observation import OBS_SIZE
    from sorry_env.board.rules import DEFAULT_MAX_TURNS
    from sorry_env.gym_space import flat_space
    from sorry_env.training.batched_env import BatchedSelfPlayEnv
    from sorry_env.training.opponents import OpponentPool

    class EnvObservations(VecEnvWrapper):
        """The batched env's policy inputs seen through the env's observation only."""

        venv: BatchedSelfPlayEnv

        def __init__(self, venv):
            # the env's own observation space, as the fixed-opponent learners see it, with its
            # game recorded (a model trained here plays again as an sb3 .zip spec)
            super().__init__(venv, observation_space=flat_space(task.rules, task.players, "observation"))

        def reset(self) -> np.ndarray:
            return self.venv.reset()[:, :OBS_SIZE]

        def step_wait(self):
            obs, rewards, dones, infos = self.venv.step_wait()
            for info in infos:
                if "terminal_observation" in info:
                    info["terminal_observation"] = info["terminal_observation"][:OBS_SIZE]
            return obs[:, :OBS_SIZE], rewards, dones, infos

        def action_masks(self) -> np.ndarray:
            return self.venv.action_masks()

    pool = OpponentPool({"snapshots": 1.0}, snapshot_window=1, seed=seed)
    pool.add_agent(opponent)
    cfg = {"envs": envs, "game": {"rules": task.rules, "num_players": task.players, "max_turns": DEFAULT_MAX_TURNS}}
    env = EnvObservations(BatchedSelfPlayEnv(cfg, pool, seed=seed))
    env.seed(seed)
    return env
