"""Self-play PPO on Ray RLlib (new API stack): one machine or a Ray cluster.

    sorry-train-rllib configs/rllib-2p.yaml                        # embedded local Ray
    sorry-train-rllib configs/rllib-2p.yaml --address HEAD:6379    # an existing cluster
    sorry-train-rllib configs/rllib-2p.yaml --resume --trust-run-dir  # continue after a kill

One shared policy (module ``shared``) plays every learning seat; each game, every seat but
one learning seat draws from the opponent mix: ``self`` (the shared policy again),
a scripted agent name (``agents.AGENTS``), or ``snapshots`` (a frozen copy of the learner).
Frozen opponents move inside the env adapter (:class:`SorryMultiAgentEnv`), so RLlib only
ever sees the learning seats. Snapshot weights travel to the env runners through Ray (not
through files), so remote nodes need no shared disk.

The policy network (:class:`MaskedMLPModule`) is an MLP over the 1184-float observation
laid out exactly as the ``mlp`` kind of :mod:`sorry_env.agents.policy`, so exporting is renaming
tensors: the run directory's ``policy.safetensors`` loads in ``sorry-eval``/``sorry-play``.

Run directory ``<runs_dir>/<name>/``: ``rllib_run.json`` (the marker: config, iteration,
steps, snapshots), ``checkpoint/`` (RLlib's ``save_to_path``: learner, optimizer and
iteration counter), ``pool/`` (snapshot policy files), ``policy.safetensors`` (the result).
RLlib checkpoints hold pickles: ``--resume`` restores one only with ``--trust-run-dir``
(it runs code from that folder), and the marker's snapshots must be files in ``pool/``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sorry_env import files
from sorry_env.checks import excerpt

from .checkpoint import RunDirectory
from .config import RLLIB, SELF, SNAPSHOTS
from .export import export_actor
from .opponents import OpponentPool

MODULE_ID = "shared"
MARKER = "rllib_run.json"


# The validated config of YAML file `path` (or a shipped config's name) over RLLIB's defaults.
load_config = RLLIB.load


# -- the environment ----------------------------------------------------------------------


def _multi_agent_env_base():
    try:
        from ray.rllib.env.multi_agent_env import MultiAgentEnv
    except ImportError:  # without the rllib extra the module still imports; main() says what to install
        return object
    return MultiAgentEnv


# mypy cannot follow a base class chosen at run time: it checks the class as RLlib's MultiAgentEnv
if TYPE_CHECKING:
    from ray.rllib.env.multi_agent_env import MultiAgentEnv as _MultiAgentEnvBase
else:
    _MultiAgentEnvBase = _multi_agent_env_base()


class SorryMultiAgentEnv(_MultiAgentEnvBase):
    """RLlib MultiAgentEnv over the PettingZoo AEC env ``sorry_env.raw_env``.

    Turn-based: an observation is returned only for the learning seat to move; frozen
    opponents (scripted agents, snapshots) move inside ``step``/``reset``. At the end every
    learning seat that has played gets its final reward and ``terminated``/``truncated``.
    RLlib's own PettingZoo wrapper is not used: it exposes every seat to RLlib, where frozen
    opponents are wanted inside the env, and it does not know when a game is truncated.
    """

    def __init__(self, config: dict | None = None):
        super().__init__()
        from sorry_env import raw_env

        # RLlib's EnvContext (a dict) says which env runner and vector slot this env is
        worker, vector = getattr(config, "worker_index", 0), getattr(config, "vector_index", 0)
        config = dict(config or {})
        # the game's rules and max_turns, raw_env's defaults where not given
        game = {key: config[key] for key in ("rules", "max_turns") if key in config}
        self.game = raw_env(num_players=config.get("num_players", 2), **game)
        # The pool draws each opponent seat's kind; its mix is set past OpponentPool's check_mix,
        # which knows no SELF (the config's own check, _rllib_facts, allows it).
        self.pool = OpponentPool({SNAPSHOTS: 1.0}, snapshot_window=int(config.get("snapshot_window", 5)))
        self.pool.mix = {k: float(w) for k, w in config.get("mix", {SELF: 1.0}).items() if w > 0}
        self.rng = np.random.default_rng([int(config.get("seed", 0)), worker, vector])
        self.possible_agents = list(self.game.possible_agents)
        self.agents = []
        self.observation_spaces = dict(self.game.observation_spaces.items())  # items(): keys typed as RLlib's AgentID
        self.action_spaces = dict(self.game.action_spaces.items())
        self.frozen: dict = {}  # agent -> the frozen Agent playing it this game
        self._scripted: dict = {}
        self._played: set = set()

    def set_snapshots(self, snapshots: list) -> None:
        """Frozen copies of the learner, as (name, bytes of its policy file), newest last. The
        bytes come through Ray, so a remote node needs no copy of the run directory."""
        import tempfile

        from sorry_env.agents.policy import PolicyAgent

        agents: list = []  # (PolicyAgents: the pool's list also holds None for a dropped snapshot)
        for name, data in snapshots[-self.pool.snapshot_window :]:
            with tempfile.TemporaryDirectory() as tmp:  # the loader reads files, with all its checks
                path = Path(tmp) / f"{name.replace('/', '_')}.safetensors"
                path.write_bytes(data)
                agent = PolicyAgent(path, seed=int(self.rng.integers(2**31)), sample=True)
            agent.check_game(self.game.rules, len(self.possible_agents))
            agents.append(agent)
        self.pool.snapshot_agents = agents  # frozen PolicyAgents, newest last

    def _draw(self):
        """The frozen agent playing one opponent seat, or None where the learner plays it."""
        from sorry_env.agents import make_agent

        try:
            kind = self.pool.draw(self.rng)
        except ValueError:  # only snapshots in the mix and none yet: the learner plays the seat
            return None
        if kind == SELF:
            return None
        if kind.startswith("snapshot_"):
            return self.pool.snapshot(kind)
        if kind not in self._scripted:
            self._scripted[kind] = make_agent(kind, seed=int(self.rng.integers(2**31)))
        return self._scripted[kind]

    def _over(self) -> bool:
        g = self.game
        return all(g.terminations.values()) or all(g.truncations.values())

    def _advance(self) -> None:
        """Play frozen opponents' moves until a learning seat must act or the game ends."""
        from sorry_env.agents import Turn

        g = self.game
        while not self._over() and g.agent_selection in self.frozen:
            turn = Turn.from_state(g.state_array, g.rules, self.rng)
            g.step(int(self.frozen[g.agent_selection].act(turn)))

    def _observe(self) -> dict:
        return {self.game.agent_selection: self.game.observe(self.game.agent_selection)}

    def reset(self, *, seed=None, options=None):
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        while True:
            self.game.reset(seed=int(self.rng.integers(2**31)))
            learner = self.possible_agents[int(self.rng.integers(len(self.possible_agents)))]
            self.frozen = {}
            for agent in self.possible_agents:
                opponent = None if agent == learner else self._draw()
                if opponent is not None:
                    self.frozen[agent] = opponent
            self._advance()
            if not self._over():  # frozen opponents cannot finish a game in their first moves; be safe
                break
        self.agents = [a for a in self.possible_agents if a not in self.frozen]
        self._played = set()
        return self._observe(), {}

    def step(self, action_dict: dict):
        g = self.game
        agent = g.agent_selection
        if set(action_dict) != {agent}:
            raise ValueError(f"expected an action for {agent} only, got actions for {sorted(action_dict)}")
        self._played.add(agent)
        g.step(int(action_dict[agent]))
        self._advance()
        if not self._over():
            # RLlib wants a reward, zero here, for every seat that acted and observes again.
            return self._observe(), {a: 0.0 for a in self._played}, {"__all__": False}, {"__all__": False}, {}
        truncated = all(g.truncations.values()) and not any(g.terminations.values())
        done = {a: True for a in self._played}
        rewards = {a: float(g.rewards[a]) for a in self._played}
        self.agents = []
        return (
            {},
            rewards,
            {**({} if truncated else done), "__all__": not truncated},
            {**(done if truncated else {}), "__all__": truncated},
            {},
        )


