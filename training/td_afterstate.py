"""TD(lambda) self-play on afterstate values, from random weights: TD-Gammon's recipe for Sorry!.

    sorry-train configs/tabula-rasa-2p.yaml         # the shipped tabula-rasa-2p's run
    python -m sorry_env.training.td_afterstate --decisions 2000000 --out runs/td/policy.safetensors

One network scores the position each legal move leaves (the afterstate, seen by the mover:
no card drawn yet, so nothing hidden). The score is the logit of the mover's chance of
winning, as in the value networks the search agents read (``azsearch:net=FILE``,
``expectimax:depth=2,value=FILE``): its expected outcome (+1 a win, -1 a loss) is
``2 * sigmoid(score) - 1 = tanh(score / 2)``. Every seat of every game plays the move with the
best score (a small share of moves uniformly at random), so the network learns the value of
its own play. After a game, each seat's chosen afterstates learn their lambda-return: the
value of the same seat's next chosen afterstate, mixed back towards the final outcome,

    G_T = z,   G_t = (1 - lambda) * v_{t+1} + lambda * G_{t+1},

with v the values the network gave when the moves were played. Nothing here knows a strategy:
the rules engine lists the moves and deals the cards; the heuristic is played only by the
in-run checks (``eval_opponents``), which draw the curve and change nothing.

The result is an ordinary afterstate policy file (the score is the logit): ``sorry-eval FILE``
plays it greedily; ``sorry-export`` is not needed. Read top to bottom: the batched self-play
step, the lambda-returns, the update, the run with its checks, the settings.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch
from numba import njit

from sorry_env import files
from sorry_env.agents.policy import Actor, save_policy
from sorry_env.board import engine as E
from sorry_env.board import game
from sorry_env.board.policy_input import sparse_afterstates

from . import match
from .batched_env import apply_actions
from .config import TD_LAMBDA, parse_settings, settings_parser
from .curve import plot_win_rates
from .export import policy_agent
from .sb3_policy import sparse_mlp

ALGORITHM = "td_lambda_afterstate"


# ---- the batched self-play step (compiled) ---------------------------------------------------
@njit(cache=True)
def settle(states, rules, max_turns, seeds, counters, active, finished):
    """Play every game's lone legal moves until a seat has a choice; a game that ends is
    recorded (finished[b] := its winner, or -2 for the turn limit) and restarted with the next
    seed of its slot. Returns the number of games that ended."""
    buf = np.empty(E.num_actions(rules), dtype=np.int64)
    ended = 0
    for b in range(states.shape[0]):
        finished[b] = -1
        state = states[b]
        while True:
            if not E.is_running(state, max_turns):
                finished[b] = state[E.WINNER] if state[E.WINNER] >= 0 else -2
                ended += 1
                counters[b] += 1
                E.init_state(state, rules, active, (seeds[b] + counters[b] * 7919) & 0xFFFFFFFF)
                continue
            if E.legal_actions(state, rules, buf) > 1:
                break
            E.step(state, rules, buf[0])
    return ended


def choose(scores: np.ndarray, rows: np.ndarray, n_games: int, epsilon: float, rng) -> np.ndarray:
    """Index (into the afterstate list) of each game's move: the best score (lowest index among
    equal ones), or with probability `epsilon` a uniformly random legal move."""
    starts = np.searchsorted(rows, np.arange(n_games))
    counts = np.diff(np.append(starts, len(rows)))
    best = np.maximum.reduceat(scores, starts)
    position = np.arange(len(rows))
    first_best = np.minimum.reduceat(np.where(scores >= np.repeat(best, counts), position, len(rows)), starts)
    explore = rng.random(n_games) < epsilon
    random_pick = starts + (rng.random(n_games) * counts).astype(np.int64)
    return np.where(explore, random_pick, first_best)


def lambda_returns(values: np.ndarray, outcome: float, lam: float) -> np.ndarray:
    """G_t for one seat's chosen afterstates with values v_1..v_T and final outcome z."""
    targets = np.empty(len(values), dtype=np.float32)
    following = outcome
    for t in range(len(values) - 1, -1, -1):
        targets[t] = following
        following = (1 - lam) * values[t] + lam * following
    return targets


