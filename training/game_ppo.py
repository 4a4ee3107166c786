"""Train a small masked policy network for any registered game other than the board game
(plain torch, one process), written as that game's policy file
(:mod:`sorry_env.agents.policy`):

    python -m sorry_env.training.game_ppo --game ID --players 2 --minutes 8 --out ID-2p.safetensors

(the command behind each shipped policy of a game is in that game's docs page).

Method: PPO with Monte Carlo returns. Each update plays ``--games`` games in lockstep over the
registry's functional API (:class:`sorry_env.games.Game`). In every game one seat is the
learner (the seat rotates) and the others are drawn from an opponent pool (``--opponents``,
with the chances ``--mix``): agents of the game by spec (default ``greedy`` and ``random``)
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

import argparse
import dataclasses
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

SELF = "self"  # the opponent kind that is the current policy (sampled)
RANDOM = "random"  # uniformly random legal play, drawn from the trainer's own generator


@dataclasses.dataclass
class Settings:
    """The hyperparameters (the defaults are those the shipped policies were trained with)."""

    games: int = 256  # games per update
    hidden: tuple[int, ...] = (128, 128)
    lr: float = 1e-3
    epochs: int = 4  # PPO epochs per update
    minibatch: int = 512
    clip: float = 0.2
    entropy: float = 0.01
    opponents: tuple[str, ...] = ("greedy", RANDOM, SELF)
    mix: tuple[float, ...] = (0.5, 0.2, 0.3)  # chances of the opponent kinds, one draw per game


def check_settings(game: games.Game, players: int, settings: Settings) -> np.ndarray:
    """ValueError naming the first bad setting (before any play); returns the normalised mix."""
    game.game_type.check_players(players)
    if any(not isinstance(w, int) or w < 1 for w in settings.hidden):
        raise ValueError(f"hidden widths must be positive integers, got {list(settings.hidden)}")
    for name in ("games", "lr", "epochs", "minibatch", "clip"):
        if not getattr(settings, name) > 0:
            raise ValueError(f"{name} must be positive, got {getattr(settings, name)!r}")
    if not settings.entropy >= 0:
        raise ValueError(f"entropy must be non-negative, got {settings.entropy!r}")
    mix = np.array(settings.mix, dtype=np.float64)
    if len(mix) != len(settings.opponents) or not np.isfinite(mix).all() or (mix < 0).any() or mix.sum() <= 0:
        raise ValueError(
            f"mix needs {len(settings.opponents)} non-negative chances, one per opponent kind "
            f"({','.join(settings.opponents)}), got {list(settings.mix)}"
        )
    for kind in settings.opponents:
        if kind not in (SELF, RANDOM):
            make_agent(kind, seed=0, allow_code=False, game=game)  # an unknown or unfit opponent, refused now
    return mix / mix.sum()


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


def play_batch(
    actor: Actor, game: games.Game, players: int, settings: Settings, mix: np.ndarray, rng: np.random.Generator
) -> tuple:
    """Play `settings.games` games in lockstep. Returns the learner's decisions (obs, masks,
    actions, log-probs, returns) and per-game (opponent kind, learner reward)."""
    n_games = settings.games
    kinds_named = settings.opponents
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


def ppo_update(actor, critic, optimizer, batch, settings: Settings, rng: np.random.Generator) -> tuple:
    """Clipped PPO epochs over the batch; returns (policy loss, value loss, entropy) of the last minibatch."""
    obs, masks, actions, old_logp, returns = (torch.from_numpy(x) for x in batch)
    with torch.no_grad():  # advantages once per batch (a minibatch of one row has no spread)
        advantages = returns - critic(obs)[:, 0]
        advantages = (advantages - advantages.mean()) / (advantages.std(unbiased=False) + 1e-8)
    for _ in range(settings.epochs):
        order = rng.permutation(len(actions))
        for start in range(0, len(order), settings.minibatch):
            idx = torch.from_numpy(order[start : start + settings.minibatch])
            values = critic(obs[idx])[:, 0]
            advantage = advantages[idx]
            logits = masked_logits(actor(obs[idx]), masks[idx])
            log_probs = torch.log_softmax(logits, dim=1)
            logp = log_probs.gather(1, actions[idx, None])[:, 0]
            ratio = torch.exp(logp - old_logp[idx])
            policy_loss = -torch.min(
                ratio * advantage, ratio.clamp(1 - settings.clip, 1 + settings.clip) * advantage
            ).mean()
            probs = log_probs.exp()
            entropy = -(probs * log_probs.masked_fill(probs == 0, 0.0)).sum(dim=1).mean()
            value_loss = ((values - returns[idx]) ** 2).mean()
            loss = policy_loss + 0.5 * value_loss - settings.entropy * entropy
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_([*actor.parameters(), *critic.parameters()], 0.5)
            optimizer.step()
    return policy_loss.item(), value_loss.item(), entropy.item()


def train(
    game: str | games.Game,
    players: int,
    settings: Settings | None = None,
    seed: int = 0,
    minutes: float | None = None,
    steps: int | None = None,
    on_update: Callable[[int, int, Actor], None] | None = None,
    log: Callable[[str], None] | None = print,
) -> tuple[Actor, dict]:
    """Train a policy of `game` for `players` until `minutes` of wall time or `steps` learner
    decisions (whichever comes first; at least one must be given). `on_update(update, steps,
    actor)` runs after every update. Returns (actor, the training record of its policy file)."""
    game = game if isinstance(game, games.Game) else games.load_game(game)
    settings = Settings() if settings is None else settings
    mix = check_settings(game, players, settings)
    if minutes is None and steps is None:
        raise ValueError("give a budget: minutes, steps or both")
    if (minutes is not None and not minutes > 0) or (steps is not None and steps < 1):
        raise ValueError(f"the budget must be positive, got minutes={minutes!r}, steps={steps!r}")
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    actor = Actor("mlp", list(settings.hidden), "relu", game)
    critic = MLP([game.observation_size, *settings.hidden, 1], "relu")
    optimizer = torch.optim.Adam([*actor.parameters(), *critic.parameters()], lr=settings.lr)
    start = time.perf_counter()
    done = update = 0
    while (minutes is None or time.perf_counter() - start < minutes * 60) and (steps is None or done < steps):
        batch, kinds, reward = play_batch(actor, game, players, settings, mix, rng)
        losses = ppo_update(actor, critic, optimizer, batch, settings, rng)
        done += len(batch[2])
        update += 1
        elapsed = time.perf_counter() - start
        if log is not None:
            rates = " ".join(
                f"{name} {np.mean(reward[kinds == k] > 0):.2f}"
                for k, name in enumerate(settings.opponents)
                if (kinds == k).any()
            )
            log(
                f"update {update:4d}  steps {done:8d}  {done / elapsed:6.0f} steps/s  win rate vs {rates}  "
                f"policy {losses[0]:+.3f} value {losses[1]:.3f} entropy {losses[2]:.3f}"
            )
        if on_update is not None:
            on_update(update, done, actor)
    wall = time.perf_counter() - start
    if not all(torch.isfinite(p).all() for p in actor.parameters()):
        raise FloatingPointError("the policy's weights are no longer finite (lower the learning rate)")
    training = {
        "config": {
            **{k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(settings).items()},
            "game": game.game_type.id,
            "players": players,
            "seed": seed,
            "minutes": minutes,
            "steps": steps,
        },
        "method": f"PPO, Monte Carlo returns, opponents {'/'.join(settings.opponents)}",
        "learner_steps": done,
        "updates": update,
        "wall_seconds": round(wall, 1),
    }
    return actor, training


def save(
    path: str | os.PathLike, game: str | games.Game, actor: Actor, players: int, settings: Settings, training: dict
) -> None:
    """Write the trained actor as `game`'s policy file, named after the file."""
    game = game if isinstance(game, games.Game) else games.load_game(game)
    save_policy(
        path,
        actor,
        rules=game,
        num_players=players,
        network={"kind": "mlp", "hidden": list(settings.hidden), "activation": "relu"},
        name=os.path.splitext(os.path.basename(str(path)))[0],
        training=training,
    )


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    others = [kind.id for kind in games.builtin_game_types() if kind.id != "sorry"]
    parser = argparse.ArgumentParser(prog="python -m sorry_env.training.game_ppo", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--game", required=True, help=f"a registered game other than the board game ({', '.join(others)})"
    )
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--minutes", type=float, default=8.0, help="wall-clock budget of the training")
    parser.add_argument("--steps", type=int, help="learner-decision budget (stops at whichever comes first)")
    parser.add_argument("--games", type=int, default=Settings.games, help="games per update")
    parser.add_argument("--hidden", default="128,128", help="hidden layer widths")
    parser.add_argument("--lr", type=float, default=Settings.lr)
    parser.add_argument("--epochs", type=int, default=Settings.epochs, help="PPO epochs per update")
    parser.add_argument("--minibatch", type=int, default=Settings.minibatch)
    parser.add_argument("--clip", type=float, default=Settings.clip)
    parser.add_argument("--entropy", type=float, default=Settings.entropy)
    parser.add_argument(
        "--opponents", default=",".join(Settings.opponents), help="opponent kinds: agent specs of the game, or self"
    )
    parser.add_argument("--mix", default="0.5,0.2,0.3", help="chances of the opponent kinds (one per seat)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True, help="the policy file to write (.safetensors)")
    args = parser.parse_args(argv)
    try:
        args.game_obj = games.load_game(args.game)
        if args.game_obj.game_type.id == "sorry":
            raise ValueError("the board game trains with sorry-train (training/train.py)")
        hidden = tuple(int(w) for w in args.hidden.split(","))
        mix = tuple(float(p) for p in args.mix.split(","))
    except ValueError as error:
        parser.error(
            str(error)
            if "sorry-train" in str(error) or "unknown game" in str(error)
            else "--hidden and --mix are comma-separated numbers"
        )
    args.settings = Settings(
        games=args.games,
        hidden=hidden,
        lr=args.lr,
        epochs=args.epochs,
        minibatch=args.minibatch,
        clip=args.clip,
        entropy=args.entropy,
        opponents=tuple(filter(None, args.opponents.split(","))),
        mix=mix,
    )
    try:
        check_settings(args.game_obj, args.players, args.settings)
    except ValueError as error:
        parser.error(str(error))
    if not args.minutes > 0 or (args.steps is not None and args.steps < 1):
        parser.error("--minutes and --steps must be positive")
    if not args.out.endswith(".safetensors"):
        parser.error(f"--out {args.out}: a policy file ends in .safetensors")
    out_dir = os.path.dirname(os.path.abspath(args.out))
    if not os.path.isdir(out_dir) or not os.access(out_dir, os.W_OK):
        parser.error(f"--out {args.out}: {out_dir} is not a writable directory")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    torch.set_num_threads(1)
    try:
        actor, training = train(
            args.game_obj,
            args.players,
            args.settings,
            args.seed,
            minutes=args.minutes,
            steps=args.steps,
            log=lambda line: print(line, flush=True),
        )
    except FloatingPointError as error:
        sys.exit(f"game_ppo: {error}; nothing written")
    save(args.out, args.game_obj, actor, args.players, args.settings, training)
    steps, wall = training["learner_steps"], max(training["wall_seconds"], 1e-9)
    print(f"wrote {args.out}: {steps} learner steps in {wall:.0f} s ({steps / wall:.0f} steps/s)")


if __name__ == "__main__":
    main(sys.argv[1:])