# -- the policy network -------------------------------------------------------------------


def _module_class():
    import torch
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module.apis import ValueFunctionAPI
    from ray.rllib.core.rl_module.torch import TorchRLModule

    from sorry_env.agents.policy import MLP
    from sorry_env.board.observation import OBS_SIZE

    class MaskedMLPModule(TorchRLModule, ValueFunctionAPI):
        """Actor ``pi``: MLP over the observation -> one logit per action, illegal actions
        masked to a large negative number; critic ``vf``: MLP over the observation -> value.
        ``pi.layers.k`` is the ``net.layers.k`` of an ``mlp`` policy file."""

        def setup(self):
            cfg = self.model_config
            n_actions = self.action_space.n
            self.pi = MLP([OBS_SIZE, *cfg["hidden"], n_actions], cfg["activation"])
            self.vf = MLP([OBS_SIZE, *cfg["value_hidden"], 1], cfg["activation"])

        def _logits(self, batch):
            obs = batch[Columns.OBS]
            logits = self.pi(obs["observation"])
            # A finite floor, not -inf: PPO's entropy and ratios stay finite.
            return logits.masked_fill(obs["action_mask"] == 0, -1e9)

        def _forward(self, batch, **kwargs):
            return {Columns.ACTION_DIST_INPUTS: self._logits(batch)}

        def compute_values(self, batch, embeddings=None):
            return self.vf(batch[Columns.OBS]["observation"]).squeeze(-1)

    torch.set_num_threads(1)
    return MaskedMLPModule


