"""Training configuration: YAML files in configs/ over the defaults below.

Every key a config may set is listed in DEFAULTS (with its meaning); a config file that
names an unknown key is refused, so a typo cannot silently fall back to a default.
:func:`validate` checks every value (its type as the default's, its range, the agents it
names, the network files it points to) before any work starts, so a mistake is reported at
once with its key, not after a warm start of many minutes. File paths are read from the
current directory (run from the repository root for the shipped configs).
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import math
import os
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

import yaml

from sorry_env import checks, files
from sorry_env.board.rules import DEFAULT_MAX_TURNS, DEFAULT_PRESET
from sorry_env.checks import excerpt

DEFAULTS: dict[str, Any] = {
    "name": "run",  # run directory: <runs_dir>/<name>
    "seed": 0,
    "game": {
        "num_players": 2,
        "rules": DEFAULT_PRESET,  # preset name (sorry_env.PRESETS)
        "max_turns": DEFAULT_MAX_TURNS,  # truncate a game after this many cards
    },
    "network": {
        "kind": "afterstate",  # afterstate (score each move's resulting position) or mlp
        "hidden": [256, 256],  # the actor's MLP (the part that is exported)
        "value_hidden": [256, 256],
        "activation": "relu",  # relu or tanh
    },
    "ppo": {  # sb3-contrib MaskablePPO arguments
        "learning_rate": 3.0e-4,
        "n_steps": 256,  # per env and rollout
        "batch_size": 1024,
        "n_epochs": 4,
        "gamma": 0.995,
        "gae_lambda": 0.95,
        "clip_range": 0.2,
        "ent_coef": 0.01,
        "vf_coef": 0.5,
        "max_grad_norm": 0.5,
        "target_kl": None,
        # None: learning_rate throughout; a number: the rate falls linearly from learning_rate to
        # this over the run's budget (PPO's usual annealing; it settles a policy that plateaus)
        "learning_rate_final": None,
    },
    "envs": 16,  # games stepped together in the one training process (MaskablePPO's n_envs)
    # batched: the games stepped B at a time by compiled code, snapshots evaluated in batches
    # (training/batched_env.py); per_game: one Gymnasium env per game (training.train.make_env)
    "rollout": "batched",
    "torch_threads": 1,  # 2 shared cores: one thread avoids oversubscription
    "opponents": {
        "mix": {"snapshots": 0.5, "random": 0.5},  # kind -> weight (see training/opponents.py)
        "snapshot_every": 50_000,  # learner steps between snapshots joining the pool
        "snapshot_window": 20,  # opponents are drawn from the last N snapshots
        "snapshot_sample": True,  # snapshots sample their moves (False: argmax)
    },
    "imitation": {  # warm start by cloning a scripted teacher (training/imitation.py)
        "samples": 0,  # teacher moves to learn from; 0: no warm start
        "teacher": "heuristic",
        "mix": {"heuristic": 0.5, "greedy": 0.25, "random": 0.25},  # the teacher's opponents
        "chunk": 50_000,  # moves generated, then trained on, at a time
        "epochs": 2,  # passes over each chunk
        "batch_size": 512,
        "learning_rate": 1.0e-3,
    },
    "distillation": {  # warm start from a search teacher's move values (training/search_teacher.py)
        "decisions": 0,  # teacher decisions to learn from; 0: none
        "iterations": 400,  # the teacher's (montecarlo) playouts per decision
        "rollout_plies": 6,  # moves per playout before the value network scores it
        "value": None,  # value network file (training/value_fit.py); None: hand-written evaluation
        "init": None,  # start the actor from this afterstate network file (same hidden sizes)
        "workers": 2,  # processes playing teacher games
        "epochs": 3,
        "batch_size": 256,  # decisions per step
        "learning_rate": 3.0e-4,
        "temperature": 0.01,  # of the soft targets softmax(values / temperature)
    },
    "budget": {"timesteps": 1_000_000},  # learner steps (opponents' moves not counted)
    "evaluation": {
        "every": 100_000,  # learner steps between evaluations (and at the end)
        "games": 200,  # per opponent
        "opponents": ["random"],  # agent names; the learner plays one seat vs these
    },
    "checkpoint_every": 50_000,  # learner steps between checkpoints
}


def merge_config(base: dict, override: dict, where: str = "") -> dict:
    """`override` (a config file's mapping) over a copy of `base` (a DEFAULTS), section by
    section; a key `base` does not have is refused, naming it. Values are not checked here: a
    section given as something other than a mapping is replaced whole, and
    :func:`check_types` refuses it (this module's and the RLlib backend's one merge)."""
    out = copy.deepcopy(base)
    for key, value in override.items():
        if key not in base:
            raise ValueError(f"config: unknown key {where}{excerpt(key)}; known: {sorted(base)}")
        # The mix is one whole mapping (its keys are agent names), not merged key by key.
        if isinstance(base[key], dict) and isinstance(value, dict) and key != "mix":
            out[key] = merge_config(base[key], value, f"{where}{key}.")
        else:
            out[key] = value
    return out


MAX_CONFIG_BYTES = 1024 * 1024  # a config file: the shipped ones are under 2 KB


class ConfigLoader(yaml.SafeLoader):
    """PyYAML's safe loader, stricter: no aliases (``*name``: nine nested aliases expand a
    344-byte file to gigabytes, and a config has no need of them) and no key given twice in
    one mapping (the later one used to win silently). Errors are ValueErrors with the line."""

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            line = self.peek_event().start_mark.line + 1
            raise ValueError(f"line {line}: an alias (*name); a config may not use YAML aliases, write the value out")
        return super().compose_node(parent, index)

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                duplicate = key in seen
                seen.add(key)
            except TypeError:  # an unhashable key: the base class reports it
                break
            if duplicate:
                raise ValueError(f"line {key_node.start_mark.line + 1}: the key {excerpt(key)} is given twice")
        return super().construct_mapping(node, deep)


def read_yaml(path: str | Path, what: str = "config") -> object:
    """The YAML value of file `path` (a regular file of at most MAX_CONFIG_BYTES, read by
    :class:`ConfigLoader`), or ValueError: aliases, a key given twice and a file too deeply
    nested for the parser (thousands of ``[``) included. Messages never quote a value whole."""
    text = files.read_text(path, MAX_CONFIG_BYTES, what)
    try:
        return yaml.load(text, Loader=ConfigLoader)  # noqa: S506 (ConfigLoader is a SafeLoader)
    except yaml.YAMLError as e:
        raise ValueError(f"{what} {path}: not valid YAML ({str(e)[:300]})") from None
    except ValueError as e:
        raise ValueError(f"{what} {path}: {e}") from None
    except RecursionError:
        raise ValueError(f"{what} {path}: nested too deeply to be a config") from None


def check_same_run(started: dict, cfg: dict, may_change: Collection[str], where) -> None:
    """ValueError unless `started` (the config stored in a run directory, file `where`) is
    `cfg` but for the top-level keys that `may_change` on resume: anything else makes
    another run."""
    kept = [{k: v for k, v in config.items() if k not in may_change} for config in (started, cfg)]
    if kept[0] != kept[1]:
        raise ValueError(f"{where}: the run was started with another config; use a new name to start a new run")


def run_name_problem(name) -> str | None:
    """Why `name` cannot name a run directory under --runs-dir (None if it can): it must be
    one plain path component, so the run stays inside the runs directory."""
    if not isinstance(name, str) or not name or name in (".", ".."):
        return "a non-empty name other than '.' and '..'"
    if any(c in name for c in "/\\\0") or len(name) > 200:
        return "a plain directory name (no '/', '\\' or NUL; at most 200 characters)"
    return None


# The shipped configs: configs/ beside the package in a source checkout, package data in a wheel.
SHIPPED_CONFIGS = Path(__file__).resolve().parents[1] / "configs"


def config_path(path: str | Path) -> Path:
    """`path` itself, or, when no such file exists and it is a bare name, the shipped config of
    that name (``quick`` or ``quick.yaml`` is configs/quick.yaml), so an installed wheel's
    ``sorry-train quick`` works from any folder."""
    given = Path(path)
    if given.exists() or given.parent != Path("."):
        return given
    shipped = SHIPPED_CONFIGS / (given.name if given.suffix == ".yaml" else f"{given.name}.yaml")
    if shipped.is_file():
        return shipped
    names = sorted(p.stem for p in SHIPPED_CONFIGS.glob("*.yaml"))
    raise ValueError(f"config {path} does not exist, and no shipped config has that name (shipped: {', '.join(names)})")


def read_config(path: str | Path, defaults: dict, ignore: Collection[str] = ()) -> dict:
    """The YAML mapping of config file `path` (or the shipped config of that name, see
    :func:`config_path`) merged over `defaults`, not yet validated; `ignore`: top-level keys
    that name the trainer, not a setting."""
    path = config_path(path)
    data = read_yaml(path) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a config must be a YAML mapping")
    return merge_config(defaults, {k: v for k, v in data.items() if k not in ignore})


ROLLOUTS = ("batched", "per_game")  # the values of the rollout key
# Keys whose default is None, and the type they take otherwise.
NULLABLE = {
    "ppo.target_kl": float,
    "ppo.learning_rate_final": float,
    "distillation.value": str,
    "distillation.init": str,
}
# key -> (test, what it must be). One rule for every trainer's config: a number must be > 0
# unless its key is listed here or in its schema's own ranges (which win over these).
POSITIVE, AT_LEAST_ZERO = (lambda v: v > 0, "> 0"), (lambda v: v >= 0, ">= 0")


def within(low, high) -> tuple[Callable[[Any], bool], str]:
    """The range test of a key whose value lies in [low, high]."""
    return (lambda v: low <= v <= high), f"in [{low}, {high}]"


# The ranges of every schema's keys, declared once for the keys several trainers share
# (sorry-train's, sorry-train-rllib's and sorry-expit's: the same key means the same there).
RANGES = {
    "seed": AT_LEAST_ZERO,
    "ppo.gamma": (lambda v: 0 < v <= 1, "in (0, 1]"),
    "ppo.gae_lambda": within(0, 1),
    "ppo.ent_coef": AT_LEAST_ZERO,
    "ppo.vf_coef": AT_LEAST_ZERO,
    "ppo.learning_rate_final": AT_LEAST_ZERO,
    "imitation.samples": AT_LEAST_ZERO,
    "distillation.decisions": AT_LEAST_ZERO,
    "distillation.rollout_plies": AT_LEAST_ZERO,
}


# Caps on the values that size memory or processes, checked before anything is allocated
# (each far above the shipped configs; docs/hardening.md lists them), for every schema's keys
# as RANGES (a schema's own caps add to these).
MAX_INTEGER = 10**18 - 1  # any integer of a config: fits the int64 of numpy and torch
MAX_SEED = 2**32 - 1  # numpy's and Stable-Baselines3's seeding take 32 bits
CAPS = {
    "seed": MAX_SEED,
    "envs": 1024,  # games stepped together
    "ppo.n_steps": 65_536,  # per env and rollout
    "ppo.batch_size": 1_048_576,
    "ppo.n_epochs": 1000,
    "torch_threads": 256,
    "opponents.snapshot_window": 1000,  # snapshot networks held in memory
    "imitation.chunk": 1_000_000,  # teacher moves held at once
    "imitation.batch_size": 1_048_576,
    "imitation.epochs": 1000,
    "distillation.workers": 256,  # processes
    "distillation.iterations": 10_000_000,
    "distillation.rollout_plies": 10_000,
    "distillation.batch_size": 1_048_576,
    "distillation.epochs": 1000,
    "evaluation.games": 10_000_000,
    "game.max_turns": 1_000_000,
}
MAX_ROLLOUT = 1_048_576  # envs * ppo.n_steps: the rollout buffer's positions (about 5 KB each)
INPUT_BOUND = 2048  # more than any layout's network input, for the parameter estimate


def check_types(cfg: dict, defaults: dict, where: str = "", nullable=NULLABLE, ranges=RANGES, caps=CAPS) -> None:
    """ValueError naming the first key of merged config `cfg` whose value is not of its
    default's type (a float key takes any finite number; a `nullable` key also None), outside
    its `ranges` entry (a number with none: > 0) or over its `caps` entry. The same for every
    config of the project: :class:`Schema` passes these tables with its own entries over them."""
    for key, default in defaults.items():
        name, value = where + key, cfg[key]
        want = nullable.get(name, type(default))
        if value is None and name in nullable:
            continue
        if isinstance(default, dict) and key != "mix":
            if not isinstance(value, dict):
                raise ValueError(f"config: {name} must be a mapping of {sorted(default)}, got {excerpt(value)}")
            check_types(value, default, name + ".", nullable, ranges, caps)
            continue
        integer = isinstance(value, int) and not isinstance(value, bool)
        if want is float:
            ok = (isinstance(value, float) and math.isfinite(value)) or (integer and abs(value) <= MAX_INTEGER)
        elif want is int:
            ok = integer
        else:
            ok = isinstance(value, want)
        if not ok:
            noun = {
                float: "a number",
                int: "an integer",
                bool: "true or false",
                str: "text",
                list: "a list",
                dict: "a mapping",
            }[want]
            raise ValueError(f"config: {name} must be {noun}, got {excerpt(value)}")
        if want is int and not -MAX_INTEGER <= value <= MAX_INTEGER:  # before any comparison or arithmetic
            raise ValueError(f"config: {name} must be an integer of at most 18 digits, got {excerpt(value)}")
        if want in (int, float) or name in ranges:
            test, what = ranges.get(name, POSITIVE)
            if not test(value):
                raise ValueError(f"config: {name} must be {what}, got {excerpt(value)}")
        if name in caps and value > caps[name]:
            raise ValueError(f"config: {name} must be at most {caps[name]:,}, got {excerpt(value)}")


def check_network_file(cfg: dict, where: str, relu: bool = False) -> dict:
    """The metadata of the network file config key `where` (``section.key``) names, refused
    unless it is an afterstate network made for the config's game (`relu`: and a relu one,
    the only activation the compiled search runs)."""
    from sorry_env.agents.policy import check_trained_for, read_metadata

    section, key = where.split(".")
    path = cfg[section][key]
    if not os.path.isfile(path):
        raise ValueError(
            f"config: {where}: no file {path!r} (paths are read from the current directory, {os.getcwd()})"
        )
    meta = read_metadata(path)
    try:
        check_trained_for(path, meta, cfg["game"]["rules"], cfg["game"]["num_players"])
    except ValueError as e:
        raise ValueError(f"config: {where}: {e}") from None
    net = meta["network"]
    if net["kind"] != "afterstate" or (relu and net["activation"] != "relu"):
        raise ValueError(
            f"config: {where}: {path} holds a {net['kind']} {net['activation']} network; it must be an afterstate "
            + ("relu one (a value network, training/value_fit.py: the compiled search runs relu)" if relu else "one")
        )
    return meta


def agent_specs(cfg: dict) -> list[tuple[str, object]]:
    """(key, spec) of every agent spec a config names: the opponent and teacher mixes' kinds,
    the teacher and the evaluation opponents."""
    specs = [("opponents.mix", kind) for kind in cfg["opponents"]["mix"]]
    specs += [("imitation.mix", kind) for kind in cfg["imitation"]["mix"]]
    specs += [("imitation.teacher", cfg["imitation"]["teacher"])]
    return specs + [("evaluation.opponents", spec) for spec in cfg["evaluation"]["opponents"]]


def validate(
    cfg: dict, warm_start: bool = True, stored_in: str | None = None, trusted: Collection[str] = (), how: str = ""
) -> None:
    """ValueError naming the first key whose value cannot make a run (see the module doc).
    `warm_start`: also check the network files the distillation warm start reads (a resumed
    run skips the warm start, so it does not need them any more).

    `stored_in`: the file the config was read from when the user did not pass it themselves (a
    run directory's run_state.json): its agent specs are data, so one that runs code
    (``module:Name``, an sb3 zip: :func:`agents.runs_code`) is refused before anything is
    built, unless it is in `trusted` (specs the user typed; `how` says how to type one)."""
    if stored_in is not None:
        check_types(cfg, DEFAULTS)  # the specs are read from a config of the right shape
        _refuse_stored_code(cfg, stored_in, trusted, how)
    PPO.validate(cfg)
    if warm_start:
        _check_distillation_files(cfg)


def _ppo_facts(cfg: dict) -> None:
    """PPO's checks across keys: the rollout's size, the game, network, agents, warm start."""
    if cfg["envs"] * cfg["ppo"]["n_steps"] > MAX_ROLLOUT:
        raise ValueError(
            f"config: envs * ppo.n_steps (the rollout buffer's positions) must be at most {MAX_ROLLOUT:,}, "
            f"got {cfg['envs']} * {cfg['ppo']['n_steps']}"
        )
    _check_game_and_network(cfg)
    _check_agents(cfg)
    if cfg["distillation"]["decisions"] > 0 and cfg["network"]["kind"] != "afterstate":
        raise ValueError(
            "config: distillation trains an afterstate actor; set network.kind: afterstate or distillation.decisions: 0"
        )


def _refuse_stored_code(cfg: dict, stored_in: str, trusted: Collection[str], how: str) -> None:
    """validate: no agent spec of a stored config runs code unless the user typed it."""
    from sorry_env import agents

    for where, spec in agent_specs(cfg):
        if isinstance(spec, str) and spec not in trusted:
            try:
                agents.refuse_code(spec, stored_in, how)
            except ValueError as e:
                raise ValueError(f"config: {where}: {e}") from None


def _check_game_and_network(cfg: dict) -> None:
    """validate: the game (rules, players), the rollout kind and the network's shape."""
    check_board_game(cfg["game"]["rules"], cfg["game"]["num_players"])
    if cfg["rollout"] not in ROLLOUTS:
        raise ValueError(f"config: rollout must be one of {ROLLOUTS}, got {cfg['rollout']!r}")
    check_network(cfg["network"])


def check_network(net: dict) -> None:
    """The network section of a config (sorry-train's, sorry-train-rllib's): its kind (when it
    has one), activation and the actor's and critic's layer widths."""
    from sorry_env.agents.policy import ACTIVATIONS, KINDS

    if net.get("kind", KINDS[0]) not in KINDS:
        raise ValueError(f"config: network.kind must be one of {KINDS}, got {net['kind']!r}")
    if net["activation"] not in ACTIVATIONS:
        raise ValueError(f"config: network.activation must be one of {sorted(ACTIVATIONS)}, got {net['activation']!r}")
    for key in ("hidden", "value_hidden"):
        check_layer_sizes(net[key], f"network.{key}")


def check_layer_sizes(sizes: list, where: str) -> None:
    """ValueError unless `sizes` (the config key `where`) are hidden-layer widths within the
    caps every network loader applies (:mod:`sorry_env.checks`: layers, units, parameters,
    counted from INPUT_BOUND inputs to one output)."""
    checks.check_layer_widths(sizes, f"config: {where}")
    checks.check_parameter_count(f"config: {where}", checks.mlp_parameters([INPUT_BOUND, *sizes, 1]))


def _check_agents(cfg: dict) -> None:
    """validate: the opponent and teacher mixes, the teacher and the evaluation opponents can
    be made and play the configured game."""
    from .opponents import check_mix

    g = cfg["game"]
    for section in ("opponents", "imitation"):
        try:
            check_mix(cfg[section]["mix"], g["rules"], g["num_players"])
        except ValueError as e:
            raise ValueError(f"config: {section}.mix: {e}") from None
    check_agent_specs([cfg["imitation"]["teacher"]], "imitation.teacher", g["rules"], g["num_players"])
    check_agent_specs(cfg["evaluation"]["opponents"], "evaluation.opponents", g["rules"], g["num_players"])


def _check_distillation_files(cfg: dict) -> None:
    """validate: the network files the distillation warm start reads, when it runs."""
    net, d = cfg["network"], cfg["distillation"]
    if d["decisions"] > 0:
        if d["value"] is not None:
            check_network_file(cfg, "distillation.value", relu=True)
        if d["init"] is not None:
            init = check_network_file(cfg, "distillation.init")["network"]
            if (init["hidden"], init["activation"]) != (net["hidden"], net["activation"]):
                raise ValueError(
                    f"config: distillation.init {d['init']}: its network ({init['hidden']}, "
                    f"{init['activation']}) differs from network.hidden/activation "
                    f"({net['hidden']}, {net['activation']})"
                )


# ---- every trainer's config: one reading, one rule -------------------------------------------
@dataclasses.dataclass(frozen=True)
class Schema:
    """One trainer's config: every key it may set with its default (a config naming another
    key is refused), and the tests :func:`check_types` applies to the values (`ranges`, `caps`,
    `nullable` as there, over the shared RANGES, CAPS and NULLABLE); `facts` checks what spans
    keys, after each value's own test. Every schema has a ``seed``; most a ``name`` (its run
    directory under the runs directory)."""

    defaults: dict
    ranges: dict = dataclasses.field(default_factory=dict)
    caps: dict = dataclasses.field(default_factory=dict)
    nullable: dict = dataclasses.field(default_factory=dict)
    facts: Callable[[dict], None] = lambda cfg: None

    def load(self, path: str | Path | None, overrides: dict | None = None, ignore: Collection[str] = ()) -> dict:
        """The validated config of YAML file `path` (or a shipped config's name; None: the
        defaults alone) with `overrides` (command-line values, key -> value, a dotted key for
        a key of a section) over it; `ignore` as :func:`read_config`'s. A mistake is a
        ValueError naming the file and the key."""
        try:
            cfg = copy.deepcopy(self.defaults) if path is None else read_config(path, self.defaults, ignore)
            for key, value in (overrides or {}).items():
                *sections, last = key.split(".")
                section = cfg
                for name in sections:
                    section = section[name]
                section[last] = value
            self.validate(cfg)
        except ValueError as e:
            if path is None or not str(e).startswith("config: "):
                raise
            raise ValueError(f"{config_path(path)}: {str(e).removeprefix('config: ')}") from None
        return cfg

    def validate(self, cfg: dict) -> None:
        """ValueError naming the first key whose value cannot make a run."""
        nullable, ranges, caps = {**NULLABLE, **self.nullable}, {**RANGES, **self.ranges}, {**CAPS, **self.caps}
        check_types(cfg, self.defaults, "", nullable, ranges, caps)
        problem = run_name_problem(cfg["name"]) if "name" in cfg else None
        if problem:
            raise ValueError(f"config: name must be {problem}, got {excerpt(cfg['name'])}")
        self.facts(cfg)


PPO = Schema(DEFAULTS, facts=_ppo_facts)  # sorry-train's MaskablePPO

# The config of YAML file `path` over DEFAULTS, validated except for the warm start's network
# files (sorry_env.training.train.open_run checks those unless it resumes). A bare name that is
# no file is a shipped config (config_path).
load_config = PPO.load


def check_board_game(rules, num_players: int, prefix: str = "game.") -> None:
    """ValueError unless `rules` (the key ``<prefix>rules``) names a preset of the board game
    that `num_players` can play."""
    from sorry_env.board import game
    from sorry_env.board.rules import PRESETS

    if rules not in PRESETS:
        raise ValueError(f"config: {prefix}rules must be one of {sorted(PRESETS)}, got {excerpt(rules)}")
    try:
        game.seats_for(num_players, rules=rules)
    except ValueError as e:
        raise ValueError(f"config: {prefix.rstrip('.') or 'players'}: {e}") from None


def chances(weights) -> bool:
    """Whether `weights` (an opponent mix's) are finite numbers >= 0 with a positive sum."""
    return all(type(w) in (int, float) and 0 <= w < math.inf for w in weights) and sum(weights) > 0


def check_agent_specs(specs: list, where: str, rules=None, num_players: int | None = None) -> None:
    """ValueError unless every entry of `specs` is an agent spec that can be made (and play
    `rules` with `num_players`, when given)."""
    from sorry_env import agents

    for spec in specs:
        if not isinstance(spec, str):
            raise ValueError(f"config: {where}: agent specs are text, got {excerpt(spec)}")
        try:
            agent = agents.make_agent(spec)
            if rules is not None and num_players is not None:
                agent.check_game(rules, num_players)
        except (ValueError, TypeError) as e:
            raise ValueError(f"config: {where}: {spec!r}: {e}") from None


# TD(lambda) self-play (training/td_afterstate.py; `algorithm: td_lambda` in a sorry-train config).
TD_LAMBDA_DEFAULTS = {
    "players": 2,
    "rules": DEFAULT_PRESET,
    "decisions": 2_000_000,  # moves with a choice the network plays, every seat's
    "hidden": [256, 256],
    "lam": 0.7,  # TD(lambda)'s lambda
    "lr": 3.0e-4,
    "lr_final": None,  # None: lr throughout; a number: the rate falls linearly to it over the decisions
    "epsilon": 0.02,  # share of moves played uniformly at random
    "games": 256,  # games played side by side
    "update_samples": 16_384,  # finished-game moves per update
    "batch_size": 512,
    "epochs": 2,  # passes over each update's moves
    "seed": 0,
    "threads": 1,
    "max_turns": DEFAULT_MAX_TURNS,
    "eval_every": 500_000,  # decisions between the in-run checks
    "eval_games": 400,
    "eval_opponents": ["random", "heuristic"],  # watched only: they play no part in training
    "name": "td",  # the run's name: its policy file is <runs-dir>/<name>/policy.safetensors
    "out": None,  # or this policy file (rewritten at every check)
}


def _td_lambda_facts(cfg: dict) -> None:
    check_board_game(cfg["rules"], cfg["players"], "")
    check_layer_sizes(cfg["hidden"], "hidden")
    if not 0 < len(cfg["eval_opponents"]) <= 8:
        raise ValueError(f"config: eval_opponents must be a list of 1 to 8 agent specs, got {cfg['eval_opponents']}")
    check_agent_specs(cfg["eval_opponents"], "eval_opponents")


TD_LAMBDA = Schema(
    TD_LAMBDA_DEFAULTS,
    ranges={
        "players": within(2, 4),
        "lam": within(0, 1),
        "lr": within(1e-8, 1),
        "lr_final": within(0, 1),
        "epsilon": within(0, 1),
        "seed": within(0, 2**31 - 1),
    },
    caps={
        "decisions": 10**11,
        "games": 4096,
        "update_samples": 1_000_000,
        "batch_size": 65_536,
        "epochs": 100,
        "threads": 256,
        "max_turns": 1_000_000,
        "eval_every": 10**11,
        "eval_games": 1_000_000,
    },
    nullable={"lr_final": float, "out": str},
    facts=_td_lambda_facts,
)


# Self-play PPO on Ray RLlib (sorry-train-rllib, training/rllib_backend.py).
SELF, SNAPSHOTS = "self", "snapshots"  # opponent kinds besides agent names: the learner itself, its snapshots
RLLIB_DEFAULTS = {
    "name": "rllib",  # run directory: <runs_dir>/<name>
    "seed": DEFAULTS["seed"],
    "game": DEFAULTS["game"],
    "network": {key: DEFAULTS["network"][key] for key in ("hidden", "value_hidden", "activation")},
    "ppo": {
        "lr": 3.0e-4,
        "gamma": 0.995,
        "lambda": 0.95,
        "clip_param": 0.2,
        "entropy_coeff": 0.01,
        "vf_loss_coeff": 0.5,
        "grad_clip": 0.5,
        "train_batch_size": 4000,  # env steps of learning seats per iteration
        "minibatch_size": 512,
        "num_epochs": 4,
    },
    "env_runners": {
        "num_env_runners": 2,  # Ray actors sampling games (0: sample in the driver)
        "num_envs_per_env_runner": 1,
        "num_cpus_per_env_runner": 1.0,  # a number: Ray takes fractions of a CPU
        "rollout_fragment_length": 200,
    },
    "opponents": {
        "mix": {SELF: 0.5, "heuristic": 0.3, SNAPSHOTS: 0.2},  # per non-learner seat
        "snapshot_every": 10,  # iterations between learner snapshots
        "snapshot_window": 5,  # opponents drawn from the last N snapshots
    },
    "budget": {"iterations": 100},
    "checkpoint_every": 5,  # iterations between checkpoints (and at the end)
}


def _rllib_facts(cfg: dict) -> None:
    from sorry_env.agents import AGENTS

    g, p = cfg["game"], cfg["ppo"]
    check_board_game(g["rules"], g["num_players"])
    check_network(cfg["network"])  # the activations rllib_backend.MaskedMLPModule builds: policy.ACTIVATIONS'
    for key in ("hidden", "value_hidden"):
        if not cfg["network"][key]:
            raise ValueError(f"config: network.{key} must be a non-empty list of layer widths, got []")
    if p["minibatch_size"] > p["train_batch_size"]:
        raise ValueError(f"config: ppo.minibatch_size must be <= ppo.train_batch_size, got {p['minibatch_size']!r}")
    mix = cfg["opponents"]["mix"]
    unknown = [k for k in mix if k not in (SELF, SNAPSHOTS) and k not in AGENTS]
    if unknown:
        raise ValueError(
            f"config: opponents.mix must name kinds among {SELF!r}, {SNAPSHOTS!r}, {sorted(AGENTS)}, got {unknown!r}"
        )
    if not chances(mix.values()):
        raise ValueError(f"config: opponents.mix must have weights >= 0 with a positive sum, got {excerpt(mix)}")


# Ranges and caps: the caps, on what sizes memory, processes or Ray actors, far above the
# shipped configs (docs/hardening.md lists them); network widths share check_layer_sizes' caps.
RLLIB = Schema(
    RLLIB_DEFAULTS,
    ranges={
        "game.num_players": within(2, 4),
        "ppo.lambda": within(0, 1),
        "ppo.entropy_coeff": AT_LEAST_ZERO,
        "ppo.vf_loss_coeff": AT_LEAST_ZERO,
        "env_runners.num_env_runners": AT_LEAST_ZERO,
        "env_runners.num_cpus_per_env_runner": AT_LEAST_ZERO,
    },
    caps={
        "ppo.train_batch_size": 1_048_576,
        "ppo.num_epochs": 1000,
        "env_runners.num_env_runners": 256,
        "env_runners.num_envs_per_env_runner": 1024,
        "env_runners.rollout_fragment_length": 65_536,
    },
    facts=_rllib_facts,
)


# The PPO of the registered games without a batched step (training/game_ppo.py);
# the defaults are those the shipped policies were trained with.
GAME_PPO_DEFAULTS = {
    "game": None,  # a registered game's id (required)
    "players": 2,
    "minutes": 8.0,  # wall-clock budget
    "steps": None,  # learner-decision budget (stops at whichever comes first)
    "games": 256,  # games in lockstep (each update learns from 12 decisions of each: game_ppo.ROLLOUT_STEPS)
    "hidden": [128, 128],
    "lr": 1e-3,
    "epochs": 4,  # PPO epochs per update
    "minibatch": 512,
    "clip": 0.2,
    "entropy": 0.01,
    "opponents": ["greedy", "random", SELF],  # agent specs of the game, or self (the current policy, sampled)
    "mix": [0.5, 0.2, 0.3],  # chances of the opponent kinds, one draw per opponent seat and game
    "seed": 0,
    "out": None,  # the policy file to write (.safetensors; its name names the policy)
}


def _game_ppo_facts(cfg: dict) -> None:
    from sorry_env import games
    from sorry_env.agents import make_agent

    if cfg["game"] is None:
        raise ValueError("config: game must name a registered game")
    game = games.load_game(cfg["game"])
    if game.game_type.batched_step:
        raise ValueError(f"config: game {cfg['game']!r} has a batched step: it trains with sorry-train (train.py)")
    game.game_type.check_players(cfg["players"])
    check_layer_sizes(cfg["hidden"], "hidden")
    mix, kinds = cfg["mix"], cfg["opponents"]
    if len(mix) != len(kinds) or not chances(mix):
        raise ValueError(
            f"config: mix needs {len(kinds)} non-negative chances, one per opponent kind "
            f"({','.join(map(str, kinds))}), got {excerpt(mix)}"
        )
    for kind in kinds:
        if kind not in (SELF, "random"):
            make_agent(kind, seed=0, allow_code=False, game=game)  # an unknown or unfit opponent, refused now


GAME_PPO = Schema(
    GAME_PPO_DEFAULTS,
    ranges={"entropy": AT_LEAST_ZERO, "seed": within(0, MAX_SEED)},
    caps={"games": 1_000_000, "epochs": 1000, "minibatch": 1_048_576},
    nullable={"game": str, "steps": int, "out": str},
    facts=_game_ppo_facts,
)


# Expert iteration (sorry-expit, training/expert_iteration.py): search self-play, learn, gate.
EXPIT_DEFAULTS = {
    "name": DEFAULTS["name"],
    "seed": DEFAULTS["seed"],
    "game": DEFAULTS["game"],
    "expert_iteration": {  # sorry-expit (training/expert_iteration.py): search self-play, learn, gate
        "init": "checkpoints/value-2p.safetensors",  # generation 0: an afterstate value network file
        "generations": 3,  # new networks to train
        "games": 40,  # self-play games per generation
        "simulations": 64,  # azsearch expansions per self-play decision
        "c_puct": 0.25,
        "prior_temperature": 0.1,  # priors: softmax(afterstate logits / this)
        "noise_alpha": 0.3,  # Dirichlet noise on the self-play root priors
        "noise_fraction": 0.25,
        "sample_moves": 8,  # each game's first N decisions sampled from the visit shares
        "window": 3,  # train on the self-play of the last N generations
        "epochs": 2,
        "batch_size": 256,  # decisions per step
        "learning_rate": 1.0e-4,
        "policy_weight": 1.0,  # weight of the search-policy cross-entropy beside the outcome loss
        "value_target_mix": 0.0,  # value target: (1 - mix) * outcome + mix * the search's value of the move
        "gate_games": 200,  # new network alone vs the current one alone
        "gate_threshold": None,  # promote at a win rate of at least this (None: the even share, 1 / sides)
        "eval_games": 200,  # each generation's network alone vs the heuristic and vs generation 0
        "workers": 1,  # Ray self-play actors
        "lockstep_games": 32,  # self-play games each worker searches side by side (batched network evaluations)
        "memory_mb": 2000,  # refuse settings whose self-play window or search trees would need more
    },
}
# Rough upper bounds for the memory check (a 2-player game has ~60 decisions with a choice).
DECISIONS_PER_GAME_PER_PLAYER = 75
NODE_BYTES = 180  # azsearch's per-node arrays


def expit_memory_mb(cfg: dict) -> float:
    """Megabytes the window of self-play data and the workers' search trees take (upper bound)."""
    from sorry_env.board import game
    from sorry_env.board.policy_input import STATE_SIZE

    x = cfg["expert_iteration"]
    n_actions = game.num_actions(cfg["game"]["rules"])
    per_decision = 2 * STATE_SIZE + 4 * n_actions + 32
    decisions = x["window"] * x["games"] * DECISIONS_PER_GAME_PER_PLAYER * cfg["game"]["num_players"]
    trees = x["workers"] * x["lockstep_games"] * x["simulations"] * (n_actions + 1) * NODE_BYTES
    return (decisions * per_decision + trees) / 2**20


def _expit_facts(cfg: dict) -> None:
    from sorry_env.agents.azsearch import MAX_SIMULATIONS
    from sorry_env.board.rules import get_rules

    x, g = cfg["expert_iteration"], cfg["game"]
    check_board_game(g["rules"], g["num_players"])
    if get_rules(g["rules"]).hand_size:
        raise ValueError(f"config: game.rules {g['rules']!r} deal hidden hands; azsearch cannot search them")
    if x["simulations"] > MAX_SIMULATIONS:
        raise ValueError(
            f"config: expert_iteration.simulations must be at most {MAX_SIMULATIONS}, got {x['simulations']}"
        )
    need = expit_memory_mb(cfg)
    if need > x["memory_mb"]:
        raise ValueError(
            "config: expert_iteration: games x window and simulations x lockstep_games x workers would need about "
            f"{need:,.0f} MB, more than memory_mb ({x['memory_mb']:,}); lower them or raise memory_mb"
        )
    check_network_file(cfg, "expert_iteration.init", relu=True)


EXPIT = Schema(
    EXPIT_DEFAULTS,
    ranges={
        "expert_iteration.c_puct": AT_LEAST_ZERO,
        "expert_iteration.noise_fraction": within(0, 1),
        "expert_iteration.sample_moves": AT_LEAST_ZERO,
        "expert_iteration.policy_weight": AT_LEAST_ZERO,
        "expert_iteration.value_target_mix": within(0, 1),
        "expert_iteration.gate_threshold": within(0, 1),
    },
    nullable={"expert_iteration.gate_threshold": float},
    facts=_expit_facts,
)


def _flag_type(default, nullable: type | None):
    """How a command-line flag's text becomes a value of a key with this default: a list is
    comma-separated (of its first entry's type), None takes the key's nullable type."""
    if isinstance(default, list):
        kind = type(default[0]) if default else str

        def comma_separated(text: str) -> list:
            return [kind(x) for x in text.split(",") if x]

        comma_separated.__name__ = f"comma-separated list of {kind.__name__}"  # argparse's message names it
        return comma_separated
    if isinstance(default, bool):
        return lambda text: {"true": True, "false": False}[text.lower()]
    return nullable if default is None else type(default)


def settings_parser(schema: Schema, description: str, prog: str | None = None) -> argparse.ArgumentParser:
    """A command line for a flat `schema`: ``--config FILE`` (YAML over the defaults) and one
    flag per key (``--eval-every``; lists comma-separated), the flags over the file. Read it
    with :func:`parse_settings`."""
    p = argparse.ArgumentParser(prog=prog, description=description)
    p.add_argument("--config", help="YAML file of settings (a shipped config by its name); flags override it")
    for key, default in schema.defaults.items():
        kind = _flag_type(default, schema.nullable.get(key))
        p.add_argument("--" + key.replace("_", "-"), dest=key, type=kind, default=argparse.SUPPRESS)
    return p


def parse_settings(parser: argparse.ArgumentParser, schema: Schema, argv=None, ignore: tuple = ()) -> tuple:
    """(the validated settings, the other arguments) of a :func:`settings_parser` command
    line; `ignore`: top-level keys of the config file that name the trainer, not a setting."""
    args = vars(parser.parse_args(argv))
    path = args.pop("config")
    others = {key: args.pop(key) for key in list(args) if key not in schema.defaults}
    return schema.load(path, args, ignore), argparse.Namespace(**others)
