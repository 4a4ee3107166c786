"""A network trained by a sorry-bench baseline as an agent that plays tournaments in
lockstep batches (``acts_in_batches``: :meth:`sorry_env.training.evaluate.Table.play_lockstep`): one
forward for the pending turns of every game, the masked argmax of its scores (or, with
``sample=True``, a move drawn from the softmax of its scores: the self-play opponents of
sorry-bench's MaskablePPO)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from sorry_env.agents.base import Agent, Turn


class NetworkAgent(Agent):
    """`scores` maps float32[N, OBS_SIZE] observations (the env's, as :meth:`Turn.observation`
    builds them) to a torch tensor [N, n_actions] of action scores (logits or Q-values).
    ``sample=True`` draws each move from softmax(scores) with the agent's generator (Gumbel-max)
    instead of taking the argmax."""

    acts_in_batches = True

    def __init__(self, scores: Callable, name: str, sample: bool = False):
        self.scores = scores
        self.name = name
        self.sample = sample
        self.reset(None)

    def act_turns(self, turns: list[Turn]) -> np.ndarray:
        import torch

        if not turns:
            return np.zeros(0, dtype=np.int64)
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