# -- export -------------------------------------------------------------------------------


def module_actor(module, cfg: dict):
    """The RL module's actor (its ``pi`` MLP) as the :class:`sorry_env.agents.policy.Actor` of
    an ``mlp`` policy file (write it with :func:`sorry_env.training.export.export_actor`)."""
    from sorry_env.agents.policy import Actor

    actor = Actor("mlp", cfg["network"]["hidden"], cfg["network"]["activation"], cfg["game"]["rules"])
    pi = {k.removeprefix("pi."): v.detach().cpu() for k, v in module.state_dict().items() if k.startswith("pi.")}
    actor.load_state_dict({"net." + k: v for k, v in pi.items()})
    return actor


# -- Ray ----------------------------------------------------------------------------------


def check_address(address: str, timeout: float = 3.0) -> None:
    """ValueError within `timeout` seconds unless a Ray head answers at HOST:PORT."""
    if address == "auto":
        return
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ValueError(f"--address {address!r}: expected HOST:PORT of a Ray head (see `ray start --head`)")
    try:
        with socket.create_connection((host, int(port)), timeout=timeout):
            pass
    except OSError as e:
        raise ValueError(
            f"--address {address}: no Ray head reachable there ({e}); "
            "start one with `ray start --head` or check the address"
        ) from None


def start_ray(address: str | None) -> None:
    """Ray for a trainer (sorry-train-rllib, sorry-expit), unless this process has one: the
    cluster at `address` (:func:`check_address` it first), or a local Ray of this run's own
    (never one another program started on this machine), one thread per worker."""
    import ray

    if ray.is_initialized():
        return
    env = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    dashboard = False if address is None else None  # None: ray.init's default
    # ray annotates logging_level as int yet defaults it to "info": it takes a level's name
    ray.init(
        address=address or "local",
        runtime_env={"env_vars": env},
        logging_level="WARNING",  # type: ignore[arg-type]
        include_dashboard=dashboard,
    )


def build_algorithm(cfg: dict):
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    p, o = cfg["ppo"], cfg["opponents"]
    # the game's keys (num_players, rules, max_turns), as SorryMultiAgentEnv reads them
    env_config = {**cfg["game"], "mix": o["mix"], "snapshot_window": o["snapshot_window"], "seed": cfg["seed"]}
    module = RLModuleSpec(module_class=_module_class(), model_config=dict(cfg["network"]))
    config = (
        PPOConfig()
        .environment(SorryMultiAgentEnv, env_config=env_config, disable_env_checking=True)
        .multi_agent(policies={MODULE_ID}, policy_mapping_fn=lambda agent_id, episode, **kw: MODULE_ID)
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={MODULE_ID: module}))
        .env_runners(**cfg["env_runners"])  # the section's keys are PPOConfig.env_runners' arguments
        .learners(num_learners=0)
        .training(  # the ppo section's keys are PPOConfig.training's arguments, but for two
            lambda_=p["lambda"],
            train_batch_size_per_learner=p["train_batch_size"],
            **{key: value for key, value in p.items() if key not in ("lambda", "train_batch_size")},
        )
        .debugging(seed=cfg["seed"], log_level="ERROR")
        # A failing env runner is a bug here (the env is deterministic code), not a lost node to replace.
        .fault_tolerance(restart_failed_env_runners=False)
        .reporting(metrics_num_episodes_for_smoothing=20)
    )
    return config.build_algo()


def _set_snapshots_on_runner(runner, snapshots):
    envs = getattr(runner, "env", None)
    for env in getattr(envs, "envs", []) or []:
        env.unwrapped.set_snapshots(snapshots)


def runner_node_ids(algo) -> list[str]:
    """The Ray node id of each remote env runner (for tests and the log)."""
    import ray

    return algo.env_runner_group.foreach_env_runner(
        lambda r: ray.get_runtime_context().get_node_id(), local_env_runner=False
    )


# -- runs ---------------------------------------------------------------------------------


