"""Train a small masked policy network for Sorry! Express (plain torch, one process).

    PYTHONPATH=. python training/express_train.py --players 2 --minutes 8 \
        --out checkpoints/express-2p.safetensors

Method: PPO with Monte Carlo returns. Each update plays ``--games`` games in lockstep with
the compiled Express engine. In every game one seat is the learner (the seat rotates) and
the others are drawn from an opponent pool: ``greedy``, ``random``, or ``self`` (the
current policy, sampled). The learner samples its actions from the masked policy; the
only reward is the game's end (+1 win, -1 loss, 0 for a game truncated at the turn limit),
so every learner decision of a game gets that return. A value network (the same MLP shape,
one output) is the baseline. Then a few epochs of clipped PPO over minibatches, with an
entropy bonus.

Each update logs the learner's decisions per second (training steps/s: play and learning
together), its win rate in that update's games against each opponent kind, and the
losses. The policy is written as an Express policy file (:mod:`sorry_env.agents.express_policy`,
recording the game and the player count), with the training settings, steps and wall
time in its metadata; ``sorry-eval --game express PATH greedy`` plays it.
"""

import argparse
import os
import sys
import time

import numpy as np
import torch
from torch import nn

from sorry_env.agents.express import ExpressGreedyAgent, ExpressTurn
from sorry_env.agents.express_policy import ExpressActor, save_express_policy
from sorry_env.agents.policy import MLP, masked_logits
from sorry_env.express import engine as E
from sorry_env.express import game
from sorry_env.express.game import DEFAULT_MAX_TURNS

