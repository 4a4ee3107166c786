"""Distil other students from a saved set of teacher decisions, and measure each.

A run with a ``distillation`` section saves its Monte Carlo teacher's decisions as
``runs/<name>/teacher.npz`` (training/search_teacher.py). Playing the teacher is the
expensive part (about 9 ms of CPU per decision at 200 playouts); training a student on the
saved decisions takes minutes. This script trains one student per call with other settings
(width, starting weights, epochs, temperature, learning rate), writes it as a policy file,
and plays it against the heuristic with sorry-eval's tournament (seats rotated, 95% Wilson
interval), so the student's own strength is known before any PPO.

    python experiments/distil_students.py runs/flagship-2p-a1/teacher.npz \\
        --hidden 512,512 --epochs 3 --out /tmp/student.safetensors --games 2000

Results and commands: docs/research/2026-11-24-flagship-2p.md.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

from sorry_env.agents.arena.tournament import run_tournament
from sorry_env.agents.policy import Actor, load_policy, save_policy
from sorry_env.board import game
from sorry_env.training.search_teacher import distil, value_columns


def made_by(data: dict) -> dict:
    """The teacher settings and game a teacher.npz was made with."""
    return json.loads(str(data["made_by"]))


def against_heuristic(policy: str, rules, players: int, games: int, seed: int = 0) -> str:
    """The policy's win rate against heuristic players (sorry-eval's protocol: seats
    rotated, one worker), as a line with its 95% interval."""
    lineup = [policy] + ["heuristic"] * (players - 1)
    result = run_tournament(lineup, games=games, seed=seed, rules=rules, workers=1)["agents"][0]
    return (
        f"against the heuristic: {result['win_rate']:.1%} [{result['ci_low']:.1%}, {result['ci_high']:.1%}] "
        f"of {games} games ({result['wins']} wins, seed {seed})"
    )


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("data", nargs="+", help="teacher.npz files written by runs' distillation (same game), used together")
    p.add_argument("--hidden", default="256,256", help="the student's hidden widths (default 256,256)")
    p.add_argument("--init", help="start from this afterstate network file (same widths)")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=256, help="decisions per step")
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--temperature", type=float, default=0.01, help="of the soft targets softmax(values / T)")
    p.add_argument("--decisions", type=int, help="use only the first N decisions of the file")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", required=True, help="the student's policy file")
    p.add_argument("--games", type=int, default=2000, help="games against the heuristic (0: none)")
    args = p.parse_args(argv)
    try:
        hidden = [int(x) for x in args.hidden.split(",")]
    except ValueError:
        p.error(f"--hidden must be comma-separated widths, got {args.hidden!r}")
    if not hidden or min(hidden) < 1:
        p.error(f"--hidden must be positive widths, got {args.hidden!r}")
    for name in ("epochs", "batch_size"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.lr <= 0 or args.temperature <= 0:
        p.error("--lr and --temperature must be positive")
    if args.games < 0 or (args.decisions is not None and args.decisions < 1):
        p.error("--games must be >= 0 and --decisions >= 1")
    sets = []
    for path in args.data:
        if not Path(path).is_file():
            p.error(f"no file {path!r}")
        with np.load(path) as saved:
            if "made_by" not in saved:
                p.error(f"{path} is not a teacher.npz (no made_by entry)")
            sets.append(dict(saved))
    sources = [made_by(data) for data in sets]
    if any(source["game"] != sources[0]["game"] for source in sources):
        p.error(f"the teacher files are of different games: {[source['game'] for source in sources]}")
    rules, players = sources[0]["game"]["rules"], sources[0]["game"]["num_players"]
    width = max(data["values"].shape[1] for data in sets)
    keep = slice(None, args.decisions)
    states = np.concatenate([data["states"] for data in sets])[keep]
    values = np.concatenate([value_columns(data["values"], width) for data in sets])
    values = values[keep]
    counts = np.concatenate([data["counts"] for data in sets])[keep]

    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    actor = Actor("afterstate", hidden, "relu", rules)
    if args.init:
        init = load_policy(args.init)[0].net
        if [layer.out_features for layer in init.layers[:-1]] != hidden:
            p.error(f"--init {args.init} has other hidden widths than --hidden {args.hidden}")
        actor.net.load_state_dict(init.state_dict())
    start = time.time()
    stats = distil(
        actor,
        game.rules_array(rules),
        states,
        values,
        counts,
        epochs=args.epochs,
        batch_size=args.batch_size,
        lr=args.lr,
        temperature=args.temperature,
        seed=args.seed,
    )
    seconds = time.time() - start
    network = {"kind": "afterstate", "hidden": hidden, "activation": "relu"}
    settings = {k: v for k, v in vars(args).items() if k not in ("data", "out", "games")}
    training = {"distillation": {"teachers": sources, **settings, "decisions": len(counts), **stats}}
    save_policy(
        args.out, actor, rules=rules, num_players=players, network=network, name=Path(args.out).stem, training=training
    )
    print(
        f"student {args.hidden} on {len(counts)} decisions: agreement {stats['agreement']:.1%}, "
        f"loss {stats['loss']:.4f} ({seconds:.0f} s) -> {args.out}"
    )
    if args.games:
        print(against_heuristic(args.out, rules, players, args.games))


if __name__ == "__main__":
    main()
