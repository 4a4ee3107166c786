"""Fill numba's disk caches in one visible step, so no later command stops to compile.

    python -m sorry_env.training.warm

numba compiles a function the first time it is called and keeps the machine code in the
package's ``__pycache__`` (:mod:`sorry_env.numba_cache`); a cold cache costs about half a
minute of CPU (minutes on a busy machine) inside whichever command comes first. This runs,
at a tiny size, what the README's main job and the test suite call: a few rollouts and an
update of ``configs/quick.yaml``'s trainer with its in-training evaluation, a tournament of
the scripted agents, one move of every registered agent, random games of the PettingZoo env
(every preset) and of every other registered game (with one move of each of its agents), the
batched env, and the compiled opponents. Each
compiled function is compiled once per argument types, whatever the rules or sizes, so
small calls fill the cache the large ones use. On a warm cache it takes a few seconds.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

import sorry_env
from sorry_env import agents, games
from sorry_env.agent import GameTurn
from sorry_env.board import game
from sorry_env.board.rules import DEFAULT_PRESET, PRESETS
from sorry_env.game_env import wrap_env

from .config import PPO

QUICK_CONFIG = Path(__file__).resolve().parents[1] / "configs" / "quick.yaml"


def _random_game(make_env: Callable, seed: int) -> None:
    """One PettingZoo game of uniformly random legal moves."""
    rng = np.random.default_rng(seed)
    env = make_env()
    env.reset(seed=seed)
    for _ in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        env.step(None if terminated or truncated else int(rng.choice(np.flatnonzero(obs["action_mask"]))))


def warm_envs() -> None:
    for name in PRESETS:
        rules = sorry_env.get_rules(name)
        players = 4 if rules.teams != "none" else 2
        _random_game(lambda r=name, p=players: sorry_env.env(num_players=p, rules=r), seed=0)
    for kind in games.builtin_game_types():
        if not kind.batched_step:  # the batched game's envs are warmed above, by preset
            warm_game(kind.id)
    from sorry_env.vector import SorryVectorEnv

    _play_vector(SorryVectorEnv(4, num_players=2), 20)


def _play_vector(env, rounds: int) -> None:
    """`rounds` steps of a vector env, each game playing its first legal move."""
    obs, _ = env.reset(seed=0)
    for _ in range(rounds):
        obs, *_ = env.step(np.array([np.flatnonzero(mask)[0] for mask in obs["action_mask"]]))


def warm_game(game_id: str) -> None:
    """A random game of a registered game's env, one move of each of its agents (at their
    smallest settings where they have them), and a two-game tournament."""
    from sorry_env.agents import agents_of_game as agent_makers
    from sorry_env.agents import make_agent
    from sorry_env.agents.arena.tournament import run_tournament

    game = games.load_game(game_id)
    players = game.game_type.player_counts[0]
    _random_game(lambda: wrap_env(game.make_env(players)), seed=0)
    state = game.new_state(players, seed=1)
    for name in agent_makers(game_id):
        spec = {"expectimax": "expectimax:depth=1", "montecarlo": "montecarlo:iterations=4"}.get(name, name)
        agent = make_agent(spec, seed=0, game=game)
        agent.act(GameTurn.from_state(game, state, np.random.default_rng(0)))
    run_tournament(
        ["greedy" if "greedy" in agent_makers(game_id) else "random", "random"], games=2, workers=1, rules=game
    )


def _a_choice(rules: str, players: int) -> np.ndarray:
    """A position with more than one legal move: the search agents play a lone legal move
    without searching, so the first position of a game (a forced move) compiles nothing."""
    state = game.new_state(rules, players, seed=1)
    while len(legal := game.legal_actions(state, rules)) < 2:
        state = game.step(state, rules, int(legal[0]))
    return state


def warm_agents() -> None:
    # Agents that need settings to be made at all, with the smallest that compile their code.
    value_net = agents.catalog.checkpoints_dir() / "value-2p.safetensors"
    specs = {
        "azsearch": f"azsearch:net={value_net},simulations=4",
        "openspiel_mcts": "openspiel_mcts:simulations=4",
        "openspiel_ismcts": "openspiel_ismcts:simulations=4",
    }
    state = _a_choice(DEFAULT_PRESET, 2)
    legal = game.legal_actions(state, DEFAULT_PRESET)
    for name in agents.AGENTS:
        agent = agents.make_agent(specs.get(name, name), seed=0)
        agent.check_game(sorry_env.get_rules(DEFAULT_PRESET), 2)
        agent.act(agents.Turn.from_state(state, DEFAULT_PRESET, np.random.default_rng(0), legal))
    from sorry_env.vector_opponents import VectorOpponentEnv

    _play_vector(VectorOpponentEnv(4, 2, opponents="heuristic", policy_input=True), 10)


def warm_tournament() -> None:
    from sorry_env.agents.arena.tournament import run_tournament

    run_tournament(["heuristic", "random"], 2, games=2, seed=0, workers=1)
    run_tournament(["greedy", "heuristic"], 2, games=1, seed=0, workers=1)


def warm_training(runs_dir: Path) -> None:
    """configs/quick.yaml's trainer at a tiny size, with its evaluations: long enough (8 games
    of 256 learner steps each) for games to end and opponents, snapshots among them, to be
    drawn again, since the snapshots' batched play compiles code of its own."""
    from .train import open_run, run_training

    small = {
        "name": "warm",
        "envs": 8,
        "ppo.n_steps": 64,
        "ppo.batch_size": 256,
        "ppo.n_epochs": 1,
        "budget.timesteps": 2048,
        "evaluation.games": 2,
        "opponents.snapshot_every": 512,
        "checkpoint_every": 2048,
    }
    cfg = PPO.load(QUICK_CONFIG if QUICK_CONFIG.is_file() else None, small)
    run_training(open_run(cfg, runs_dir), resume=False)