class Trajectories:
    """The chosen afterstates of every game in progress (sparse rows and values), per seat, and
    the finished games' samples (rows with their lambda-returns) waiting for an update."""

    def __init__(self, n_games: int, lam: float, rules: np.ndarray):
        self.lam, self.rules = lam, rules
        self.open: list[dict[int, list]] = [{} for _ in range(n_games)]
        self.samples: list[tuple[np.ndarray, np.ndarray, float]] = []

    def add(self, b: int, seat: int, columns: np.ndarray, values: np.ndarray, value: float) -> None:
        self.open[b].setdefault(seat, []).append((columns, values, value))

    def finish(self, b: int, winner: int) -> None:
        for seat, moves in self.open[b].items():
            # a side shares its win: under team rules the winner's partner won too
            outcome = 0.0 if winner == -2 else (1.0 if E.same_side(self.rules, seat, winner) else -1.0)
            targets = lambda_returns(np.array([m[2] for m in moves], dtype=np.float32), outcome, self.lam)
            self.samples.extend((m[0], m[1], float(g)) for m, g in zip(moves, targets))
        self.open[b] = {}

    def take(self) -> list:
        samples, self.samples = self.samples, []
        return samples


def sparse_batch(samples: list) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], torch.Tensor]:
    """Rows of (columns, values, target) samples as one compressed sparse batch and targets."""
    lengths = np.array([len(s[0]) for s in samples], dtype=np.int64)
    offsets = np.zeros(len(samples) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    columns = np.concatenate([s[0] for s in samples]).astype(np.int64)
    values = np.concatenate([s[1] for s in samples]).astype(np.float32)
    targets = torch.tensor([s[2] for s in samples], dtype=torch.float32)
    return (columns, values, offsets), targets


def update(actor: Actor, optimizer, samples: list, batch_size: int, epochs: int, rng) -> float:
    """Regress the expected outcome tanh(score / 2) on the lambda-returns; returns the last
    epoch's mean squared error."""
    losses: list[float] = []
    for _ in range(epochs):
        order = rng.permutation(len(samples))
        losses = []
        for start in range(0, len(order), batch_size):
            rows, targets = sparse_batch([samples[i] for i in order[start : start + batch_size]])
            predicted = torch.tanh(sparse_mlp(actor.net, rows)[:, 0] / 2)
            loss = torch.nn.functional.mse_loss(predicted, targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    return float(np.mean(losses)) if losses else float("nan")


# ---- the run ----------------------------------------------------------------------------------
def win_rates(args):
    """The command's in-run check: the policy's win rate against each of ``--eval-opponents``."""

    def evaluate(decisions: int, agent) -> dict:
        rates = match.win_rates(agent, args.eval_opponents, args.players, args.rules, args.eval_games,
                                args.seed + 10**6, args.max_turns)  # fmt: skip
        for opponent, rate in rates.items():
            print(
                f"  vs {opponent}: {match.with_interval(rate, args.eval_games)} ({args.eval_games} games)", flush=True
            )
        return rates

    return evaluate


def train(args, evaluate=None) -> dict:
    """Run TD(lambda) self-play as `args` (:func:`parse_args`) say; ``evaluate(decisions,
    agent)`` measures the network in memory (:func:`sorry_env.training.export.policy_agent`)
    every ``eval_every`` decisions and at the end, and returns the row of the curve (default:
    :func:`win_rates`)."""
    evaluate = evaluate or win_rates(args)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    rng = np.random.default_rng(args.seed)
    rules = game.rules_array(args.rules)
    actor = Actor("afterstate", args.hidden, "relu", args.rules)
    optimizer = torch.optim.Adam(actor.parameters(), lr=args.lr)
    seats = game.seats_for(args.players, rules=args.rules)
    active = np.zeros(4, dtype=np.int64)
    active[list(seats)] = 1
    n = args.games
    seeds = rng.integers(0, 2**31, size=n, dtype=np.int64)
    counters = np.zeros(n, dtype=np.int64)
    states = np.stack([game.new_state(args.rules, args.players, seed=int(s)) for s in seeds])
    finished = np.empty(n, dtype=np.int64)
    trajectories = Trajectories(n, args.lam, rules)
    decisions, games_done, updates, start, cpu_start = 0, 0, 0, time.perf_counter(), time.process_time()
    curve: list[dict]
    next_check, curve, path, agent = 0, [], Path(args.out), None

    def check():
        nonlocal agent
        cpu = time.process_time() - cpu_start
        if agent is None:
            save(actor, path, args, decisions, games_done, cpu, curve)
            agent = policy_agent(actor, path)
        row = {"decisions": decisions, "games": games_done, "cpu_seconds": round(cpu)}
        row.update(evaluate(decisions, agent))
        curve.append(row)
        save(actor, path, args, decisions, games_done, cpu, curve)
        rates = {k: [(row["decisions"], row[k]) for row in curve] for k in row if k not in CURVE_COUNTS}
        plot_win_rates({f"vs {k}": points for k, points in rates.items()}, curve_path(path),
                       f"{args.name}: TD(lambda) self-play", 1 / args.players, "decisions")  # fmt: skip
        speed = decisions / max(time.perf_counter() - start, 1e-9)
        print(f"decisions {decisions} games {games_done} ({speed:.0f} decisions/s, {cpu:.0f} CPU-s)", flush=True)

    while decisions < args.decisions:
        if decisions >= next_check:
            check()
            next_check += args.eval_every
        games_done += settle(states, rules, args.max_turns, seeds, counters, active, finished)
        for b in np.flatnonzero(finished != -1).tolist():
            trajectories.finish(b, int(finished[b]))
        (columns, values, offsets), rows, actions = sparse_afterstates(states, rules)
        with torch.no_grad():
            scores = sparse_mlp(actor.net, (columns, values, offsets))[:, 0].numpy()
        picked = choose(scores, rows, n, args.epsilon, rng)
        movers = states[:, E.TO_MOVE]
        chosen_values = np.tanh(scores[picked] / 2)
        for b in range(n):
            i = picked[b]
            span = slice(offsets[i], offsets[i + 1])
            trajectories.add(b, int(movers[b]), columns[span].astype(np.int16), values[span].copy(), chosen_values[b])
        apply_actions(states, rules, np.arange(n), actions[picked])
        decisions += n
        if len(trajectories.samples) >= args.update_samples:
            if args.lr_final is not None:
                rate = args.lr + (args.lr_final - args.lr) * min(1.0, decisions / args.decisions)
                for group in optimizer.param_groups:
                    group["lr"] = rate
            loss = update(actor, optimizer, trajectories.take(), args.batch_size, args.epochs, rng)
            updates += 1
            if updates % 20 == 0:
                speed = decisions / (time.perf_counter() - start)
                print(f"update {updates}: loss {loss:.4f}, {decisions} decisions, {speed:.0f} decisions/s", flush=True)
    check()
    return {"curve": curve, "decisions": decisions, "games": games_done, "last_lr": optimizer.param_groups[0]["lr"]}


def curve_path(policy_path: Path) -> Path:
    """The learning-curve picture of the run writing `policy_path`: beside it, named after it."""
    return policy_path.with_name(f"{policy_path.stem}-learning-curve.png")


def save(actor: Actor, path: Path, args, decisions: int, games: int, cpu_seconds: float, curve: list) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    save_policy(
        path,
        actor,
        rules=args.rules,
        num_players=args.players,
        network={"kind": "afterstate", "hidden": list(args.hidden), "activation": "relu"},
        name=f"{args.name}@{decisions}",
        training={
            "algorithm": ALGORITHM,
            "from": "random weights",
            "decisions": int(decisions),
            "games": int(games),
            "cpu_seconds": round(cpu_seconds, 1),
            "settings": {k: getattr(args, k) for k in SETTINGS},
            "curve": curve,
        },
    )


CURVE_COUNTS = ("decisions", "games", "cpu_seconds")  # the counts of a row of training.curve; the rest are win rates
SETTINGS = (  # the settings a policy file records (training.settings)
    "players",
    "rules",
    "hidden",
    "lam",
    "lr",
    "lr_final",
    "epsilon",
    "games",
    "update_samples",
    "batch_size",
    "epochs",
    "seed",
)


def parse_args(argv=None) -> argparse.Namespace:
    """Settings (:data:`sorry_env.training.config.TD_LAMBDA`) from ``--config FILE`` (YAML; the
    shipped configs by name) under the flags given."""
    parser = settings_parser(TD_LAMBDA, __doc__.split("\n\n")[0])
    parser.add_argument("--runs-dir", default="runs", help="parent folder of <name>/policy.safetensors")
    settings, other = parse_settings(parser, TD_LAMBDA, argv, ignore=("algorithm",))
    if settings["out"] is None:
        settings["out"] = str(Path(other.runs_dir) / settings["name"] / "policy.safetensors")
    return argparse.Namespace(**settings)


def main(argv=None) -> None:
    try:
        args = parse_args(argv)
        for made in (Path(args.out), curve_path(Path(args.out))):
            if made.exists():
                raise ValueError(f"{made} exists: move it away or change the run's name (nothing is overwritten)")
        files.make_writable_dir(Path(args.out).parent)
    except (OSError, ValueError) as exc:
        print(f"td_afterstate: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    train(args)


if __name__ == "__main__":
    main()
