"""Is the flat value loss of expert iteration the game's noise or the network's limit?

Fits value networks (afterstate MLPs, relu) to the outcomes of an expert-iteration run's
self-play, every generation but the last, and reports each one's cross-entropy against the
outcomes of the last generation's games (held out: games never trained on). The network that played that
generation (the last one promoted before it) is scored on the same games for comparison. If a wider network trained on
all of the run's positions lands where the run's network is, the loss is what the outcome of
a game from these positions leaves unpredictable (for networks of this kind); if it lands
well below, the run's networks were short of data or capacity.
(docs/research/2026-11-27-expit-2p-large.md, "Value error".)

    OMP_NUM_THREADS=1 python experiments/expit_value_capacity.py /work/expit-runs/expit-2p-large \\
        --hidden 256,256 512,512 --epochs 3
"""

import argparse
import json
import pathlib
import time

import numpy as np
import torch
from torch.nn import functional as F

from sorry_env import files
from sorry_env.agents.policy import MLP, load_policy
from sorry_env.board import game
from sorry_env.board.observation import OBS_SIZE
from sorry_env.board.policy_input import sparse_afterstates
from sorry_env.training import expert_iteration as X
from sorry_env.training.sb3_policy import sparse_mlp

RULES = "hasbro2003"
CHUNK = 4096  # decisions turned into afterstates at once


def chosen_afterstates(data: dict, rules_array: np.ndarray):
    """(sparse observations of each decision's chosen move's afterstate, outcome labels)."""
    columns, values, offsets, labels = [], [], [0], []
    for start in range(0, len(data["chosen"]), CHUNK):
        idx = np.arange(start, min(len(data["chosen"]), start + CHUNK))
        (c, v, o), rows, actions = sparse_afterstates(data["states"][idx].astype(np.int64), rules_array)
        keep = np.flatnonzero(actions == data["chosen"][idx][rows])
        for r in keep:
            columns.append(c[o[r] : o[r + 1]])
            values.append(v[o[r] : o[r + 1]])
            offsets.append(offsets[-1] + o[r + 1] - o[r])
        labels.append(data["won"][idx][rows[keep]])
    return (np.concatenate(columns), np.concatenate(values), np.array(offsets)), np.concatenate(labels)


def rows_of(sparse, idx: np.ndarray):
    """The sparse rows idx of `sparse` (columns, values, offsets) as a new sparse matrix."""
    columns, values, offsets = sparse
    lengths = offsets[idx + 1] - offsets[idx]
    take = np.concatenate([np.arange(offsets[i], offsets[i + 1]) for i in idx])
    return columns[take], values[take], np.r_[0, np.cumsum(lengths)]


def held_out_loss(net, sparse, labels) -> float:
    with torch.no_grad():
        total = 0.0
        for start in range(0, len(labels), 65536):
            idx = np.arange(start, min(len(labels), start + 65536))
            logits = sparse_mlp(net, rows_of(sparse, idx))[:, 0]
            total += float(F.binary_cross_entropy_with_logits(logits, torch.from_numpy(labels[idx]), reduction="sum"))
    return total / len(labels)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("run", help="an expert-iteration run directory (selfplay-K.npz, state.json)")
    p.add_argument("--hidden", nargs="+", default=["256,256", "512,512"], help="hidden sizes of each fit")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=512)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    torch.set_num_threads(1)
    run = pathlib.Path(args.run)
    gens = sorted(int(f.stem.split("-")[1]) for f in run.glob("selfplay-*.npz"))
    ra = game.rules_array(RULES)
    train = [chosen_afterstates(X._load_npz(run / f"selfplay-{k}.npz"), ra) for k in gens[:-1]]
    test_x, test_y = chosen_afterstates(X._load_npz(run / f"selfplay-{gens[-1]}.npz"), ra)
    columns = np.concatenate([t[0][0] for t in train])
    values = np.concatenate([t[0][1] for t in train])
    offsets = np.r_[0, np.cumsum(np.concatenate([np.diff(t[0][2]) for t in train]))]
    train_x, train_y = (columns, values, offsets), np.concatenate([t[1] for t in train])
    print(f"training positions {len(train_y):,} (generations {gens[0]}-{gens[-2]}), held out {len(test_y):,} "
          f"(generation {gens[-1]}); the held-out outcomes' own entropy {held_out_entropy(test_y):.4f}")  # fmt: skip
    parent = last_parent(run, gens[-1])  # the network that played the last generation, before learning from it
    parent_loss = held_out_loss(load_policy(parent)[0].net, test_x, test_y)
    print(f"{parent} (played generation {gens[-1]}): held-out loss {parent_loss:.4f}")
    for hidden in args.hidden:
        sizes = [int(h) for h in hidden.split(",")]
        torch.manual_seed(args.seed)
        net = MLP([OBS_SIZE, *sizes, 1], "relu")
        opt = torch.optim.Adam(net.parameters(), lr=args.lr)
        rng = np.random.default_rng(args.seed)
        start = time.process_time()
        for epoch in range(args.epochs):
            order = rng.permutation(len(train_y))
            for s in range(0, len(order), args.batch_size):
                idx = np.sort(order[s : s + args.batch_size])
                logits = sparse_mlp(net, rows_of(train_x, idx))[:, 0]
                loss = F.binary_cross_entropy_with_logits(logits, torch.from_numpy(train_y[idx]))
                opt.zero_grad()
                loss.backward()
                opt.step()
            print(f"  {hidden} epoch {epoch + 1}: held-out loss {held_out_loss(net, test_x, test_y):.4f} "
                  f"({time.process_time() - start:.0f} CPU-s)")  # fmt: skip


def last_parent(run: pathlib.Path, generation: int) -> str:
    """The network that played `generation`'s self-play: the last promoted one before it (or
    the run's init), read from the run's log; generation K's network was trained on K's games."""
    rows = [json.loads(line) for line in files.read_text(run / "log.jsonl", X.MAX_RUN_JSON, "log.jsonl").splitlines()]
    promoted = [r["generation"] for r in rows if r.get("promoted") and r["generation"] < generation]
    if promoted:
        return str(run / f"net-{max(promoted)}.safetensors")
    return files.read_json(run / "config.json", X.MAX_RUN_JSON, "config.json")[X.SECTION]["init"]


def held_out_entropy(labels: np.ndarray) -> float:
    """Cross-entropy of always predicting the held-out games' mean outcome (no information)."""
    m = float(np.clip(labels.mean(), 1e-6, 1 - 1e-6))
    return float(-(labels * np.log(m) + (1 - labels) * np.log(1 - m)).mean())


if __name__ == "__main__":
    main()
