"""Distil a search agent into an afterstate policy: the moves' values as soft targets.

A policy network cannot search at play time, but it can learn what a search concluded.
The teacher is the Monte Carlo agent (:mod:`sorry_env.agents.montecarlo`) with a value network at its
playouts' ends; it plays one seat against heuristic players (the opponent the policy has
to beat), and at each of its decisions with a real choice it estimates every legal move's
chance of winning (:func:`sorry_env.agents.montecarlo.monte_carlo_values`). The games run in compiled code
(`search_games`).

The student is an ``afterstate`` actor: one score per move, from the position the move
leads to. It learns the teacher's judgement of all the moves, not only the one it chose:
the target is softmax(values / temperature) over the decision's moves and the loss the
cross-entropy of the student's softmax over the same moves (:func:`distil`). With a
temperature of a hundredth, a move the teacher rates one point of win chance better gets
e (2.7) times the weight.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from pathlib import Path
from typing import TYPE_CHECKING, cast

import numpy as np
import torch
from numba import njit
from tqdm import tqdm

from sorry_env import files
from sorry_env.agents import set_torch_threads
from sorry_env.agents.montecarlo import monte_carlo_values
from sorry_env.agents.policy import Actor, load_policy
from sorry_env.agents.value_net import NO_NET, pack
from sorry_env.board import engine as E
from sorry_env.board import game
from sorry_env.board.evaluation import DEFAULT_WEIGHTS
from sorry_env.board.policy_input import public_state, sparse_afterstates
from sorry_env.board.rules import DEFAULT_MAX_TURNS
from sorry_env.board.scripted_choices import heuristic_choice
from sorry_env.training.sb3_policy import ActorCritic, sparse_mlp

if TYPE_CHECKING:
    from sb3_contrib import MaskablePPO

CHUNK = 2000  # teacher decisions per task
# The saved decisions of a run (teacher_decisions.npz): the 300,000-decision set is far smaller.
MAX_TEACHER_BYTES = 8 * 1024**3


@njit(cache=True)
def search_games(rules, active, w, seed, iterations, rollout_plies, params, sizes, max_turns, states, values, counts):
    """Play teacher-vs-heuristic games until `states` is full; the teacher's seat rotates
    over the active seats game by game. Row k: states[k] the public state at a teacher
    decision (card drawn) and values[k, :counts[k]] the teacher's estimates of its legal
    actions, in the order E.legal_actions lists them. Returns the number of games played."""
    seats = np.flatnonzero(active)
    buf = E.action_buffer(rules)
    row_values = np.empty(E.num_actions(rules))
    state = np.zeros(E.STATE_SIZE, dtype=np.int64)
    public = np.empty(E.STATE_SIZE, dtype=np.int64)
    seeds = np.zeros(E.STATE_SIZE, dtype=np.int64)  # a generator for the teacher's searches
    E.seed_generator(seeds, (seed ^ 0x2545F491) & 0xFFFFFFFF)
    k = 0
    g = 0
    while k < states.shape[0]:
        teacher = seats[g % seats.shape[0]]
        E.init_state(state, rules, active, (seed + 104729 * g) & 0xFFFFFFFF)
        while E.is_running(state, max_turns) and k < states.shape[0]:
            n = E.legal_actions(state, rules, buf)
            if n == 1:
                action = buf[0]
            elif E.to_move(state) != teacher:
                action = heuristic_choice(state, rules, w, buf, n)
            else:
                monte_carlo_values(
                    state,
                    rules,
                    w,
                    buf,
                    n,
                    E.randint(seeds, 1 << 31),
                    iterations,
                    rollout_plies,
                    0.0,
                    params,
                    sizes,
                    row_values,
                )
                public_state(state, public)
                states[k] = public
                values[k, :n] = row_values[:n]
                counts[k] = n
                k += 1
                action = buf[np.argmax(row_values[:n])]
            E.step(state, rules, action)
        g += 1
    return g


def collect(
    rules_name: str,
    num_players: int,
    decisions: int,
    iterations: int,
    rollout_plies: int,
    value: str | None,
    seed: int,
    max_turns: int = DEFAULT_MAX_TURNS,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(states, values, counts, games) of `decisions` teacher decisions (one process)."""
    rules_array = game.rules_array(rules_name)
    params, sizes = NO_NET if value is None else pack(value)[:2]
    set_torch_threads()  # a worker process: one torch thread unless SORRY_TORCH_THREADS says otherwise
    active = np.zeros(4, dtype=np.int64)
    active[list(game.seats_for(num_players, rules=rules_name))] = 1
    width = game.num_actions(rules_name)
    states = np.zeros((decisions, E.STATE_SIZE), dtype=np.int64)
    values = np.zeros((decisions, width), dtype=np.float32)
    counts = np.zeros(decisions, dtype=np.int64)
    games = search_games(
        rules_array,
        active,
        DEFAULT_WEIGHTS.array(),
        int(seed),
        int(iterations),
        int(rollout_plies),
        params,
        sizes,
        int(max_turns),
        states,
        values,
        counts,
    )
    return states, values, counts, games


