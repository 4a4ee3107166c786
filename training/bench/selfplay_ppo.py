"""sorry-bench's ``selfplay_ppo`` baseline: the single-file masked PPO of
``examples/selfplay_ppo.py`` (installed as ``sorry_env.examples.selfplay_ppo``), run by the
benchmark, and the loader of the networks it saves.

    sorry-bench run selfplay_ppo 2p-selfplay --seed 0
    sorry-eval "sorry_env.training.bench.selfplay_ppo:agent:path=mine.safetensors" heuristic

The trainer is that file, read top to bottom (CleanRL style), which imports nothing from
``sorry_env.training``: this adapter imports it (the loop, its settings, its network), never the
other way round. ``python -m sorry_env.training.bench.selfplay_ppo`` runs it as the example does.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from sorry_env.examples import selfplay_ppo as single_file

SETTINGS = single_file.SETTINGS  # the same dict: sorry-bench records it, tests shrink it
main = single_file.main

MAX_HIDDEN = 8192  # the widest network a saved file may ask for (a crafted header must not allocate gigabytes)


def agent(path: str = "", seed: int | None = None):
    """A network saved by the single file (``--save``, or a sorry-bench run's
    ``network.safetensors``) as an agent: ``sorry_env.training.bench.selfplay_ppo:agent:path=FILE``
    wherever an agent spec goes. It plays its greedy (argmax) move."""
    from sorry_env.board.observation import OBS_SIZE

    from .network_agent import SavedNetworkAgent, load_network

    def build(n_actions: int, record: dict):
        hidden = record.get("hidden")  # the width it was trained with, checked before anything is allocated
        if type(hidden) is not int or not 1 <= hidden <= MAX_HIDDEN:
            raise ValueError(f"{path}: its metadata gives no network width from 1 to {MAX_HIDDEN} (hidden)")
        return single_file.Network(OBS_SIZE, n_actions, hidden)

    net, game = load_network(build, path, "selfplay_ppo")
    return SavedNetworkAgent(lambda obs: net.actor(obs), "selfplay_ppo", game)


def train(task, seed: int, budget: int, run_dir: Path, curve, curve_every: int):
    """sorry-bench's entry: self-play tasks against the frozen copy, others against the
    task's opponents; the greedy network evaluated every `curve_every` learner steps."""
    from .network_agent import NetworkAgent, save_network
    from .tasks import SELF_PLAY

    args = argparse.Namespace(
        **SETTINGS,
        total_timesteps=budget,
        num_players=task.players,
        rules=task.rules,
        opponents=None if task.learner == SELF_PLAY else list(task.opponents),
        seed=seed,
    )

    def agent_of(net) -> NetworkAgent:
        return NetworkAgent(lambda obs: net.actor(obs), "selfplay_ppo")

    def on_update(steps: int, net) -> None:
        curve.check(steps, agent_of(net), curve_every)

    def quiet(*_args, **_kwargs) -> None:
        pass

    net = single_file.train_ppo(args, on_update=on_update, log=quiet)
    steps = max(1, budget // (args.num_envs * args.num_steps)) * args.num_envs * args.num_steps
    curve.finish(steps, agent_of(net))
    save_network(net, run_dir / "network.safetensors", "selfplay_ppo", task.rules, task.players, hidden=args.hidden)
    return agent_of(net)


if __name__ == "__main__":
    main()
