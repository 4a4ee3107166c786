"""Expert iteration: the network-guided search plays itself, the network learns what the
search concluded, and a new network replaces the old one only if it does not play worse.

    sorry-expit configs/expit-2p.yaml                    # a local Ray
    sorry-expit configs/expit-2p.yaml --address HEAD:6379  # a cluster started with `ray start`

Generation 0 is the network file ``expert_iteration.init`` (an afterstate value network:
its output is the logit of the mover's chance of winning). Generation k = 1, 2, ...:

1. **Self-play.** Both seats play :mod:`sorry_env.agents.azsearch` with the current network, Dirichlet
   noise on the root priors and the first ``sample_moves`` decisions sampled from the visit
   shares. Every decision with a real choice keeps the public position, the search's visit
   shares over the legal moves (its improved policy) and, at the end, whether the mover's
   side won. The games are played by Ray actors (Ray core): the network goes out through the
   object store, the games come back through it; the learner is this process.
2. **Learning.** A copy of the current network is trained on the self-play of the last
   ``window`` generations: binary cross-entropy of the chosen move's afterstate score against
   the outcome (the value), plus ``policy_weight`` times the cross-entropy between the
   visit shares and softmax(afterstate scores / prior_temperature) over the decision's moves
   (the prior the search uses). One network is both, as the search reads it.
3. **Gate.** The candidate (the network alone, as a policy) plays the current network alone;
   it is promoted when its win rate is at least ``gate_threshold`` (interval logged; by
   default the even share, :func:`even_share`: 0.5 with two sides, 0.25 with four players).
4. **Log.** The candidate alone against the heuristic and against generation 0, with 95%
   Wilson intervals, a line of ``log.jsonl`` and the learning-curve PNG.

A run directory holds ``config.json``, ``selfplay-K.npz`` (written when generation K's games
are all in), ``net-K.safetensors`` (ordinary policy files), ``log.jsonl`` and ``state.json``
(the current network and the last finished generation). Run the same command again after a
kill: finished generations are kept, a generation whose self-play file exists skips its
games, so at most one generation's self-play is lost.

A worker that dies is replaced and its unfinished batch of games is played again by the
replacement; batches are keyed by their game indices, so no game is counted twice.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import yaml

from sorry_env import files
from sorry_env.board.rules import get_rules

from . import curve
from .config import EXPIT
from .match import match

SECTION = "expert_iteration"


# ---- self-play ---------------------------------------------------------------------------------
# What a self-play file keeps per decision with a choice (see selfplay_games), and its dtype.
RECORD_FIELDS = {
    "states": np.int16,
    "policy": np.float32,
    "chosen": np.int64,
    "won": np.float32,
    "game": np.int64,
    "searched": np.float32,
}


def selfplay_games(
    params: np.ndarray,
    sizes: np.ndarray,
    rules_name: str,
    num_players: int,
    max_turns: int,
    settings: dict,
    game_indices: list[int],
    seed: int,
) -> dict:
    """Self-play of the search with one network for these games (both seats), up to
    ``settings["lockstep_games"]`` of them side by side: the pending decisions of all the
    running games are searched together (:func:`sorry_env.agents.azsearch.run_search_many`,
    one batched network evaluation per step), and a finished game's place goes to the next.
    Each game draws everything from its own generator, so the records are the same whatever
    the number side by side. Returns the arrays of the decisions with a real choice, in game
    order: ``states`` (the mover's public view, int16), ``policy`` (visit shares over all
    actions, float32), ``chosen``, ``won`` (1 if the mover's side won, 0 if it lost, 0.5 if
    truncated), ``game``, ``searched`` (the search's value of the chosen move for the mover,
    a win chance); plus ``decisions`` (all decisions made, forced ones included) and
    ``seconds``."""
    from sorry_env.agents.azsearch import run_search_many, search_policy
    from sorry_env.agents.base import public_view
    from sorry_env.board import engine as E
    from sorry_env.board import game
    from sorry_env.board.policy_input import STATE_SIZE

    rules = get_rules(rules_name)
    ra = game.rules_array(rules)
    seats = game.DEFAULT_SEATS[num_players]
    n_actions = game.num_actions(rules)
    no_net = (np.zeros(0, np.float32), np.zeros(0, np.int64))
    width = settings.get("lockstep_games", 1)
    records: dict[int, dict[str, list]] = {g: {k: [] for k in RECORD_FIELDS} for g in game_indices}
    decisions = 0
    start = time.perf_counter()
    waiting = list(game_indices)
    running: list[dict] = []  # {"g", "rng", "state", "movers", "view", "seed"}
    while waiting or running:
        while waiting and len(running) < width:
            g = waiting.pop(0)
            rng = np.random.default_rng([seed, g])
            state = game.new_state(rules, seats=seats, seed=int(rng.integers(2**31)))
            E.set_to_move(state, seats[g % len(seats)])
            running.append({"g": g, "rng": rng, "state": state, "movers": []})
        # every running game to its next decision with a choice (forced moves played at once)
        for play in running:
            state, rng = play["state"], play["rng"]
            play["view"] = None
            while E.is_running(state, max_turns):
                legal = game.legal_actions(state, rules)
                if len(legal) > 1:
                    play["view"] = public_view(state, rules, rng)
                    play["seed"] = int(rng.integers(2**31))
                    break
                decisions += 1
                E.step(state, ra, int(legal[0]))
        searching = [play for play in running if play["view"] is not None]
        if searching:
            n = len(searching)
            acts, visits, values = (
                np.empty((n, n_actions), np.int64),
                np.empty((n, n_actions)),
                np.empty((n, n_actions)),
            )
            n_moves = np.zeros(n, np.int64)
            run_search_many(
                np.array([play["view"] for play in searching]), ra, params, sizes, *no_net, settings["simulations"],
                settings["c_puct"], settings["prior_temperature"], settings["noise_alpha"], settings["noise_fraction"],
                np.array([play["seed"] for play in searching], np.int64), acts, visits, values, n_moves,
            )  # fmt: skip
        for k, play in enumerate(searching):
            n, rng, out = n_moves[k], play["rng"], records[play["g"]]
            pi = search_policy(visits[k, :n], values[k, :n])
            if len(play["movers"]) < settings["sample_moves"]:
                action = int(rng.choice(acts[k, :n], p=pi))
            else:
                action = int(acts[k, np.lexsort((-values[k, :n], -visits[k, :n]))[0]])
            dense = np.zeros(n_actions, np.float32)
            dense[acts[k, :n]] = pi
            out["states"].append(play["view"].astype(np.int16))
            out["policy"].append(dense)
            out["chosen"].append(action)
            out["searched"].append(float(values[k, :n][acts[k, :n] == action][0]))
            out["game"].append(play["g"])
            play["movers"].append(int(E.to_move(play["state"])))
            decisions += 1
            E.step(play["state"], ra, action)
        for play in running:
            if not E.is_running(play["state"], max_turns):
                winner = game.winner(play["state"])
                for m in play["movers"]:
                    records[play["g"]]["won"].append(0.5 if winner is None else float(game.same_side(rules, m, winner)))
        running = [play for play in running if E.is_running(play["state"], max_turns)]
    arrays = {k: np.array([v for g in game_indices for v in records[g][k]], RECORD_FIELDS[k]) for k in RECORD_FIELDS}
    arrays["states"] = arrays["states"].reshape(-1, STATE_SIZE)
    arrays["policy"] = arrays["policy"].reshape(-1, n_actions)
    return {**arrays, "decisions": decisions, "seconds": time.perf_counter() - start}


def _worker_class():
    import ray

    @ray.remote(num_cpus=1)
    class SelfPlayWorker:
        """A Ray actor playing batches of self-play games."""

        def __init__(self, rules_name: str, num_players: int, max_turns: int, settings: dict):
            self.args = (rules_name, num_players, max_turns, settings)

        def node(self) -> str:
            import ray

            return ray.get_runtime_context().get_node_id()

        def play(self, net: tuple, game_indices: list[int], seed: int, crash: bool = False) -> dict:
            if crash:  # tests: a worker that dies mid-batch
                os._exit(1)
            # Ray hands the object store's arrays over read-only, which numba compiles as a type of
            # its own: writable copies run the machine code the agent (and the warm-up) compiled.
            params, sizes = (np.array(a) for a in net)
            return selfplay_games(params, sizes, *self.args, game_indices, seed)

    return SelfPlayWorker


class WorkerPool:
    """`workers` self-play actors; batches of games are spread over them, a dead actor is
    replaced and its batch played again."""

    def __init__(self, cfg: dict, workers: int):
        self.cls = _worker_class()
        g, x = cfg["game"], cfg[SECTION]
        self.lockstep_games = x["lockstep_games"]
        self.args = (g["rules"], g["num_players"], g["max_turns"], x)  # the section: the search's settings
        self.actors = [self.cls.remote(*self.args) for _ in range(workers)]
        self.replaced = 0

    def play(self, params: np.ndarray, sizes: np.ndarray, games: int, seed: int, crash_batches=()) -> dict:
        """Games 0..games-1 with this network; the merged arrays (see selfplay_games)."""
        import ray

        net = ray.put((params, sizes))
        # batches of up to lockstep_games (all searched side by side), about two per worker
        size = max(1, min(max(8, self.lockstep_games), -(-games // (2 * len(self.actors)))))
        batches = {b: list(range(s, min(s + size, games))) for b, s in enumerate(range(0, games, size))}
        crash = set(crash_batches)
        todo = sorted(batches)
        results: dict[int, dict] = {}
        running: dict[object, tuple[int, int]] = {}  # object ref -> (batch, actor index)
        while todo or running:
            busy = {i for _, i in running.values()}
            for i in range(len(self.actors)):
                if todo and i not in busy:
                    b = todo.pop(0)
                    ref = self.actors[i].play.remote(net, batches[b], seed, b in crash)
                    crash.discard(b)
                    running[ref] = (b, i)
            done, _ = ray.wait(list(running), num_returns=1)
            b, i = running.pop(done[0])
            try:
                result = ray.get(done[0])
            except ray.exceptions.RayActorError:
                _kill(self.actors[i])
                self.actors[i] = self.cls.remote(*self.args)
                self.replaced += 1
                todo.insert(0, b)
                continue
            results.setdefault(b, result)  # a batch is counted once
        return merge([results[b] for b in sorted(results)])

    def close(self) -> None:
        for actor in self.actors:
            _kill(actor)


def _kill(actor) -> None:
    import ray

    try:
        ray.kill(actor, no_restart=True)
    except ray.exceptions.RaySystemError:
        pass  # already gone


def merge(parts: list[dict]) -> dict:
    fields = [k for k in RECORD_FIELDS if all(k in p for p in parts)]  # files made before "searched" lack it
    out = {k: np.concatenate([p[k] for p in parts]) for k in fields}
    out["decisions"] = sum(p["decisions"] for p in parts)
    out["seconds"] = sum(p["seconds"] for p in parts)
    return out


# ---- learning ----------------------------------------------------------------------------------
def segment_log_softmax(logits, rows, n_rows: int):
    """log softmax of `logits` within each group of equal `rows` (a decision's moves)."""
    from .sb3_policy import segment_log_softmax as within_rows

    return within_rows(logits, rows, n_rows)


def value_labels(data: dict, idx: np.ndarray, mix: float) -> np.ndarray:
    """The value target of decisions idx: the game's outcome for the mover, blended with the
    search's own value of the chosen move by `mix` (0: the outcome alone). The outcome is one
    noisy draw of a luck-heavy game; the search's value averages the network's estimates over
    the card draws it looked at, so a share of it lowers the target's variance."""
    won = data["won"][idx]
    if mix == 0:
        return won
    if "searched" not in data:
        raise ValueError("value_target_mix > 0 needs self-play files that record the search's values ('searched')")
    return ((1.0 - mix) * won + mix * data["searched"][idx]).astype(np.float32)


def losses(net, data: dict, idx: np.ndarray, rules_array: np.ndarray, temperature: float, mix: float = 0.0):
    """(value loss, policy loss, the scores) of afterstate MLP `net` on decisions idx of
    `data`; the scores: (the network's score of each legal move, the move's decision as a row
    of idx, its action). The first layer reads the one-hot observations sparsely
    (training.sb3_policy.sparse_mlp: the same function as the dense product, several times
    less work on one thread)."""
    import torch
    from torch.nn import functional as F

    from sorry_env.board.policy_input import sparse_afterstates

    from .sb3_policy import sparse_mlp

    obs, rows, actions = sparse_afterstates(data["states"][idx].astype(np.int64), rules_array)
    logits = sparse_mlp(net, obs)[:, 0]
    rows_t = torch.from_numpy(rows)
    target = torch.from_numpy(data["policy"][idx][rows, actions])
    logp = segment_log_softmax(logits / temperature, rows_t, len(idx))
    policy_loss = -(target * logp).sum() / len(idx)
    chosen = torch.from_numpy(actions == data["chosen"][idx][rows])
    labels = torch.from_numpy(value_labels(data, idx, mix)[rows])
    value_loss = F.binary_cross_entropy_with_logits(logits[chosen], labels[chosen])
    return value_loss, policy_loss, (logits, rows, actions)


DIAGNOSTIC_CHUNK = 4096  # decisions scored at once (about 40,000 afterstates)


def diagnostics(net, data: dict, rules_array: np.ndarray, temperature: float) -> dict:
    """On self-play data the network has not learned from: its value loss (binary
    cross-entropy against the outcomes; 0.693 is a coin), the policy cross-entropy, and how
    often its best-scored move is the search's most visited one (policy agreement). Scored in
    chunks, so a generation of any size fits in memory."""
    import torch

    n = len(data["chosen"])
    sums, agree = np.zeros(2), 0
    with torch.no_grad():
        for start in range(0, n, DIAGNOSTIC_CHUNK):
            idx = np.arange(start, min(n, start + DIAGNOSTIC_CHUNK))
            v, p, (scores, rows, actions) = losses(net, data, idx, rules_array, temperature)
            sums += [float(v) * len(idx), float(p) * len(idx)]  # one chosen move per decision
            order = np.lexsort((-scores.numpy(), rows))
            first = np.r_[True, rows[order][1:] != rows[order][:-1]]
            best = actions[order][first]
            agree += int(np.sum(best == data["policy"][idx].argmax(axis=1)))
    n_div = max(n, 1)
    return {
        "value_loss": float(sums[0] / n_div),
        "policy_loss": float(sums[1] / n_div),
        "policy_agreement": agree / n_div,
        "decisions": n,
    }


def train_candidate(current: str, data: dict, cfg: dict, seed: int, log=print):
    """A copy of network file `current`, trained on `data` (see the module doc)."""
    import torch

    from sorry_env.agents.policy import load_policy
    from sorry_env.board import game

    x = cfg[SECTION]
    actor, meta = load_policy(current)
    net = actor.net
    net.train()
    ra = game.rules_array(cfg["game"]["rules"])
    opt = torch.optim.Adam(net.parameters(), lr=x["learning_rate"])
    rng = np.random.default_rng(seed)
    n = len(data["chosen"])
    for epoch in range(x["epochs"]):
        order = rng.permutation(n)
        sums = np.zeros(2)
        for s in range(0, n, x["batch_size"]):
            batch = order[s : s + x["batch_size"]]
            v, p, _ = losses(net, data, batch, ra, x["prior_temperature"], x["value_target_mix"])
            loss = v + x["policy_weight"] * p
            opt.zero_grad()
            loss.backward()
            opt.step()
            sums += [float(v.detach()), float(p.detach())]
        batches = max(1, -(-n // x["batch_size"]))
        log(f"  epoch {epoch + 1}: value loss {sums[0] / batches:.4f}, policy loss {sums[1] / batches:.4f}")
    net.eval()
    return actor, meta


# ---- the loop ----------------------------------------------------------------------------------
def _save_npz(path: Path, data: dict) -> None:
    tmp = path.with_name(path.name + ".tmp.npz")
    # numpy's stub lets **kwds also fill savez's allow_pickle: bool, so mypy checks the arrays against bool
    np.savez(tmp, **{k: np.asarray(v) for k, v in data.items()})  # type: ignore[arg-type]
    os.replace(tmp, path)


MAX_SELFPLAY_FILE = 4 * 2**30


MAX_RUN_JSON = 16 * 2**20  # bytes: config.json, state.json and log.jsonl of a run are far smaller


def _load_npz(path: Path) -> dict:
    """A self-play file of this run (bounded in size; arrays only, no pickles)."""
    files.check_regular_file(path, MAX_SELFPLAY_FILE, "self-play file")  # a FIFO or device is never opened
    with np.load(path, allow_pickle=False) as f:
        return {k: f[k] for k in f.files}


def _run_state(path: Path, out: Path, init: str) -> dict:
    """The run's state.json (bounded), or a new run's state. Its current network must be the
    config's `init` or a file of this run directory: a state file names no other path."""
    if not path.exists():
        return {"generation": 0, "current": init}
    state = files.read_json(path, MAX_RUN_JSON, "the run's state.json")
    if not isinstance(state, dict) or not isinstance(state.get("generation"), int) or state["generation"] < 0:
        raise ValueError(f"{path}: not a state file of this run (generation)")
    current = state.get("current")
    inside = isinstance(current, str) and Path(current).resolve().parent == out.resolve()
    if not (current == init or inside):
        raise ValueError(f"{path}: its current network must be the config's init or a file of {out}")
    return state


def even_share(rules: str, num_players: int) -> float:
    """The win rate of a player no better than the rest: 1 / the number of sides (team rules
    play two sides of two)."""
    from sorry_env.agents.arena.stats import sides

    return 1.0 / len(sides(num_players, rules))


def plot_curve(rows: list[dict], out: Path, cfg: dict) -> None:
    """The run's curve.png: the network alone against the heuristic and generation 0."""
    series = {
        label: [(r["generation"], r[key]["win_rate"], r[key]["low"], r[key]["high"]) for r in rows if key in r]
        for key, label in (("vs_heuristic", "network alone vs heuristic"), ("vs_gen0", "network alone vs generation 0"))
    }
    even = even_share(cfg["game"]["rules"], cfg["game"]["num_players"])
    curve.plot_win_rates(series, out / "curve.png", f"expert iteration: {cfg['name']}", even, "generation")


def run(cfg: dict, out: Path, address: str | None = None, log=print) -> list[dict]:
    """Run (or resume) the expert iteration of `cfg` in directory `out`; the log rows."""
    from sorry_env.agents.policy import load_policy, save_policy
    from sorry_env.agents.value_net import pack
    from sorry_env.board import game

    from .rllib_backend import check_address, start_ray

    if address is not None:
        check_address(address)  # first: an unreachable cluster fails in seconds
    x, g = cfg[SECTION], cfg["game"]
    EXPIT.validate(cfg)
    out.mkdir(parents=True, exist_ok=True)
    saved = out / "config.json"
    fixed = {k: v for k, v in cfg.items() if k != SECTION}
    fixed[SECTION] = {k: v for k, v in x.items() if k not in ("workers", "generations", "lockstep_games")}
    if saved.exists():
        if files.read_json(saved, MAX_RUN_JSON, "the run's config.json") != json.loads(json.dumps(fixed)):
            raise ValueError(f"{out} holds a run of another config; use another --out or the same config")
    else:
        files.write_text_atomic(saved, json.dumps(fixed, indent=1))
    state_path = out / "state.json"
    state = _run_state(state_path, out, x["init"])
    log_path = out / "log.jsonl"
    rows = (
        [json.loads(line) for line in files.read_text(log_path, MAX_RUN_JSON, "the run's log.jsonl").splitlines()]
        if log_path.exists()
        else []
    )
    start_ray(address)

    def write_log(rows: list[dict]) -> None:  # and the curve
        files.write_text_atomic(log_path, "".join(json.dumps(r) + "\n" for r in rows))
        plot_curve(rows, out, cfg)

    def versus(policy: str, opponent: str, games: int, seed: int) -> dict:
        return match(policy, opponent, g["num_players"], g["rules"], games, seed)

    if not any(r["generation"] == 0 for r in rows):  # the starting point of the curve
        zero = {"generation": 0, "vs_heuristic": versus(x["init"], "heuristic", x["eval_games"], cfg["seed"] * 1000)}
        log(f"generation 0 ({x['init']}) alone vs heuristic {zero['vs_heuristic']}")
        rows.insert(0, zero)
        write_log(rows)
    pool = WorkerPool(cfg, x["workers"])
    try:
        for k in range(state["generation"] + 1, x["generations"] + 1):
            log(f"generation {k}: self-play with {state['current']}")
            sp = out / f"selfplay-{k}.npz"
            seed = cfg["seed"] * 1000 + k
            if sp.exists():
                data = _load_npz(sp)
            else:
                params, sizes, _ = pack(state["current"])
                data = pool.play(params, sizes, x["games"], seed=seed)
                _save_npz(sp, data)
            rate = float(data["decisions"]) / max(float(data["seconds"]), 1e-9)
            log(
                f"  {len(data['chosen'])} searched decisions ({int(data['decisions'])} in all), {rate:.0f}/s per worker"
            )
            current_actor, _ = load_policy(state["current"])
            diag = diagnostics(current_actor.net, data, game.rules_array(g["rules"]), x["prior_temperature"])
            window = [_load_npz(out / f"selfplay-{j}.npz") for j in range(max(1, k - x["window"] + 1), k)] + [data]
            train_data = merge(window)
            actor, meta = train_candidate(state["current"], train_data, cfg, seed=seed, log=log)
            cand = out / f"net-{k}.safetensors"
            save_policy(
                cand, actor, rules=g["rules"], num_players=g["num_players"], network=meta["network"],
                name=f"expit-{cfg['name']}-gen{k}",
                training={"expert_iteration": {"generation": k, "parent": str(state["current"]),
                                               "decisions": int(len(train_data["chosen"]))}},
            )  # fmt: skip
            gate = versus(str(cand), state["current"], x["gate_games"], seed)
            threshold = x["gate_threshold"]
            promoted = gate["win_rate"] >= (
                even_share(g["rules"], g["num_players"]) if threshold is None else threshold
            )
            row = {
                "generation": k,
                "selfplay_decisions": int(data["decisions"]),
                "selfplay_decisions_per_s_per_worker": rate,
                "before_training_on_new_games": diag,
                "gate": gate,
                "promoted": bool(promoted),
                "vs_heuristic": versus(str(cand), "heuristic", x["eval_games"], seed),
                "vs_gen0": versus(str(cand), x["init"], x["eval_games"], seed),
                "workers_replaced": pool.replaced,
            }
            log(f"  gate {gate}, promoted {promoted}; vs heuristic {row['vs_heuristic']}; vs gen0 {row['vs_gen0']}")
            rows.append(row)
            write_log(rows)
            if promoted:
                state["current"] = str(cand)
            state["generation"] = k
            files.write_text_atomic(state_path, json.dumps(state, indent=1))
    finally:
        pool.close()
    return rows


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description="Expert iteration: network-guided search self-play on Ray.")
    p.add_argument("config", help="YAML config (configs/expit-*.yaml; the expert_iteration section)")
    p.add_argument("--out", help="run directory (default runs/<name>); run again to resume")
    p.add_argument("--address", help="HOST:PORT of a Ray head started with `ray start --head` (default: local Ray)")
    p.add_argument("--workers", type=int, help="override expert_iteration.workers")
    args = p.parse_args(argv)
    if importlib.util.find_spec("ray") is None:  # before anything is read or made
        p.exit(2, "sorry-expit: needs Ray, which is not installed: pip install 'sorry-env[rllib]'\n")
    try:
        cfg = EXPIT.load(args.config, {} if args.workers is None else {f"{SECTION}.workers": args.workers})
        run(cfg, Path(args.out or Path("runs") / cfg["name"]), args.address)
    except (OSError, ValueError, yaml.YAMLError) as e:
        sys.exit(f"sorry-expit: {e}")


if __name__ == "__main__":
    main()