def teacher_data(cfg: dict, path: Path, log: Callable[[str], object] = print) -> dict:
    """The teacher decisions of a config, generated by `workers` processes (the same games
    for any number of them), or read from `path` where an earlier (interrupted) session of
    the run saved them. A saved set with the same settings but fewer decisions (a whole
    number of chunks) is extended: its chunks are the first chunks of the longer set, so
    only the rest are played."""
    d, g = cfg["distillation"], cfg["game"]
    made_by = _made_by(cfg, d["decisions"])
    reused: dict | None = None
    if path.exists():
        # The run's own file, but still checked for type and size before numpy opens it
        # (np.load refuses pickled arrays by default: allow_pickle=False).
        files.check_regular_file(path, MAX_TEACHER_BYTES, "saved teacher decisions")
        with np.load(path) as saved:
            saved_by = str(saved["made_by"]) if "made_by" in saved else None
            if saved_by == made_by:
                log(f"distillation: teacher decisions from {path}")
                return dict(saved)
            prefix = len(saved["counts"]) if saved_by is not None else 0
            if 0 < prefix < d["decisions"] and prefix % CHUNK == 0 and saved_by == _made_by(cfg, prefix):
                reused = dict(saved)
        if reused is None:
            log(f"distillation: {path} was made with other settings; playing the teacher games again")
        else:
            log(f"distillation: extending the {len(reused['counts'])} teacher decisions in {path}")
    # Chunks of CHUNK decisions, each with its own seed, feed a progress bar and keep the
    # result independent of the number of workers.
    first_chunk = 0 if reused is None else len(reused["counts"]) // CHUNK
    sizes = [min(CHUNK, d["decisions"] - first) for first in range(0, d["decisions"], CHUNK)]
    start = time.time()
    todo = d["decisions"] - first_chunk * CHUNK
    log(
        f"distillation: {todo} decisions of montecarlo:iterations={d['iterations']} "
        f"against heuristic players on {d['workers']} processes"
    )
    jobs = [
        (
            g["rules"],
            g["num_players"],
            sizes[i],
            d["iterations"],
            d["rollout_plies"],
            d["value"],
            cfg["seed"] * 100_003 + 17 * i,
        )
        for i in range(first_chunk, len(sizes))
    ]
    with tqdm(total=todo, desc="teacher decisions", unit="decision") as bar:
        if d["workers"] == 1:  # played here: no interpreter to start and import for one worker
            parts = []
            for job in jobs:
                parts.append(collect(*job))
                bar.update(len(parts[-1][2]))
        else:
            with ProcessPoolExecutor(d["workers"], mp_context=get_context("spawn")) as pool:
                futures = [pool.submit(collect, *job) for job in jobs]
                for done in as_completed(futures):
                    bar.update(len(done.result()[2]))
                parts = [f.result() for f in futures]
    if reused is not None:
        parts.insert(0, (reused["states"], reused["values"], reused["counts"], int(reused["games"])))
    width = int(max(p[2].max() for p in parts))
    data = {
        "states": np.concatenate([p[0] for p in parts]),
        "values": np.concatenate([value_columns(p[1], width) for p in parts]),
        "counts": np.concatenate([p[2] for p in parts]),
        "games": np.array(sum(p[3] for p in parts)),
        "seconds": np.array(time.time() - start + (0.0 if reused is None else float(reused["seconds"]))),
        "made_by": np.array(made_by),
    }
    # numpy's stub lets **kwds also fill savez's allow_pickle: bool, so mypy checks the arrays against bool
    np.savez(path, **data)  # type: ignore[arg-type]
    log(
        f"distillation: {len(data['counts'])} decisions from {int(data['games'])} games "
        f"in {float(data['seconds']):.0f} s"
    )
    return data


