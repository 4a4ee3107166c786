"""Training configuration: YAML files in configs/ over the defaults below.

Every key a config may set is listed in DEFAULTS (with its meaning); a config file that
names an unknown key is refused, so a typo cannot silently fall back to a default.
"""
from __future__ import annotations

import copy

import yaml

DEFAULTS = {
    "name": "run",                 # run directory: <runs_dir>/<name>
    "seed": 0,
    "game": {
        "num_players": 2,
        "rules": "hasbro2003",     # preset name (sorry_env.PRESETS)
        "max_turns": 2000,         # truncate a game after this many cards
    },
    "network": {
        "kind": "afterstate",      # afterstate (score each move's resulting position) or mlp
        "hidden": [256, 256],      # the actor's MLP (the part that is exported)
        "value_hidden": [256, 256],
        "activation": "relu",      # relu or tanh
    },
    "ppo": {                       # sb3-contrib MaskablePPO arguments
        "learning_rate": 3.0e-4,
        "n_steps": 256,            # per env and rollout
        "batch_size": 1024,
        "n_epochs": 4,
        "gamma": 0.995,
        "gae_lambda": 0.95,
        "clip_range": 0.2,
        "ent_coef": 0.01,
        "vf_coef": 0.5,
        "max_grad_norm": 0.5,
        "target_kl": None,
    },
    "envs": 16,                    # environments batched in the one training process
    "torch_threads": 1,            # 2 shared cores: one thread avoids oversubscription
    "opponents": {
        "mix": {"snapshots": 0.5, "random": 0.5},  # kind -> weight (see training/opponents.py)
        "snapshot_every": 50_000,  # learner steps between snapshots joining the pool
        "snapshot_window": 20,     # opponents are drawn from the last N snapshots
        "snapshot_sample": True,   # snapshots sample their moves (False: argmax)
    },
    "imitation": {                 # warm start by cloning a scripted teacher (training/imitation.py)
        "samples": 0,              # teacher moves to learn from; 0: no warm start
        "teacher": "heuristic",
        "mix": {"heuristic": 0.5, "greedy": 0.25, "random": 0.25},  # the teacher's opponents
        "chunk": 50_000,           # moves generated, then trained on, at a time
        "epochs": 2,               # passes over each chunk
        "batch_size": 512,
        "learning_rate": 1.0e-3,
    },
    "distillation": {              # warm start from a search teacher's move values (training/search_teacher.py)
        "decisions": 0,            # teacher decisions to learn from; 0: none
        "iterations": 400,         # the teacher's (mcts) playouts per decision
        "rollout_plies": 6,        # moves per playout before the value network scores it
        "value": None,             # value network file (training/value_fit.py); None: hand-written evaluation
        "init": None,              # start the actor from this afterstate network file (same hidden sizes)
        "workers": 2,              # processes playing teacher games
        "epochs": 3,
        "batch_size": 256,         # decisions per step
        "learning_rate": 3.0e-4,
        "temperature": 0.01,       # of the soft targets softmax(values / temperature)
    },
    "budget": {"timesteps": 1_000_000},  # learner steps (opponents' moves not counted)
    "evaluation": {
        "every": 100_000,          # learner steps between evaluations (and at the end)
        "games": 200,              # per opponent
        "opponents": ["random"],   # agent names; the learner plays one seat vs these
    },
    "checkpoint_every": 50_000,    # learner steps between checkpoints
}


def _merge(base: dict, override: dict, where: str) -> dict:
    out = copy.deepcopy(base)
    for key, value in override.items():
        if key not in base:
            raise ValueError(f"config: unknown key {where}{key!r}; known: {sorted(base)}")
        # The mix is one whole mapping (its keys are agent names), not merged key by key.
        if isinstance(base[key], dict) and isinstance(value, dict) and key != "mix":
            out[key] = _merge(base[key], value, f"{where}{key}.")
        else:
            out[key] = value
    return out


def load_config(path) -> dict:
    with open(path) as f:
        data = yaml.safe_load(f) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a config must be a YAML mapping")
    return _merge(DEFAULTS, data, "")
