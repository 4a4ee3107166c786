"""Training checkpoints that hold data only: a run directory copied from elsewhere cannot
execute anything when it is resumed or exported.

Stable-Baselines3's own ``model.save``/``load`` write a zip whose parameters are
cloudpickled, and unpickling runs whatever the file says. A checkpoint here is instead one
safetensors file, ``checkpoint.safetensors``:

- tensors ``policy/<name>``: the policy's ``state_dict`` (actor and critic);
  ``optimizer/<param index>/<key>``: the optimizer's per-parameter state (Adam's step and
  moments); ``rng/torch``: torch's generator state (uint8);
- the header's ``__metadata__["sorry_checkpoint"]``: JSON with the step and update counts,
  the episode statistics SB3 logs, and the numpy and Python generator states as integer
  lists.

Resuming rebuilds the model from the run's config (:func:`sorry_env.training.train.make_model`) and
loads these into it; every name, dtype and shape is checked against the rebuilt model from
the header before a tensor is read, and non-finite weights are refused. One file written
to a temporary name and renamed, so a reader never sees half a checkpoint.

Run directories of older versions hold ``checkpoint.zip`` (SB3's pickle-based format): they
are refused with a message, never loaded (docs/hardening.md shows how to convert one you
trust).

:class:`RunDirectory` is the bookkeeping the trainers' run directories share: a state file
(the config and what a resume needs, replaced whole), learner snapshots in ``pool/``, the
result ``policy.safetensors``.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable, Collection
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import save_file

from sorry_env import files
from sorry_env.agents.policy import Actor
from sorry_env.agents.tensor_file import check_expected, load_checked, read_header, spec
from sorry_env.checks import excerpt

from .config import check_same_run

FILE = "checkpoint.safetensors"
LEGACY_FILE = "checkpoint.zip"
FORMAT = "sorry_checkpoint"
FORMAT_VERSION = 1
ACTOR_PREFIX = "policy/mlp_extractor.actor."
CRITIC_PREFIX = "policy/mlp_extractor.critic."
VALUE_PREFIX = "policy/value_net."
ADAM_KEYS = ("exp_avg", "exp_avg_sq", "max_exp_avg_sq")


def find(run_dir) -> Path | None:
    """The checkpoint of a run directory (None if there is none yet); ValueError for a run
    directory in the old pickle-based format, which is never loaded."""
    run_dir = Path(run_dir)
    path = run_dir / FILE
    if path.is_file():
        return path
    if (run_dir / LEGACY_FILE).exists():
        raise ValueError(
            f"{run_dir} holds {LEGACY_FILE}, a checkpoint of an older sorry-train in Stable-Baselines3's "
            "pickle-based format; loading it could run code from the file, so it is not read. "
            "Train again, or convert a run you trust (docs/hardening.md)"
        )
    return None


def save(model, path) -> None:
    """Write `model`'s weights, optimizer state, counters and generator states to `path`
    (atomically: a temporary file, then a rename)."""
    tensors = {f"policy/{k}": v for k, v in model.policy.state_dict().items()}
    scalars: dict[str, dict] = {}
    for index, entry in model.policy.optimizer.state_dict()["state"].items():
        for key, value in entry.items():
            if torch.is_tensor(value):
                tensors[f"optimizer/{index}/{key}"] = value
            else:
                scalars.setdefault(str(index), {})[key] = value
    tensors = {k: v.detach().cpu().clone().contiguous() for k, v in tensors.items()}
    tensors["rng/torch"] = torch.get_rng_state()
    _, keys, pos, has_gauss, gauss = np.random.get_state()
    version, py_state, py_gauss = random.getstate()
    meta = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "num_timesteps": int(model.num_timesteps),
        "n_updates": int(model._n_updates),
        "episode_num": int(model._episode_num),
        "ep_info_buffer": [{k: float(v) for k, v in info.items()} for info in (model.ep_info_buffer or [])],
        "optimizer_scalars": scalars,
        "rng": {
            "numpy": {
                "keys": [int(k) for k in keys],
                "pos": int(pos),
                "has_gauss": int(has_gauss),
                "cached_gaussian": float(gauss),
            },
            "python": {"version": version, "state": list(py_state), "gauss_next": py_gauss},
        },
    }
    tmp = f"{path}.tmp"
    save_file(tensors, tmp, metadata={FORMAT: json.dumps(meta)})
    os.replace(tmp, path)


def _read(path) -> tuple[dict, dict]:
    """(metadata JSON, tensor header) of a checkpoint file, ValueError if it is not one."""
    header_meta, found = read_header(path)
    if FORMAT not in header_meta:
        raise ValueError(f"{path} is a safetensors file without {FORMAT} metadata")
    try:
        meta = json.loads(header_meta[FORMAT])
    except (ValueError, RecursionError):
        raise ValueError(f"{path}: its {FORMAT} metadata is not JSON") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT or meta.get("format_version") != FORMAT_VERSION:
        raise ValueError(f"{path}: not a version {FORMAT_VERSION} {FORMAT} (metadata {excerpt(meta)})")
    for key in ("num_timesteps", "n_updates", "episode_num"):
        value = meta.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{path}: {key} must be a non-negative integer, got {excerpt(value)}")
    return meta, found


def _expected(model, found: dict) -> dict:
    """name -> (dtype, shape) the rebuilt model needs; optimizer entries as the file lists
    them (an optimizer that has not stepped yet has none), each checked against its parameter."""
    expected = {f"policy/{k}": spec(v) for k, v in model.policy.state_dict().items()}
    expected["rng/torch"] = spec(torch.get_rng_state())
    params = [p for group in model.policy.optimizer.param_groups for p in group["params"]]
    for name in found:
        if not name.startswith("optimizer/"):
            continue
        parts = name.split("/")
        if (
            len(parts) != 3
            or not parts[1].isdigit()
            or int(parts[1]) >= len(params)
            or parts[2] not in ("step", *ADAM_KEYS)
        ):
            continue  # reported as unexpected by check_expected
        shape = () if parts[2] == "step" else tuple(params[int(parts[1])].shape)
        expected[name] = ("F32", shape)
    return expected


def restore(model, path) -> None:
    """Load checkpoint `path` into `model`, a MaskablePPO freshly built from the run's config."""
    meta, found = _read(path)
    check_expected(path, found, _expected(model, found), "the model this run's config builds")
    tensors = load_checked(path, list(found))
    model.policy.load_state_dict({k.removeprefix("policy/"): v for k, v in tensors.items() if k.startswith("policy/")})
    state: dict[int, dict] = {}
    for name, value in tensors.items():
        if name.startswith("optimizer/"):
            _, index, key = name.split("/")
            state.setdefault(int(index), {})[key] = value
    scalars = meta.get("optimizer_scalars", {})
    if not isinstance(scalars, dict):
        raise ValueError(f"{path}: optimizer_scalars must be an object")  # noqa: TRY004 (a file's content)
    for index, entry in scalars.items():
        if not (
            isinstance(entry, dict)
            and index.isdigit()
            and int(index) in state
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in entry.values())
        ):
            raise ValueError(f"{path}: malformed optimizer_scalars entry {excerpt(index)}: {excerpt(entry)}")
        state[int(index)].update(entry)
    optimizer = model.policy.optimizer
    optimizer.load_state_dict({"state": state, "param_groups": optimizer.state_dict()["param_groups"]})
    model.num_timesteps = meta["num_timesteps"]
    model._n_updates = meta["n_updates"]
    model._episode_num = meta["episode_num"]
    infos = meta.get("ep_info_buffer", [])
    if not isinstance(infos, list) or not all(
        isinstance(i, dict) and all(isinstance(v, (int, float)) for v in i.values()) for i in infos
    ):
        raise ValueError(f"{path}: ep_info_buffer must be a list of objects of numbers")
    if model.ep_info_buffer is not None:
        model.ep_info_buffer.clear()
        model.ep_info_buffer.extend(infos)
    _restore_rng(path, meta.get("rng"), tensors["rng/torch"])