OPPONENTS = ("greedy", "random", "self")


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, choices=(2, 3, 4), default=2)
    parser.add_argument("--minutes", type=float, default=8.0, help="wall-clock budget of the training")
    parser.add_argument("--games", type=int, default=256, help="games per update")
    parser.add_argument("--hidden", default="128,128", help="hidden layer widths")
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--epochs", type=int, default=4, help="PPO epochs per update")
    parser.add_argument("--minibatch", type=int, default=512)
    parser.add_argument("--clip", type=float, default=0.2)
    parser.add_argument("--entropy", type=float, default=0.01)
    parser.add_argument(
        "--mix", default="0.5,0.2,0.3", help="chances of the opponent kinds greedy,random,self (one per seat)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="checkpoints/express-2p.safetensors")
    args = parser.parse_args(argv)
    try:
        args.hidden = [int(w) for w in args.hidden.split(",")]
        args.mix = np.array([float(p) for p in args.mix.split(",")])
    except ValueError:
        parser.error("--hidden and --mix are comma-separated numbers")
    if any(w < 1 for w in args.hidden):
        parser.error(f"--hidden widths must be positive, got {args.hidden}")
    if len(args.mix) != len(OPPONENTS) or (args.mix < 0).any() or args.mix.sum() <= 0:
        parser.error(f"--mix needs {len(OPPONENTS)} non-negative chances ({','.join(OPPONENTS)})")
    for name in ("minutes", "games", "lr", "epochs", "minibatch"):
        if getattr(args, name) <= 0:
            parser.error(f"--{name} must be positive")
    out_dir = os.path.dirname(os.path.abspath(args.out))
    if not os.path.isdir(out_dir) or not os.access(out_dir, os.W_OK):
        parser.error(f"--out {args.out}: {out_dir} is not a writable directory")
    args.mix = args.mix / args.mix.sum()
    return args


def observe(state, seat, obs_row, mask_row):
    E.observe(state, seat, obs_row)
    E.legal_mask(state, mask_row)


@torch.no_grad()
def sample_actions(actor, obs, masks, rng):
    """(actions, log-probabilities) sampled from the masked policy for a batch of rows."""
    logits = masked_logits(actor(torch.from_numpy(obs)), torch.from_numpy(masks))
    probs = torch.softmax(logits, dim=1).numpy().astype(np.float64)
    cumulative = probs.cumsum(axis=1)
    draws = rng.random((len(probs), 1)) * cumulative[:, -1:]
    actions = (cumulative < draws).sum(axis=1).clip(0, E.N_ACTIONS - 1)
    actions = np.where(masks[np.arange(len(actions)), actions] > 0, actions, probs.argmax(axis=1))
    return actions, np.log(probs[np.arange(len(actions)), actions])


def play_batch(actor, players, games, rng, mix):
    """Play `games` games in lockstep. Returns the learner's decisions (obs, masks, actions,
    log-probs, returns) and per-game (opponent kind, learner reward)."""
    states = [game.new_state(players, seed=int(rng.integers(2**32))) for _ in range(games)]
    learner = [g % players for g in range(games)]
    kinds = rng.choice(len(OPPONENTS), size=games, p=mix)
    greedy = ExpressGreedyAgent(seed=int(rng.integers(2**32)))
    obs_rows, mask_rows, action_rows, logp_rows, game_of_row = [], [], [], [], []
    reward = np.zeros(games)
    running = list(range(games))
    obs = np.zeros((games, E.OBS_SIZE), dtype=np.float32)
    masks = np.zeros((games, E.N_ACTIONS), dtype=np.int8)
    while running:
        policy_games = []  # the learner's turns and the "self" opponents' turns: one forward
        for g in running:
            seat = game.to_move(states[g])
            if seat == learner[g] or OPPONENTS[kinds[g]] == "self":
                observe(states[g], seat, obs[g], masks[g])
                policy_games.append(g)
        if policy_games:
            actions, logps = sample_actions(actor, obs[policy_games], masks[policy_games], rng)
        chosen = dict(zip(policy_games, actions)) if policy_games else {}
        for k, g in enumerate(policy_games):
            if game.to_move(states[g]) == learner[g]:
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
                if OPPONENTS[kinds[g]] == "greedy":
                    action = greedy.act(ExpressTurn.from_state(state, rng, legal))
                else:
                    action = int(legal[rng.integers(len(legal))])
            E.step(state, action)
            winner = game.winner(state)
            if winner is not None:
                reward[g] = 1.0 if winner == learner[g] else -1.0
            elif game.turn(state) < DEFAULT_MAX_TURNS:
                still.append(g)
        running = still
    returns = reward[np.array(game_of_row, dtype=np.int64)]
    batch = (
        np.array(obs_rows, dtype=np.float32),
        np.array(mask_rows, dtype=np.int8),
        np.array(action_rows, dtype=np.int64),
        np.array(logp_rows, dtype=np.float32),
        returns.astype(np.float32),
    )
    return batch, kinds, reward


def ppo_update(actor, critic, optimizer, batch, args, rng):
    """Clipped PPO epochs over the batch; returns (policy loss, value loss, entropy) of the last minibatch."""
    obs, masks, actions, old_logp, returns = (torch.from_numpy(x) for x in batch)
    with torch.no_grad():  # advantages once per batch (a minibatch of one row has no spread)
        advantages = returns - critic(obs)[:, 0]
        advantages = (advantages - advantages.mean()) / (advantages.std(unbiased=False) + 1e-8)
    for _ in range(args.epochs):
        order = rng.permutation(len(actions))
        for start in range(0, len(order), args.minibatch):
            idx = torch.from_numpy(order[start : start + args.minibatch])
            values = critic(obs[idx])[:, 0]
            advantage = advantages[idx]
            logits = masked_logits(actor(obs[idx]), masks[idx])
            log_probs = torch.log_softmax(logits, dim=1)
            logp = log_probs.gather(1, actions[idx, None])[:, 0]
            ratio = torch.exp(logp - old_logp[idx])
            policy_loss = -torch.min(ratio * advantage, ratio.clamp(1 - args.clip, 1 + args.clip) * advantage).mean()
            probs = log_probs.exp()
            entropy = -(probs * log_probs.masked_fill(probs == 0, 0.0)).sum(dim=1).mean()
            value_loss = ((values - returns[idx]) ** 2).mean()
            loss = policy_loss + 0.5 * value_loss - args.entropy * entropy
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_([*actor.parameters(), *critic.parameters()], 0.5)
            optimizer.step()
    return policy_loss.item(), value_loss.item(), entropy.item()


def main(argv=None):
    args = parse_args(argv)
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    actor = ExpressActor(args.hidden)
    critic = MLP([E.OBS_SIZE, *args.hidden, 1], "relu")
    optimizer = torch.optim.Adam([*actor.parameters(), *critic.parameters()], lr=args.lr)
    start = time.perf_counter()
    steps = 0
    update = 0
    while time.perf_counter() - start < args.minutes * 60:
        batch, kinds, reward = play_batch(actor, args.players, args.games, rng, args.mix)
        losses = ppo_update(actor, critic, optimizer, batch, args, rng)
        steps += len(batch[2])
        update += 1
        elapsed = time.perf_counter() - start
        rates = " ".join(
            f"{name} {np.mean(reward[kinds == k] > 0):.2f}" for k, name in enumerate(OPPONENTS) if (kinds == k).any()
        )
        print(
            f"update {update:4d}  steps {steps:8d}  {steps / elapsed:6.0f} steps/s  win rate vs {rates}  "
            f"policy {losses[0]:+.3f} value {losses[1]:.3f} entropy {losses[2]:.3f}",
            flush=True,
        )
    wall = time.perf_counter() - start
    if not all(torch.isfinite(p).all() for p in actor.parameters()):
        sys.exit("express_train: the policy's weights are no longer finite; nothing written (lower --lr)")
    training = {
        "config": {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in vars(args).items()},
        "method": "PPO, Monte Carlo returns, opponents greedy/random/self",
        "learner_steps": steps,
        "updates": update,
        "wall_seconds": round(wall, 1),
    }
    name = os.path.splitext(os.path.basename(args.out))[0]
    save_express_policy(
        args.out,
        actor,
        num_players=args.players,
        hidden=args.hidden,
        activation="relu",
        name=name,
        training=training,
    )
    print(f"wrote {args.out}: {steps} learner steps in {wall:.0f} s ({steps / wall:.0f} steps/s)")


if __name__ == "__main__":
    main(sys.argv[1:])