class RLlibRun(RunDirectory):
    """A run directory; the marker file holds what a resume needs besides RLlib's checkpoint."""

    def __init__(self, cfg: dict, runs_dir):
        super().__init__(cfg, Path(runs_dir) / cfg["name"], MARKER)
        self.checkpoint_dir = self.dir / "checkpoint"
        self.state: dict[str, Any] = {  # JSON: the marker file
            "config": cfg,
            "iteration": 0,
            "env_steps": 0,
            "snapshots": [],
            "wall_seconds": 0.0,
            "iterations": [],
        }


# Caps on what a resume reads from a run directory besides RLlib's own checkpoint.
MAX_MARKER_BYTES = 32 * 1024 * 1024  # parsed JSON takes up to ~26x its size (training/export.py)
MAX_SNAPSHOT_BYTES = 1024 * 1024 * 1024


def open_run(cfg: dict, runs_dir, resume: bool, trust_run_dir: bool = False) -> RLlibRun:
    """A new run directory, or (resume) the existing one after checking it is one of ours
    with the same config (the budget may grow). Resuming restores RLlib's checkpoint, which
    is pickles: unpickling runs code from that folder, so it needs `trust_run_dir` (the
    user's ``--trust-run-dir``) and is refused without it, before anything is read."""
    run = RLlibRun(cfg, runs_dir)
    if resume:
        if not trust_run_dir:
            raise ValueError(
                f"--resume restores {run.dir}/checkpoint, which RLlib stores as pickles: loading it runs code "
                "from that folder. Add --trust-run-dir only if you made that run directory (or trust whoever "
                "did); otherwise start a new run"
            )
        if not run.state_path.is_file():
            raise ValueError(
                f"--resume: {run.dir} is not an RLlib run directory of sorry-train-rllib "
                f"(no {MARKER}); RLlib checkpoints hold pickles, so only our own run "
                "directories are resumed"
            )

        def take(state: dict) -> None:
            for name in state["snapshots"]:  # each a policy file directly in the run's pool/, nowhere else
                files.check_regular_file(run.snapshot_file(name), MAX_SNAPSHOT_BYTES, "snapshot")
            for key in ("iteration", "env_steps"):
                if type(state[key]) is not int or state[key] < 0:
                    raise ValueError(f"{run.state_path}: {key} must be an integer >= 0, got {excerpt(state[key])}")
            if type(state["wall_seconds"]) not in (int, float) or not isinstance(state["iterations"], list):
                raise ValueError(f"{run.state_path}: wall_seconds must be a number and iterations a list")

        # The budget may grow and the number of env runners change; anything else is another run.
        state = run.read_state(("budget", "env_runners"), MAX_MARKER_BYTES, take)
        if not (run.checkpoint_dir / "rllib_checkpoint.json").is_file():
            raise ValueError(
                f"--resume: {run.dir} has no checkpoint yet (stopped before its first one); "
                f"remove it (rm -r {run.dir}) and start again without --resume"
            )
        run.state = {**state, "config": cfg}
        return run
    if run.dir.exists() and any(run.dir.iterdir()):
        raise ValueError(f"{run.dir} exists and is not empty; use --resume to continue it or another name")
    return run


def train(
    cfg: dict, run: RLlibRun, address: str | None = None, resume: bool = False, log=print, evaluate=None
) -> RLlibRun:
    """Train until budget.iterations; checkpoint every checkpoint_every iterations and at the
    end, then call the evaluation hook `evaluate(env steps, the policy file's path)` if given
    (sorry-bench's in-run evaluations)."""
    start_ray(address)
    run.dir.mkdir(parents=True, exist_ok=True)
    run.pool_dir.mkdir(exist_ok=True)
    algo = build_algorithm(cfg)
    try:
        if resume:
            algo.restore_from_path(str(run.checkpoint_dir.resolve()))
        else:
            run.write_state(run.state)
        snapshots = [  # a resumed run's (a new run has none yet)
            (Path(p).stem, files.read_bytes(run.snapshot_file(p), MAX_SNAPSHOT_BYTES, "snapshot"))
            for p in run.state["snapshots"]
        ]
        _broadcast(algo, snapshots)
        session_start, wall_before = time.perf_counter(), run.state["wall_seconds"]
        while algo.iteration < cfg["budget"]["iterations"]:
            t0 = time.perf_counter()
            result = algo.train()
            seconds = time.perf_counter() - t0
            sampled = result.get("env_runners", {})
            steps = int(sampled.get("num_env_steps_sampled", 0))
            run.state["env_steps"] = int(sampled.get("num_env_steps_sampled_lifetime", run.state["env_steps"] + steps))
            returns = sampled.get("agent_episode_returns_mean", {})
            run.state["iterations"].append(
                {
                    "iteration": algo.iteration,
                    "env_steps": steps,
                    "seconds": round(seconds, 3),
                    "steps_per_second": round(steps / seconds, 1),
                    "return_mean": {k: round(float(v), 3) for k, v in returns.items()},
                }
            )
            log(
                f"iteration {algo.iteration}: {steps} steps in {seconds:.1f} s ({steps / seconds:.0f}/s), "
                f"lifetime {run.state['env_steps']}"
            )
            it = algo.iteration
            if it % cfg["opponents"]["snapshot_every"] == 0:
                path = run.pool_dir / f"snapshot_{it}.safetensors"
                _export(algo, cfg, path)
                run.state["snapshots"].append(str(path.relative_to(run.dir)))
                snapshots.append((path.stem, path.read_bytes()))
                _broadcast(algo, snapshots)
            if it % cfg["checkpoint_every"] == 0 or it >= cfg["budget"]["iterations"]:
                run.state["wall_seconds"] = wall_before + time.perf_counter() - session_start
                checkpoint(algo, run)
                if evaluate is not None:
                    evaluate(run.state["env_steps"], str(run.policy_path))
    finally:
        algo.stop()
    log(
        f"{cfg['name']}: {run.state['iteration']} iterations, {run.state['env_steps']} env steps; "
        f"policy: {run.policy_path}"
    )
    return run


