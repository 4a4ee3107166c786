"""Fit a value network: the chance of winning from a position, learned from teacher games.

    python -m sorry_env.training.value_fit --players 2 --positions 8000000 --out checkpoints/value-2p.safetensors

Reads top to bottom:

1. Positions: the compiled heuristic teacher plays games (:mod:`sorry_env.training.outcome_data`)
   and keeps the position after each of its decisions with the game's winner.
2. The last 5% of the games are held out; the rest are shuffled rows (position, viewer),
   every position once from each seat.
3. An MLP over the viewer's observation is fitted to "the viewer's side won" (binary
   cross-entropy on its logit) with Adam, one pass per epoch; the held-out loss is printed
   beside the hand-written evaluation's loss on the same rows (what the network has to
   beat), then the network is written as an ``afterstate`` policy file.

The file is the value network of ``montecarlo:value=PATH`` (:mod:`sorry_env.agents.value_net`); as a policy
it plays the move whose position it values most. Positions are kept as public state arrays
and turned into observations batch by batch, so 8 million positions take about 2.2 GB.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from torch.nn import functional as F
from tqdm import tqdm

from sorry_env.agents.policy import Actor, save_policy
from sorry_env.board import game
from sorry_env.board.evaluation import DEFAULT_WEIGHTS, evaluate, win_chance
from sorry_env.board.rules import DEFAULT_PRESET

from .outcome_data import OutcomeData

HELD_OUT = 0.05  # share of the games kept for the held-out loss


def hand_written_loss(data: OutcomeData, rows: np.ndarray, labels: np.ndarray) -> float:
    """Binary cross-entropy of the heuristic evaluation's chance of winning on `rows`."""
    w = DEFAULT_WEIGHTS.array()
    pos, viewers = rows // len(data.seats), data.seats[rows % len(data.seats)]
    states = data.states[pos].astype(np.int64)
    r = data.rules_array
    p = np.array([win_chance(s, r, w, evaluate(s, r, w, v)) for s, v in zip(states, viewers)])
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return float(-(labels * np.log(p) + (1 - labels) * np.log(1 - p)).mean())


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description="Fit a value network to the outcomes of heuristic teacher games.")
    p.add_argument("--rules", default=DEFAULT_PRESET, help=f"rules preset (default: {DEFAULT_PRESET})")
    p.add_argument("--players", type=int, default=2, choices=(2, 3, 4))
    p.add_argument("--positions", type=int, default=8_000_000, help="teacher positions to collect")
    p.add_argument("--epsilon", type=float, default=0.05, help="teacher's chance of a random move")
    p.add_argument("--hidden", default="256,256", help="hidden layer widths (comma-separated)")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=1024)
    p.add_argument("--lr", type=float, default=1e-3, help="Adam learning rate (a third of it in the last epoch)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=2, help="torch threads")
    p.add_argument("--out", required=True, help="value network file to write (.safetensors)")
    args = p.parse_args(argv)
    if args.positions < 1000 or args.epochs < 1:
        p.error("--positions must be at least 1000 and --epochs at least 1")
    try:
        hidden = [int(h, 10) for h in args.hidden.split(",")]
    except ValueError:
        hidden = []
    if not hidden or min(hidden) < 1:
        p.error(f"--hidden must be comma-separated layer widths >= 1, e.g. 256,256; got {args.hidden!r}")
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    rules_array = game.rules_array(args.rules)
    start = time.time()

    data = OutcomeData(
        rules_array, args.players, args.positions, weights=DEFAULT_WEIGHTS.array(), epsilon=args.epsilon, seed=args.seed
    )
    print(f"{len(data.states):,} positions from {data.num_games:,} teacher games in {time.time() - start:.0f} s")

    views = len(data.seats)
    held_out = data.games >= int(data.num_games * (1 - HELD_OUT))  # games are numbered in order
    train_rows = (np.flatnonzero(~held_out)[:, None] * views + np.arange(views)).ravel()
    test_rows = (np.flatnonzero(held_out)[:, None] * views + np.arange(views)).ravel()[:40_000]
    test_obs, test_labels = data.batch(test_rows)
    baseline = hand_written_loss(data, test_rows, test_labels)
    # What a guess blind to the position scores: the held-out share of wins for every row
    # (ln 2 with two sides; about 0.562 with four players alone, where a seat wins a quarter).
    share = float(np.clip(test_labels.mean(), 1e-6, 1 - 1e-6))
    blind = -(share * np.log(share) + (1 - share) * np.log(1 - share))
    print(
        f"held-out loss of the hand-written evaluation: {baseline:.4f} "
        f"(a guess blind to the position, {share:.1%} for every row: {blind:.4f})"
    )

    actor = Actor("afterstate", hidden, "relu", args.rules)
    optimizer = torch.optim.Adam(actor.parameters(), lr=args.lr)
    rng = np.random.default_rng(args.seed)
    test_loss = float("nan")
    for epoch in range(args.epochs):
        for group in optimizer.param_groups:
            group["lr"] = args.lr / 3 if epoch == args.epochs - 1 and args.epochs > 1 else args.lr
        order = rng.permutation(train_rows)
        t0, losses = time.time(), []
        bar = tqdm(range(0, len(order), args.batch_size), desc=f"epoch {epoch + 1}/{args.epochs}", unit="batch")
        for first in bar:
            obs, labels = data.batch(order[first : first + args.batch_size])
            loss = F.binary_cross_entropy_with_logits(actor.net(torch.from_numpy(obs))[:, 0], torch.from_numpy(labels))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            if len(losses) % 200 == 0:
                bar.set_postfix(loss=f"{np.mean(losses[-200:]):.4f}")
        with torch.no_grad():
            test_loss = F.binary_cross_entropy_with_logits(
                actor.net(torch.from_numpy(test_obs))[:, 0], torch.from_numpy(test_labels)
            ).item()
        print(
            f"epoch {epoch + 1}: training loss {np.mean(losses):.4f}, held-out loss {test_loss:.4f} "
            f"(hand-written {baseline:.4f}), {len(order) / (time.time() - t0):,.0f} rows/s"
        )

    seconds = time.time() - start
    save_policy(
        args.out,
        actor,
        rules=args.rules,
        num_players=args.players,
        network={"kind": "afterstate", "hidden": hidden, "activation": "relu"},
        name=f"value-{args.players}p",
        training={
            "command": "sorry_env.training.value_fit",
            "args": vars(args),
            "positions": len(data.states),
            "games": data.num_games,
            "wall_seconds": seconds,
        },
        evaluation={"held_out_loss": test_loss, "hand_written_loss": baseline},
    )  # atomic
    print(f"wrote {args.out} ({seconds / 60:.1f} min)")


if __name__ == "__main__":
    main()