STEPS: list[tuple[str, Callable]] = [
    ("environments (every preset, every registered game, the batched env)", warm_envs),
    ("agents (one move each, the compiled opponents)", warm_agents),
    ("tournaments", warm_tournament),
]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.parse_args(argv)
    start = time.perf_counter()
    print(
        "warming numba's caches (once after an install or an edit: about two CPU-minutes, more on a "
        "busy machine; seconds when already warm)",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="sorry-warm-") as tmp:
        steps = [*STEPS, ("the training loop of configs/quick.yaml", lambda: warm_training(Path(tmp)))]
        for k, (what, run) in enumerate(steps, start=1):
            began = time.perf_counter()
            print(f"  [{k}/{len(steps)}] {what}", flush=True)
            with ticking(f"[{k}/{len(steps)}]", sys.stdout):
                run_quietly(run)
            print(f"  [{k}/{len(steps)}] done: {time.perf_counter() - began:.1f} s", flush=True)
    print(f"caches warm ({time.perf_counter() - start:.0f} s)")
    return 0


# Seconds between "still compiling" lines: a step can compile for a minute on a cold cache, and
# a command silent that long looks hung (issue 36 asks for a line at least every 10 s).
TICK_SECONDS = 8.0


@contextlib.contextmanager
def ticking(label: str, out, every: float = TICK_SECONDS):
    """Print `label` and the seconds elapsed to `out` every `every` seconds until the block ends
    (from a thread: the step's own output is hidden, and numba's compiler holds no lock that
    stops a Python thread from running between its passes)."""
    began = time.perf_counter()
    done = threading.Event()

    def tick() -> None:
        while not done.wait(every):
            print(f"      {label} still compiling: {time.perf_counter() - began:.0f} s", file=out, flush=True)

    thread = threading.Thread(target=tick, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


def run_quietly(run: Callable) -> None:
    """Run a warming step with its own printing hidden (progress bars, the trainer's summary,
    numba's compile notice: this command's own lines say what is happening); an error still
    propagates with its traceback."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        run()


if __name__ == "__main__":
    sys.exit(main())
