"""Train a small masked policy network for any registered game other than the board game
(sorry-train's PPO, one process), written as that game's policy file
(:mod:`sorry_env.agents.policy`):

    python -m sorry_env.training.game_ppo --game ID --players 2 --minutes 8 --out ID-2p.safetensors
    python -m sorry_env.training.game_ppo --config FILE.yaml   # the same settings from a file

(every setting, :data:`sorry_env.training.config.GAME_PPO`, is a flag and a config key;

the command behind each shipped policy of a game is in that game's docs page).

Method: sorry-train's PPO (:func:`sorry_env.training.train.make_model`: MaskablePPO with the
masked actor and a value MLP of the same shape, :mod:`sorry_env.training.sb3_policy`) over
sorry-train's rollout source for a game without a compiled batch step,
:class:`sorry_env.training.batched_env.SelfPlayEnv`: ``games`` games in lockstep over the
registry's functional API (:class:`sorry_env.games.Game`), each update learning from
:data:`ROLLOUT_STEPS` learner decisions of every game. In every game the learner takes a
random seat and each other seat draws its player from the opponent pool (``opponents``, with
the chances ``mix``): agents of the game by spec (default ``greedy`` and ``random``) or
``self`` (the current policy, sampled). The learner samples its actions from the masked
policy; the only reward is the game's end (+1 win, -1 loss, 0 for a game truncated at the
game's turn limit), and returns are not discounted (gamma and GAE lambda 1: Monte Carlo
returns, bootstrapped from the value where an update cuts a game). Then a few epochs of
clipped PPO over minibatches, with an entropy bonus.

Each update logs the learner's decisions per second (training steps/s: play and learning
together), its win rate in the games that ended during that update's rollout against each
opponent kind, and the losses. The policy file records the game and the player count, with
the training settings, steps and wall time in its metadata; ``sorry-eval --game ID PATH
greedy`` plays it. sorry-bench runs it as the algorithm ``game_ppo``
(:mod:`sorry_env.training.bench.game_ppo`).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import cast

import numpy as np
import torch
from stable_baselines3.common.callbacks import BaseCallback

from sorry_env import games
from sorry_env.agents.policy import Actor, masked_logits, save_policy

from .batched_env import LearnerPolicy, SelfPlayEnv
from .config import GAME_PPO, SELF, parse_settings, settings_parser
from .opponents import SNAPSHOTS, OpponentPool
from .sb3_policy import ActorCritic
from .train import make_model

# Learner decisions of every game per update: about as many as a learner makes in one whole game
# of the game its defaults were tuned for (the game of the shipped policies it trained).
ROLLOUT_STEPS = 12


def greedy(actor: Actor) -> Callable[[dict], int]:
    """The actor in memory as a function of the observation dict (an agent wherever the
    game's tournaments take one): its masked argmax, as its policy file plays."""

    @torch.no_grad()
    def act(obs: dict) -> int:
        mask = torch.from_numpy(obs["action_mask"][None])
        return int(masked_logits(actor(torch.from_numpy(obs["observation"][None])), mask)[0].argmax())

    return act


class UpdateLog(BaseCallback):
    """game_ppo's schedule around MaskablePPO's updates: after each one, the log line and (when
    due) the evaluation hook; the wall-clock budget ends training before the next rollout."""

    def __init__(self, cfg: dict, actor: Actor, evaluate, evaluate_every: int | None, log):
        super().__init__()
        self.cfg, self.actor, self.evaluate, self.evaluate_every, self.log = cfg, actor, evaluate, evaluate_every, log
        self.next_evaluation = evaluate_every or 0
        self.updates = 0
        self.results: list[tuple[str, bool]] = []  # (opponent kind, learner won) of the games ended
        self.start = time.perf_counter()

    def _on_rollout_start(self) -> None:
        self.report()
        self.results = []
        self.out_of_time = self.updates > 0 and time.perf_counter() - self.start >= self.cfg["minutes"] * 60

    def _on_step(self) -> bool:
        for info in self.locals["infos"]:
            self.results += [(kind, info["learner_won"]) for kind in info.get("opponents", [])]
        return not self.out_of_time

    def _on_training_end(self) -> None:
        self.report()

    def report(self) -> None:
        """The log line of an update not reported yet, then the evaluation hook when it is due."""
        updates = self.model._n_updates // self.cfg["epochs"]
        if updates == self.updates:
            return
        self.updates, done = updates, self.model.num_timesteps
        if self.log is not None:
            losses = self.model.logger.name_to_value
            rates = " ".join(
                f"{name} {np.mean([won for kind, won in self.results if kind == name]):.2f}"
                for name in dict.fromkeys(self.cfg["opponents"])
                if any(kind == name for kind, _ in self.results)
            )
            self.log(
                f"update {updates:4d}  steps {done:8d}  {done / (time.perf_counter() - self.start):6.0f} steps/s  "
                f"win rate vs {rates}  policy {losses['train/policy_gradient_loss']:+.3f} "
                f"value {losses['train/value_loss']:.3f} entropy {-losses['train/entropy_loss']:.3f}"
            )
        if self.evaluate and self.evaluate_every and self.next_evaluation <= done < (self.cfg["steps"] or np.inf):
            self.evaluate(done, greedy(self.actor))
            while self.next_evaluation <= done:
                self.next_evaluation += self.evaluate_every


def train(
    cfg: dict,
    evaluate: Callable[[int, Callable], object] | None = None,
    evaluate_every: int | None = None,
    log: Callable[[str], None] | None = print,
) -> tuple[Actor, dict]:
    """Train a policy as `cfg` (:data:`sorry_env.training.config.GAME_PPO`, validated) says,
    until ``minutes`` of wall time or ``steps`` learner decisions, whichever comes first (both
    checked between updates). The evaluation hook ``evaluate(steps, agent)`` gets the current
    policy in memory (:func:`greedy`) every `evaluate_every` learner steps and at the end.
    Returns (actor, the training record of its policy file)."""
    game = games.load_game(cfg["game"])
    kinds = [SNAPSHOTS if kind == SELF else kind for kind in cfg["opponents"]]  # "self": the pool's one snapshot
    mix = {kind: sum(w for k, w in zip(kinds, cfg["mix"]) if k == kind) for kind in kinds}
    pool = OpponentPool(mix, snapshot_window=1, game=game)
    env = SelfPlayEnv(game, cfg["players"], game.game_type.max_turns, cfg["games"], pool, cfg["seed"])
    rollout = cfg["games"] * ROLLOUT_STEPS
    ppo = {"learning_rate": cfg["lr"], "learning_rate_final": None, "n_steps": ROLLOUT_STEPS, "n_epochs": cfg["epochs"],
           "batch_size": max(2, min(cfg["minibatch"], rollout)), "clip_range": cfg["clip"], "ent_coef": cfg["entropy"],
           "gamma": 1.0, "gae_lambda": 1.0}  # fmt: skip
    network = {"kind": "mlp", "hidden": list(cfg["hidden"]), "value_hidden": list(cfg["hidden"]), "activation": "relu"}
    model = make_model({"network": network, "game": {"rules": game}, "ppo": ppo, "seed": cfg["seed"]}, env, None)
    actor = cast(ActorCritic, model.policy.mlp_extractor).actor  # typed as sb3's MlpExtractor
    pool.add_agent(LearnerPolicy(actor))  # "self": the current policy, sampled
    schedule = UpdateLog(cfg, actor, evaluate, evaluate_every, log)
    model.learn(cfg["steps"] or 2**62, callback=schedule)
    if not all(torch.isfinite(p).all() for p in actor.parameters()):
        raise FloatingPointError("the policy's weights are no longer finite (lower the learning rate)")
    if evaluate is not None:
        evaluate(model.num_timesteps, greedy(actor))
    training = {
        "config": {k: v for k, v in cfg.items() if k != "out"},
        "method": f"PPO, Monte Carlo returns, opponents {'/'.join(cfg['opponents'])}",
        "learner_steps": int(model.num_timesteps),
        "updates": schedule.updates,
        "wall_seconds": round(time.perf_counter() - schedule.start, 1),
    }
    return actor, training


def save(path: str | os.PathLike, cfg: dict, actor: Actor, training: dict) -> None:
    """Write the trained actor as its game's policy file, named after the file (the one call
    of the policy format's writer)."""
    save_policy(
        path,
        actor,
        rules=games.load_game(cfg["game"]),
        num_players=cfg["players"],
        network={"kind": "mlp", "hidden": list(cfg["hidden"]), "activation": "relu"},
        name=os.path.splitext(os.path.basename(str(path)))[0],
        training=training,
    )


def parse_args(argv: list[str] | None) -> dict:
    """The validated settings of the command line; argparse's error (exit 2) for a bad one."""
    others = [kind.id for kind in games.builtin_game_types() if not kind.batched_step]
    parser = settings_parser(GAME_PPO, __doc__.split("\n\n")[0], prog="python -m sorry_env.training.game_ppo")
    parser.epilog = f"--game: a registered game without a batched step ({', '.join(others)}); --out is required"
    try:
        cfg, _ = parse_settings(parser, GAME_PPO, argv)
        out = cfg["out"]
        if out is None or not out.endswith(".safetensors"):
            raise ValueError(f"--out {out}: a policy file ending in .safetensors is required")
        out_dir = os.path.dirname(os.path.abspath(out))
        if not os.path.isdir(out_dir) or not os.access(out_dir, os.W_OK):
            raise ValueError(f"--out {out}: {out_dir} is not a writable directory")
    except (OSError, ValueError) as error:
        parser.error(str(error))
    return cfg


def main(argv: list[str] | None = None) -> None:
    cfg = parse_args(argv)
    torch.set_num_threads(1)
    try:
        actor, training = train(cfg, log=lambda line: print(line, flush=True))
    except FloatingPointError as error:
        sys.exit(f"game_ppo: {error}; nothing written")
    save(cfg["out"], cfg, actor, training)
    steps, wall = training["learner_steps"], max(training["wall_seconds"], 1e-9)
    print(f"wrote {cfg['out']}: {steps} learner steps in {wall:.0f} s ({steps / wall:.0f} steps/s)")


if __name__ == "__main__":
    main(sys.argv[1:])