def _made_by(cfg: dict, decisions: int) -> str:
    """What a config's teacher games depend on (not how the student is trained on them),
    for `decisions` of them."""
    d = cfg["distillation"]
    teacher = {key: d[key] for key in ("iterations", "rollout_plies", "value")} | {"decisions": decisions}
    return json.dumps({"teacher": teacher, "game": cfg["game"], "seed": cfg["seed"], "chunk": CHUNK}, sort_keys=True)


def value_columns(values: np.ndarray, width: int) -> np.ndarray:
    """`values` cut or zero-padded to `width` columns (sets differ in their widest decision)."""
    if values.shape[1] >= width:
        return values[:, :width]
    return np.pad(values, ((0, 0), (0, width - values.shape[1])))


def distil(
    actor: Actor,
    rules_array: np.ndarray,
    states: np.ndarray,
    values: np.ndarray,
    counts: np.ndarray,
    *,
    epochs: int,
    batch_size: int,
    lr: float,
    temperature: float,
    seed: int,
    log: Callable[[str], object] = print,
) -> dict:
    """Train `actor` (kind afterstate) towards softmax(values / temperature) over each
    decision's moves. Returns the last epoch's loss and the share of decisions where the
    student's best move is the teacher's."""
    optimizer = torch.optim.Adam(actor.parameters(), lr=lr)
    rng = np.random.default_rng(seed)
    stats = {}
    for epoch in range(epochs):
        order = rng.permutation(len(states))
        losses, agree, start = [], 0, time.time()
        for first in tqdm(
            range(0, len(order), batch_size), desc=f"distil epoch {epoch + 1}/{epochs}", unit="batch", leave=False
        ):
            idx = order[first : first + batch_size]
            obs, rows, _ = sparse_afterstates(states[idx], rules_array)
            # Rows of one decision are consecutive and in engine order, like values[b, :counts[b]].
            position = np.arange(len(rows)) - np.repeat(np.cumsum(counts[idx]) - counts[idx], counts[idx])
            scores = sparse_mlp(actor.net, obs)[:, 0]  # the first layer over the nonzero entries only
            logits = torch.full((len(idx), int(counts[idx].max())), float("-inf"))
            logits = logits.index_put((torch.from_numpy(rows), torch.from_numpy(position)), scores)
            target = torch.full_like(logits, float("-inf"))
            target[rows, position] = torch.from_numpy(values[idx][rows, position] / temperature)
            target = torch.softmax(target, dim=1)
            log_p = torch.log_softmax(logits, dim=1).masked_fill(target == 0, 0.0)
            loss = -(target * log_p).sum(1).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            agree += int((logits.argmax(1) == target.argmax(1)).sum())
        stats = {"loss": float(np.mean(losses)), "agreement": agree / len(order)}
        log(
            f"distil epoch {epoch + 1}: loss {stats['loss']:.4f}, agreement with the teacher "
            f"{stats['agreement']:.1%} ({time.time() - start:.0f} s)"
        )
    return stats


def warm_start(model: MaskablePPO, cfg: dict, run_dir: Path, log: Callable[[str], object] = print) -> dict:
    """Distil the config's search teacher into the model's actor (optionally starting from
    another afterstate network's weights). Returns statistics for the run state."""
    d = cfg["distillation"]
    # typed as sb3's MlpExtractor; the native trainer's SelfPlayPolicy builds an ActorCritic
    actor = cast(ActorCritic, model.policy.mlp_extractor).actor  # an afterstate actor: training.config.validate checked
    if d["init"] is not None:  # validate checked its sizes too
        actor.net.load_state_dict(load_policy(d["init"])[0].net.state_dict())
    data = teacher_data(cfg, run_dir / "teacher.npz", log)
    model.policy.set_training_mode(True)
    stats = distil(
        actor,
        game.rules_array(cfg["game"]["rules"]),
        data["states"],
        data["values"],
        data["counts"],
        epochs=d["epochs"],
        batch_size=d["batch_size"],
        lr=d["learning_rate"],
        temperature=d["temperature"],
        seed=cfg["seed"],
        log=log,
    )
    model.policy.set_training_mode(False)
    return {
        "decisions": int(len(data["counts"])),
        "games": int(data["games"]),
        "teacher_seconds": float(data["seconds"]),
        **stats,
    }
