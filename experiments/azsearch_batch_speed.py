"""CPU milliseconds per decision of the network-guided search (azsearch), one position at a time
against many games' positions searched in lockstep (run_search_many), on one core; and the
network alone per scored position with three batched evaluators (the numba kernel the search
uses, numpy's float32 matmul, torch with one thread). The figures of
docs/research/2026-11-25-expert-iteration.md, "Batched search".

    OMP_NUM_THREADS=1 python experiments/azsearch_batch_speed.py --positions 128
    # the tree before batching, from its checkout:
    OMP_NUM_THREADS=1 python PATH/TO/experiments/azsearch_batch_speed.py --batches 0 --searches-only
"""

import argparse
import os
import time

import numpy as np
import torch

from sorry_env import agents
from sorry_env.agents.azsearch import run_search
from sorry_env.agents.base import Turn
from sorry_env.agents.policy import load_policy
from sorry_env.agents.value_net import pack
from sorry_env.board import engine as E
from sorry_env.board import game
from sorry_env.board.observation import OBS_SIZE
from sorry_env.board.policy_input import afterstates

NO_NET = (np.zeros(0, np.float32), np.zeros(0, np.int64))
C_PUCT, PRIOR_TEMPERATURE = 0.25, 0.1  # the agent's defaults


def decisions(count: int, seed: int) -> np.ndarray:
    """Public states of `count` decisions with at least two legal moves from heuristic games."""
    rules = game.rules_array("hasbro2003")
    rng = np.random.default_rng(seed)
    heuristic = agents.make_agent("heuristic", seed=seed)
    out = []
    while len(out) < count:
        state = game.new_state("hasbro2003", seats=game.DEFAULT_SEATS[2], seed=int(rng.integers(2**31)))
        while E.is_running(state, 400) and len(out) < count:
            turn = Turn.from_state(state, "hasbro2003", rng)
            if len(turn.legal) >= 2:
                out.append(turn.state)
            E.step(state, rules, heuristic.act(turn))
    return np.array(out)


def search_ms(states, params, sizes, simulations: int, batch: int) -> float:
    """CPU milliseconds (this process's) per decision searching `states`, `batch` at a time
    (0: run_search)."""
    rules = game.rules_array("hasbro2003")
    size = game.num_actions("hasbro2003")
    start = time.process_time()
    if batch == 0:
        acts, visits, values = np.empty(size, np.int64), np.empty(size), np.empty(size)
        for i, state in enumerate(states):
            run_search(state, rules, params, sizes, *NO_NET, simulations, C_PUCT, PRIOR_TEMPERATURE, 0.3, 0.0, i,
                       acts, visits, values)  # fmt: skip
    else:
        from sorry_env.agents.azsearch import run_search_many  # (not in trees before batching: --searches-only)

        for s in range(0, len(states), batch):
            part = states[s : s + batch]
            g = len(part)
            acts, visits, values = np.empty((g, size), np.int64), np.empty((g, size)), np.empty((g, size))
            run_search_many(part, rules, params, sizes, *NO_NET, simulations, C_PUCT, PRIOR_TEMPERATURE, 0.3, 0.0,
                            np.arange(g), acts, visits, values, np.zeros(g, np.int64))  # fmt: skip
    return 1000 * (time.process_time() - start) / len(states)


def network_us(states, net_path: str, rows: int, repeat: int) -> dict:
    """CPU microseconds per scored position for a batch of `rows` afterstate observations."""
    from sorry_env.agents.value_net import net_logits

    obs, _, _ = afterstates(states.astype(np.int64), game.rules_array("hasbro2003"))
    x = np.ascontiguousarray(np.resize(obs[:, :OBS_SIZE], (rows, OBS_SIZE)).astype(np.float32))
    params, sizes, _ = pack(net_path)
    actor, _ = load_policy(net_path)
    weights = [layer.weight.detach().numpy().T.copy() for layer in actor.net.layers]
    biases = [layer.bias.detach().numpy() for layer in actor.net.layers]

    def numpy_forward():
        h = x
        for k, (w, b) in enumerate(zip(weights, biases)):
            h = h @ w + b
            if k < len(weights) - 1:
                np.maximum(h, 0.0, out=h)
        return h

    out = np.empty(rows, np.float32)
    xt = torch.from_numpy(x)
    timed = {
        "numba (run_search_many's)": lambda: net_logits(params, sizes, x, rows, out),
        "numpy float32 matmul": numpy_forward,
        "torch, 1 thread": lambda: actor.net(xt),
    }
    result = {}
    with torch.no_grad():
        for name, fn in timed.items():
            fn()
            start = time.process_time()
            for _ in range(repeat):
                fn()
            result[name] = 1e6 * (time.process_time() - start) / (repeat * rows)
    return result


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--positions", type=int, default=128, help="decisions searched per setting (a multiple of 128)")
    p.add_argument("--simulations", default="16,64,256")
    p.add_argument("--batches", default="0,8,32,128", help="games per lockstep search; 0: one at a time")
    p.add_argument("--net", default="checkpoints/value-2p.safetensors")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--searches-only", action="store_true", help="only the search table (runs on older trees too)")
    args = p.parse_args()
    torch.set_num_threads(1)
    states = decisions(args.positions, args.seed)
    params, sizes, _ = pack(args.net)
    # machine code loaded before timing
    for batch in {int(b) for b in args.batches.split(",")}:
        search_ms(states[:8], params, sizes, 2, batch)
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    for simulations in (int(s) for s in args.simulations.split(",")):
        cells = []
        for batch in (int(b) for b in args.batches.split(",")):
            ms = search_ms(states, params, sizes, simulations, batch)
            cells.append(f"{'one at a time' if batch == 0 else f'batch {batch}'} {ms:.2f} ms")
        print(f"{simulations} simulations: " + ", ".join(cells), flush=True)
    if args.searches_only:
        return
    # the search's own work (tree, engine, observations): the same searches with a network of one
    # linear layer from the observation to the output (no hidden layers to compute)
    linear = (np.zeros(OBS_SIZE + 1, np.float32), np.array([OBS_SIZE, 1], np.int64))
    for batch in (0, 32):
        full = search_ms(states, params, sizes, 64, batch)
        bare = search_ms(states, *linear, 64, batch)
        label = "one at a time" if batch == 0 else f"batch {batch}"
        print(f"64 simulations, {label}: {full:.2f} ms, of which the search without the network {bare:.2f} ms")
    for rows in (40, 160, 640):
        timings = network_us(states, args.net, rows, max(3, 20000 // rows))
        print(f"network alone, {rows} rows: " + ", ".join(f"{k} {v:.2f} us" for k, v in timings.items()), flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