def _restore_rng(path, rng, torch_state) -> None:
    try:
        np_state = rng["numpy"]
        keys = np.array(np_state["keys"], dtype=np.uint64)
        py = rng["python"]
        py_state = tuple(int(x) for x in py["state"])
        if (
            keys.shape != (624,)
            or (keys >= 2**32).any()
            or len(py_state) != 625
            or not all(0 <= x < 2**32 for x in py_state)
        ):
            raise ValueError("wrong sizes")
        np.random.set_state(
            (
                "MT19937",
                keys.astype(np.uint32),
                int(np_state["pos"]),
                int(np_state["has_gauss"]),
                float(np_state["cached_gaussian"]),
            )
        )
        random.setstate((int(py["version"]), py_state, None if py["gauss_next"] is None else float(py["gauss_next"])))
        torch.set_rng_state(torch_state)
    except (KeyError, TypeError, ValueError, OverflowError, RuntimeError) as exc:
        raise ValueError(f"{path}: malformed generator states ({excerpt(str(exc))})") from None


def with_value(actor, critic: dict, config: dict):
    """A copy of `actor` (agents.policy.Actor) holding the run's value network, from the
    critic's tensors as sb3 names them (``critic.{2k}.*`` layers, then ``value_net.*``)."""
    net = config["network"]
    out = Actor(net["kind"], list(net["hidden"]), net["activation"], config["game"]["rules"], list(net["value_hidden"]))
    tensors = {k: v for k, v in actor.state_dict().items()}
    n_hidden = len(net["value_hidden"])
    for k in range(n_hidden):
        for part in ("weight", "bias"):
            tensors[f"value.layers.{k}.{part}"] = critic[f"critic.{2 * k}.{part}"]
    for part in ("weight", "bias"):
        tensors[f"value.layers.{n_hidden}.{part}"] = critic[f"value_net.{part}"]
    out.load_state_dict(tensors)
    out.eval()
    return out


