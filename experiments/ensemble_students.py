"""Average several afterstate policies into one afterstate policy file, and measure it.

K afterstate networks of the same depth score a move by the mean of their scores with one
wider network, exactly: the first layers stacked (K*h1 units), each further hidden layer
block-diagonal (zeros between the members), the output layer the members' output weights
side by side divided by K (bias: the mean). The result is an ordinary policy file, so every
tool loads it; averaging members trained on other data or from other starts lowers the
noise of each one's move ranking.

    python experiments/ensemble_students.py A.safetensors B.safetensors --out ens.safetensors --games 2000

Results and commands: docs/research/2026-11-24-flagship-2p.md.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch
from distil_students import against_heuristic  # experiments/ is the script's directory

from sorry_env.agents.policy import Actor, load_policy, save_policy
from sorry_env.board.policy_input import rules_from_dict


def ensemble(actors: list[Actor], rules) -> Actor:
    """One afterstate Actor whose score is the mean of `actors`' scores (same depth)."""
    depths = {len(a.net.layers) for a in actors}
    if len(depths) != 1:
        raise ValueError(f"the members must have the same number of layers, got {sorted(depths)}")
    layers = list(zip(*(a.net.layers for a in actors)))  # layers[i]: every member's layer i
    out = Actor("afterstate", [sum(m.out_features for m in layer) for layer in layers[:-1]], "relu", rules)
    with torch.no_grad():
        for i, (merged, members) in enumerate(zip(out.net.layers, layers)):
            weights = [m.weight for m in members]
            if i == len(layers) - 1:  # the output: the members' scores averaged
                merged.weight.copy_(torch.cat(weights, dim=1) / len(members))
                merged.bias.copy_(sum(m.bias for m in members) / len(members))
                continue
            # the first layer reads one input: stacked; later ones read only their member's units
            merged.weight.copy_(torch.cat(weights) if i == 0 else torch.block_diag(*weights))
            merged.bias.copy_(torch.cat([m.bias for m in members]))
    return out


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("members", nargs="+", help="afterstate policy files of one game (at least two)")
    p.add_argument("--out", required=True)
    p.add_argument("--games", type=int, default=2000, help="games against the heuristic (0: none)")
    args = p.parse_args(argv)
    if len(args.members) < 2 or args.games < 0:
        p.error("give at least two member files, and --games >= 0")
    loaded = []
    for path in args.members:
        if not Path(path).is_file():
            p.error(f"no file {path!r}")
        try:
            loaded.append(load_policy(path))
        except ValueError as e:
            p.error(str(e))
    metas = [meta for _, meta in loaded]
    if any(meta["network"]["kind"] != "afterstate" or meta["network"]["activation"] != "relu" for meta in metas):
        p.error("every member must be an afterstate network with relu activations")
    if any((m["rules"], m["num_players"]) != (metas[0]["rules"], metas[0]["num_players"]) for m in metas):
        p.error("the members are of different games")
    rules, players = rules_from_dict(metas[0]["rules"]), metas[0]["num_players"]
    try:
        actor = ensemble([actor for actor, _ in loaded], rules)
    except ValueError as e:
        p.error(str(e))
    network = {
        "kind": "afterstate",
        "hidden": [layer.out_features for layer in actor.net.layers[:-1]],
        "activation": "relu",
    }
    training = {"ensemble": {"members": args.members, "trainings": [meta["training"] for meta in metas]}}
    save_policy(
        args.out, actor, rules=rules, num_players=players, network=network, name=Path(args.out).stem, training=training
    )
    print(f"ensemble of {len(loaded)} ({network['hidden']}) -> {args.out}")
    if args.games:
        print(against_heuristic(args.out, rules, players, args.games))


if __name__ == "__main__":
    main()
