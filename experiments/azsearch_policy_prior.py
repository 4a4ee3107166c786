"""A policy prior for azsearch trained on the search's visit shares (issue 24's "policy head"):
self-play of the search with the shipped value network (expert iteration's game generation,
games side by side), then a copy of the value network, its output scaled by
1 / prior_temperature so that it starts as exactly the prior the search uses now, trained only
on the cross-entropy between softmax(scores) over each decision's moves and the visit shares.
The file is an ordinary afterstate policy file for ``azsearch:net=VALUE,policy=FILE``
(docs/research/2026-11-25-expert-iteration.md, "A policy prior trained on the visit shares").

    OMP_NUM_THREADS=1 python experiments/azsearch_policy_prior.py --games 400 --out /tmp/prior-2p.safetensors
    sorry-eval "azsearch:net=checkpoints/value-2p.safetensors,policy=/tmp/prior-2p.safetensors" heuristic \\
        --games 2000 --seed 0 --workers 1
"""

import argparse
import time

import numpy as np
import torch

from sorry_env.agents.policy import load_policy, save_policy
from sorry_env.agents.value_net import pack
from sorry_env.board import game
from sorry_env.board.policy_input import afterstates
from sorry_env.training import expert_iteration as X

RULES, PLAYERS = "hasbro2003", 2


def policy_loss(net, data: dict, idx: np.ndarray, rules_array: np.ndarray) -> torch.Tensor:
    """Cross-entropy of softmax(scores) over each decision's moves against the visit shares."""
    obs, rows, actions = afterstates(data["states"][idx].astype(np.int64), rules_array)
    logits = net(torch.from_numpy(obs))[:, 0]
    logp = X.segment_log_softmax(logits, torch.from_numpy(rows), len(idx))
    target = torch.from_numpy(data["policy"][idx][rows, actions])
    return -(target * logp).sum() / len(idx)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--net", default="checkpoints/value-2p.safetensors")
    p.add_argument("--games", type=int, default=400)
    p.add_argument("--simulations", type=int, default=64)
    p.add_argument("--prior-temperature", type=float, default=0.1, help="the search's setting the prior starts from")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--held-out", type=float, default=0.1, help="share of the games kept for the loss report")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    params, sizes, _ = pack(args.net)
    settings = {
        "simulations": args.simulations, "c_puct": 0.25, "prior_temperature": args.prior_temperature,
        "noise_alpha": 0.3, "noise_fraction": 0.25, "sample_moves": 8, "lockstep_games": 32,
    }  # fmt: skip
    start = time.process_time()
    data = X.selfplay_games(params, sizes, RULES, PLAYERS, 2000, settings, list(range(args.games)), seed=args.seed)
    print(f"self-play: {args.games} games, {len(data['chosen'])} searched decisions, "
          f"{time.process_time() - start:.0f} CPU-s", flush=True)  # fmt: skip
    held = data["game"] >= round(args.games * (1 - args.held_out))
    train_idx, test_idx = np.flatnonzero(~held), np.flatnonzero(held)
    actor, meta = load_policy(args.net)
    net = actor.net
    with torch.no_grad():  # scores / prior_temperature: the prior the search uses now, exactly
        net.layers[-1].weight /= args.prior_temperature
        net.layers[-1].bias /= args.prior_temperature
    ra = game.rules_array(RULES)
    opt = torch.optim.Adam(net.parameters(), lr=args.lr)
    rng = np.random.default_rng(args.seed)
    with torch.no_grad():
        print(f"held-out policy loss before: {float(policy_loss(net, data, test_idx, ra)):.4f}", flush=True)
    for epoch in range(args.epochs):
        order = rng.permutation(train_idx)
        for s in range(0, len(order), args.batch_size):
            loss = policy_loss(net, data, order[s : s + args.batch_size], ra)
            opt.zero_grad()
            loss.backward()
            opt.step()
        with torch.no_grad():
            print(f"epoch {epoch + 1}: held-out policy loss {float(policy_loss(net, data, test_idx, ra)):.4f}",
                  flush=True)  # fmt: skip
    net.eval()
    save_policy(
        args.out, actor, rules=RULES, num_players=PLAYERS, network=meta["network"], name="azsearch-prior-2p",
        training={"azsearch_policy_prior": {**vars(args), "decisions": int(len(train_idx))}},
    )  # fmt: skip
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