def _broadcast(algo, snapshots: list) -> None:
    window = snapshots[-algo.config.env_config["snapshot_window"] :]
    algo.env_runner_group.foreach_env_runner(lambda r: _set_snapshots_on_runner(r, window))


def checkpoint(algo, run: RLlibRun) -> None:
    """RLlib checkpoint + exported policy + marker, each replaced whole (a kill leaves the
    previous checkpoint usable)."""
    tmp = run.dir / "checkpoint.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    algo.save_to_path(str(tmp.resolve()))
    old = run.dir / "checkpoint.old"
    shutil.rmtree(old, ignore_errors=True)
    if run.checkpoint_dir.exists():
        os.replace(run.checkpoint_dir, old)
    os.replace(tmp, run.checkpoint_dir)
    shutil.rmtree(old, ignore_errors=True)
    run.state["iteration"] = int(algo.iteration)
    _export(
        algo,
        run.cfg,
        run.policy_path,
        env_steps=run.state["env_steps"],
        wall_seconds=run.state["wall_seconds"],
        backend="rllib",
    )
    run.write_state(run.state)


def _export(algo, cfg: dict, path: Path, **training) -> None:
    """The learner's actor as policy file `path`, named after the run and iteration; its
    training metadata: the config, the iteration and `training`."""
    it = int(algo.iteration)
    actor = module_actor(algo.get_module(MODULE_ID), cfg)
    export_actor(actor, path, cfg, f"{cfg['name']}@it{it}", {"config": cfg, "iteration": it, **training})


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description="Self-play PPO of a Sorry! policy on Ray RLlib (local or a cluster).")
    p.add_argument("config", help="YAML config (see configs/rllib-2p.yaml and training/rllib_backend.py)")
    p.add_argument("--address", help="Ray cluster head HOST:PORT (or 'auto'); default: start Ray in this process")
    p.add_argument(
        "--resume", action="store_true", help="continue the run from its last checkpoint (needs --trust-run-dir)"
    )
    p.add_argument(
        "--trust-run-dir",
        action="store_true",
        help="allow --resume to restore the run's RLlib checkpoint, which is pickles: this runs code from that "
        "folder, so use it only for run directories you made or trust",
    )
    p.add_argument("--runs-dir", default="runs", help="parent directory of run directories")
    p.add_argument("--iterations", type=int, help="override budget.iterations")
    p.add_argument("--num-env-runners", type=int, help="override env_runners.num_env_runners")
    args = p.parse_args(argv)
    try:
        given = {"budget.iterations": args.iterations, "env_runners.num_env_runners": args.num_env_runners}
        cfg = RLLIB.load(args.config, {key: value for key, value in given.items() if value is not None})
        if args.address is not None:
            check_address(args.address)
        run = open_run(cfg, args.runs_dir, args.resume, args.trust_run_dir)
    except ValueError as e:
        p.error(str(e))
    try:
        import ray  # noqa: F401
    except ImportError:
        p.error("Ray RLlib is not installed: pip install -e '.[rllib]'")
    try:
        train(cfg, run, args.address, args.resume)
    except ConnectionError as e:
        print(f"sorry-train-rllib: cannot use the Ray cluster at {args.address}: {e}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
