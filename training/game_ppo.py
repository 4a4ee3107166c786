"""Train a small masked policy network for any registered game other than the board game
(plain torch, one process), written as that game's policy file
(:mod:`sorry_env.agents.policy`):

    python -m sorry_env.training.game_ppo --game ID --players 2 --minutes 8 --out ID-2p.safetensors
    python -m sorry_env.training.game_ppo --config FILE.yaml   # the same settings from a file

(every setting, :data:`sorry_env.training.config.GAME_PPO`, is a flag and a config key;

the command behind each shipped policy of a game is in that game's docs page).

Method: PPO with Monte Carlo returns. Each update plays ``games`` games in lockstep over the
registry's functional API (:class:`sorry_env.games.Game`). In every game one seat is the
learner (the seat rotates) and the others are drawn from an opponent pool (``opponents``,
with the chances ``mix``): agents of the game by spec (default ``greedy`` and ``random``)
or ``self`` (the current policy, sampled). The learner samples its actions from the masked
policy; the only reward is the game's end (+1 win, -1 loss, 0 for a game truncated at the
game's turn limit), so every learner decision of a game gets that return. A value network
(the same MLP shape, one output) is the baseline. Then a few epochs of clipped PPO over
minibatches, with an entropy bonus.

Each update logs the learner's decisions per second (training steps/s: play and learning
together), its win rate in that update's games against each opponent kind, and the losses.
The policy file records the game and the player count, with the training settings, steps
and wall time in its metadata; ``sorry-eval --game ID PATH greedy`` plays it. sorry-bench
runs it as the algorithm ``game_ppo`` (:mod:`sorry_env.training.bench.game_ppo`).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable

import numpy as np
import torch
from torch import nn

from sorry_env import games
from sorry_env.agent import Agent, GameTurn
from sorry_env.agents import make_agent
from sorry_env.agents.policy import MLP, Actor, masked_logits, save_policy

from .config import GAME_PPO, SELF, parse_settings, settings_parser

RANDOM = "random"  # uniformly random legal play, drawn from the trainer's own generator


@torch.no_grad()
def sample_actions(actor, obs, masks, rng):
    """(actions, log-probabilities) sampled from the masked policy for a batch of rows."""
    logits = masked_logits(actor(torch.from_numpy(obs)), torch.from_numpy(masks))
    probs = torch.softmax(logits, dim=1).numpy().astype(np.float64)
    cumulative = probs.cumsum(axis=1)
    draws = rng.random((len(probs), 1)) * cumulative[:, -1:]
    actions = (cumulative < draws).sum(axis=1).clip(0, probs.shape[1] - 1)
    actions = np.where(masks[np.arange(len(actions)), actions] > 0, actions, probs.argmax(axis=1))
    return actions, np.log(probs[np.arange(len(actions)), actions])


def play_batch(actor: Actor, game: games.Game, cfg: dict, rng: np.random.Generator) -> tuple:
    """Play `cfg["games"]` games in lockstep. Returns the learner's decisions (obs, masks,
    actions, log-probs, returns) and per-game (opponent kind, learner reward)."""
    n_games, players, kinds_named = cfg["games"], cfg["players"], cfg["opponents"]
    mix = np.array(cfg["mix"], dtype=np.float64) / sum(cfg["mix"])
    states = [game.new_state(players, seed=int(rng.integers(2**32))) for _ in range(n_games)]
    learner = [g % players for g in range(n_games)]
    seat_of = [game.seats(states[g])[learner[g]] for g in range(n_games)]
    kinds = rng.choice(len(kinds_named), size=n_games, p=mix)
    opponents: dict[str, Agent] = {
        name: make_agent(name, seed=int(rng.integers(2**32)), allow_code=False, game=game)
        for name in kinds_named
        if name not in (SELF, RANDOM)
    }
    obs_rows, mask_rows, action_rows, logp_rows, game_of_row = [], [], [], [], []
    reward = np.zeros(n_games)
    running = list(range(n_games))
    obs = np.zeros((n_games, game.observation_size), dtype=np.float32)
    masks = np.zeros((n_games, game.num_actions), dtype=np.int8)
    max_turns = game.game_type.max_turns
    while running:
        policy_games = []  # the learner's turns and the "self" opponents' turns: one forward
        for g in running:
            seat = game.to_move(states[g])
            if seat == seat_of[g] or kinds_named[kinds[g]] == SELF:
                obs[g] = game.observation(states[g], seat)
                masks[g] = 0
                masks[g, game.legal_actions(states[g])] = 1
                policy_games.append(g)
        if policy_games:
            actions, logps = sample_actions(actor, obs[policy_games], masks[policy_games], rng)
        chosen = dict(zip(policy_games, actions)) if policy_games else {}
        for k, g in enumerate(policy_games):
            if game.to_move(states[g]) == seat_of[g]:
                obs_rows.append(obs[g].copy())
                mask_rows.append(masks[g].copy())
                action_rows.append(actions[k])
                logp_rows.append(logps[k])
                game_of_row.append(g)
        still = []
        for g in running:
            state = states[g]
            if g in chosen:
                action = int(chosen[g])
            else:
                legal = game.legal_actions(state)
                kind = kinds_named[kinds[g]]
                if kind == RANDOM:
                    action = int(legal[rng.integers(len(legal))])
                else:
                    action = int(opponents[kind].act(GameTurn.from_state(game, state, rng, legal)))
            states[g] = state = game.apply(state, action)
            winner = game.winner(state)
            if winner is not None:
                reward[g] = 1.0 if winner == seat_of[g] else -1.0
            elif game.turn(state) < max_turns:
                still.append(g)
        running = still
    returns = reward[np.array(game_of_row, dtype=np.int64)]
    batch = (
        np.array(obs_rows, dtype=np.float32).reshape(-1, game.observation_size),
        np.array(mask_rows, dtype=np.int8).reshape(-1, game.num_actions),
        np.array(action_rows, dtype=np.int64),
        np.array(logp_rows, dtype=np.float32),
        returns.astype(np.float32),
    )
    return batch, kinds, reward


def ppo_update(actor, critic, optimizer, batch, cfg: dict, rng: np.random.Generator) -> tuple:
    """Clipped PPO epochs over the batch; returns (policy loss, value loss, entropy) of the last minibatch."""
    obs, masks, actions, old_logp, returns = (torch.from_numpy(x) for x in batch)
    with torch.no_grad():  # advantages once per batch (a minibatch of one row has no spread)
        advantages = returns - critic(obs)[:, 0]
        advantages = (advantages - advantages.mean()) / (advantages.std(unbiased=False) + 1e-8)
    for _ in range(cfg["epochs"]):
        order = rng.permutation(len(actions))
        for start in range(0, len(order), cfg["minibatch"]):
            idx = torch.from_numpy(order[start : start + cfg["minibatch"]])
            values = critic(obs[idx])[:, 0]
            advantage = advantages[idx]
            logits = masked_logits(actor(obs[idx]), masks[idx])
            log_probs = torch.log_softmax(logits, dim=1)
            logp = log_probs.gather(1, actions[idx, None])[:, 0]
            ratio = torch.exp(logp - old_logp[idx])
            policy_loss = -torch.min(
                ratio * advantage, ratio.clamp(1 - cfg["clip"], 1 + cfg["clip"]) * advantage
            ).mean()
            probs = log_probs.exp()
            entropy = -(probs * log_probs.masked_fill(probs == 0, 0.0)).sum(dim=1).mean()
            value_loss = ((values - returns[idx]) ** 2).mean()
            loss = policy_loss + 0.5 * value_loss - cfg["entropy"] * entropy
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_([*actor.parameters(), *critic.parameters()], 0.5)
            optimizer.step()
    return policy_loss.item(), value_loss.item(), entropy.item()


def greedy(actor: Actor) -> Callable[[dict], int]:
    """The actor in memory as a function of the observation dict (an agent wherever the
    game's tournaments take one): its masked argmax, as its policy file plays."""

    @torch.no_grad()
    def act(obs: dict) -> int:
        mask = torch.from_numpy(obs["action_mask"][None])
        return int(masked_logits(actor(torch.from_numpy(obs["observation"][None])), mask)[0].argmax())

    return act


def train(
    cfg: dict,
    evaluate: Callable[[int, Callable], object] | None = None,
    evaluate_every: int | None = None,
    log: Callable[[str], None] | None = print,
) -> tuple[Actor, dict]:
    """Train a policy as `cfg` (:data:`sorry_env.training.config.GAME_PPO`, validated) says,
    until ``minutes`` of wall time or ``steps`` learner decisions, whichever comes first. The
    evaluation hook ``evaluate(steps, agent)`` gets the current policy in memory
    (:func:`greedy`) every `evaluate_every` learner steps and at the end. Returns (actor, the
    training record of its policy file)."""
    game = games.load_game(cfg["game"])
    minutes, steps = cfg["minutes"], cfg["steps"]
    torch.manual_seed(cfg["seed"])
    rng = np.random.default_rng(cfg["seed"])
    actor = Actor("mlp", list(cfg["hidden"]), "relu", game)
    critic = MLP([game.observation_size, *cfg["hidden"], 1], "relu")
    optimizer = torch.optim.Adam([*actor.parameters(), *critic.parameters()], lr=cfg["lr"])
    start = time.perf_counter()
    done = update = 0
    next_evaluation = evaluate_every or 0
    while time.perf_counter() - start < minutes * 60 and (steps is None or done < steps):
        batch, kinds, reward = play_batch(actor, game, cfg, rng)
        losses = ppo_update(actor, critic, optimizer, batch, cfg, rng)
        done += len(batch[2])
        update += 1
        elapsed = time.perf_counter() - start
        if log is not None:
            rates = " ".join(
                f"{name} {np.mean(reward[kinds == k] > 0):.2f}"
                for k, name in enumerate(cfg["opponents"])
                if (kinds == k).any()
            )
            log(
                f"update {update:4d}  steps {done:8d}  {done / elapsed:6.0f} steps/s  win rate vs {rates}  "
                f"policy {losses[0]:+.3f} value {losses[1]:.3f} entropy {losses[2]:.3f}"
            )
        if evaluate is not None and evaluate_every and next_evaluation <= done < (steps or np.inf):
            evaluate(done, greedy(actor))
            while next_evaluation <= done:
                next_evaluation += evaluate_every
    wall = time.perf_counter() - start
    if not all(torch.isfinite(p).all() for p in actor.parameters()):
        raise FloatingPointError("the policy's weights are no longer finite (lower the learning rate)")
    if evaluate is not None:
        evaluate(done, greedy(actor))
    training = {
        "config": {k: v for k, v in cfg.items() if k != "out"},
        "method": f"PPO, Monte Carlo returns, opponents {'/'.join(cfg['opponents'])}",
        "learner_steps": done,
        "updates": update,
        "wall_seconds": round(wall, 1),
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