def load_actor(path, cfg: dict) -> tuple[Actor, int]:
    """(the policy's actor with the run's value network, its step count) from checkpoint
    `path` of a run with config `cfg`: what sorry-export needs, without Stable-Baselines3."""
    meta, found = _read(path)
    net = cfg["network"]
    actor = Actor(net["kind"], list(net["hidden"]), net["activation"], cfg["game"]["rules"])
    expected = {ACTOR_PREFIX + k: spec(v) for k, v in actor.state_dict().items()}
    actor_found = {k: v for k, v in found.items() if k.startswith(ACTOR_PREFIX)}
    check_expected(path, actor_found, expected, "the actor of this run's config")
    tensors = load_checked(path, list(expected))
    actor.load_state_dict({k.removeprefix(ACTOR_PREFIX): v for k, v in tensors.items()})
    critic_names = [k for k in found if k.startswith(CRITIC_PREFIX) or k.startswith(VALUE_PREFIX)]
    critic = {
        k.removeprefix("policy/").removeprefix("mlp_extractor."): v for k, v in load_checked(path, critic_names).items()
    }
    try:
        actor = with_value(actor, critic, cfg)
    except (KeyError, RuntimeError) as exc:
        raise ValueError(
            f"{path}: its value network does not fit this run's config ({excerpt(str(exc), 200)})"
        ) from None
    return actor, meta["num_timesteps"]


class RunDirectory:
    """A trainer's run directory `path` (``<runs_dir>/<name>``) for config `cfg`: its state
    file `state_name` (JSON holding the config and what a resume needs; sorry-train's
    ``run_state.json``, sorry-train-rllib's ``rllib_run.json``), learner snapshots in
    ``pool/`` and the result, ``policy.safetensors``."""

    def __init__(self, cfg: dict, path: Path, state_name: str):
        self.cfg, self.dir = cfg, path
        self.state_path = self.dir / state_name
        self.pool_dir = self.dir / "pool"
        self.policy_path = self.dir / "policy.safetensors"

    def read_state(self, may_change: Collection[str], max_bytes: int, take: Callable[[dict], object]) -> dict:
        """The state file of the run to resume (at most `max_bytes`), refused unless a run of
        this config wrote it (but for the top-level keys that `may_change` on resume) and every
        snapshot it lists is in ``pool/``; `take` reads the trainer's own fields from it. A
        field missing or of another type: ValueError saying the file is damaged."""
        state = files.read_json(self.state_path, max_bytes, "run state")
        try:
            check_same_run(state["config"], self.cfg, may_change, self.state_path)
            for name in state["snapshots"]:
                self.snapshot_file(name)
            take(state)
        except (KeyError, TypeError, AttributeError, RecursionError) as exc:
            raise ValueError(f"{self.state_path} is damaged ({type(exc).__name__}: {str(exc)[:80]})") from None
        return state

    def snapshot_file(self, name) -> Path:
        """A snapshot the state file lists: a file directly in ``pool/`` (no link), nowhere else."""
        path = self.dir / str(name)
        if not isinstance(name, str) or path.parent.resolve() != self.pool_dir.resolve() or path.is_symlink():
            raise ValueError(f"{self.state_path}: snapshot {excerpt(name)} is not a file in {self.pool_dir}")
        return path

    def write_state(self, state: dict) -> None:
        """Replace the state file whole: a kill leaves the previous one."""
        files.write_text_atomic(self.state_path, json.dumps(state, indent=1))
