"""Migrate a policy or value-network file to this code's input layout, keeping its play exactly.

    python -m sorry_env.training.migrate_policy OLD.safetensors NEW.safetensors

A policy file records the layout it was made for (``layout.version``, the observation and
state sizes) and is refused by a package with another layout (docs/versioning.md). When a
layout only *adds* input entries that are zero in every game the network was trained for, the
network can be carried over exactly: its first layer gets zero weights at the new entries'
positions, so on every position of its own game it computes the same numbers as before.

Supported migrations (:data:`INPUT_MAPS`):

- ``sorry_v0`` -> ``sorry_v1``: v1 appended the Fire and Ice entries (observation indices
  1151..1183: which pawn holds Fire, which is iced, a fire decision pending; state entries
  ``FIRE``, ``ICE``, ``FIRE_PENDING`` after ``SEVEN_MOVED``). All are 0 in every preset
  without Fire and Ice, and a v0 file can only be for such a preset. The v0 rules metadata
  gains the new rules field (``fire_ice: false``).

The first layer's input may be the observation (the shipped ``afterstate`` and ``mlp``
actors) or, for networks that read the whole policy input, the observation followed by the
state array; any other width is refused. Everything else (other layers, metadata) is kept;
the metadata records the migration under ``migrated``. A kept value network
(``value.layers.*``, which reads the observation) has its first layer widened the same way.
"""

from __future__ import annotations

import argparse
import os

import numpy as np
import torch
from safetensors.torch import load_file

from sorry_env.agents import tensor_file
from sorry_env.agents.policy import FORMAT, FORMAT_VERSION, read_header
from sorry_env.board.observation import OBS_SIZE
from sorry_env.board.policy_input import STATE_SIZE, layout, rules_dict, rules_from_dict
from sorry_env.version import LAYOUT_VERSION

# Old layout id -> (its observation size, its state size, where its observation entries are
# in this layout's observation, where its state entries are in this layout's state array).
INPUT_MAPS = {
    "sorry_v0": (1151, 139, np.arange(1151), np.arange(139)),
}
FIRST_WEIGHT = "net.layers.0.weight"
VALUE_FIRST_WEIGHT = "value.layers.0.weight"  # the optional value network (network.value_hidden)


def input_index(version: str, width: int) -> np.ndarray:
    """For a first layer of `width` inputs made for layout `version`: the index in this
    layout's input of each old input (ValueError if there is no exact migration)."""
    if version not in INPUT_MAPS:
        raise ValueError(
            f"no migration from layout {version!r} to {LAYOUT_VERSION!r}; known: {sorted(INPUT_MAPS)} "
            "(a file already on this layout needs none)"
        )
    obs_size, state_size, obs_index, state_index = INPUT_MAPS[version]
    if width == obs_size:
        return obs_index
    if width == obs_size + state_size:
        return np.concatenate([obs_index, OBS_SIZE + state_index])
    raise ValueError(
        f"the first layer reads {width} inputs; a {version} network reads the observation ({obs_size}) "
        f"or the observation and the state ({obs_size + state_size})"
    )


def widen_first_layer(weight: torch.Tensor, index: np.ndarray, new_width: int) -> torch.Tensor:
    """The (out, new_width) weight with the old columns at `index` and zeros elsewhere."""
    new = torch.zeros((weight.shape[0], new_width), dtype=weight.dtype)
    new[:, torch.from_numpy(index)] = weight
    return new


def migrate(old_path: str | os.PathLike, new_path: str | os.PathLike) -> dict:
    """Write the migrated file `new_path` (atomically, world-readable); returns its metadata."""
    meta, found = read_header(old_path)
    if meta.get("format_version") != FORMAT_VERSION:
        raise ValueError(f"{old_path}: format version {meta.get('format_version')!r}, this code reads {FORMAT_VERSION}")
    old_layout = meta.get("layout")
    if not isinstance(old_layout, dict) or not isinstance(old_layout.get("version"), str):
        raise ValueError(f"{old_path}: its metadata has no layout version")
    version = old_layout["version"]
    rules = rules_from_dict(meta.get("rules"), str(old_path))
    new_layout = layout(rules)
    if version == LAYOUT_VERSION:
        raise ValueError(f"{old_path} is already on layout {LAYOUT_VERSION}: nothing to migrate")
    obs_size, state_size = INPUT_MAPS.get(version, (None, None, None, None))[:2]
    if version in INPUT_MAPS and (old_layout.get("obs_size"), old_layout.get("state_size")) != (obs_size, state_size):
        raise ValueError(f"{old_path}: layout {version} must have obs_size {obs_size} and state_size {state_size}")
    if old_layout.get("n_actions") != new_layout["n_actions"]:
        raise ValueError(
            f"{old_path}: {old_layout.get('n_actions')} actions, but rules {rules.name!r} now have "
            f"{new_layout['n_actions']}: the action layout changed, no exact migration"
        )
    if FIRST_WEIGHT not in found or len(found[FIRST_WEIGHT][1]) != 2:
        raise ValueError(f"{old_path}: no 2-D tensor {FIRST_WEIGHT!r} (the first layer)")
    index = input_index(version, int(found[FIRST_WEIGHT][1][1]))
    new_width = OBS_SIZE if len(index) == obs_size else OBS_SIZE + STATE_SIZE
    tensors = load_file(str(old_path))
    tensors[FIRST_WEIGHT] = widen_first_layer(tensors[FIRST_WEIGHT], index, new_width).contiguous()
    if VALUE_FIRST_WEIGHT in tensors:  # a kept value network reads the observation too
        value_index = input_index(version, int(tensors[VALUE_FIRST_WEIGHT].shape[1]))
        tensors[VALUE_FIRST_WEIGHT] = widen_first_layer(tensors[VALUE_FIRST_WEIGHT], value_index, OBS_SIZE).contiguous()
    meta = dict(meta)
    meta["layout"] = new_layout
    meta["rules"] = rules_dict(rules)  # the old rules, written with every field of this code's Rules
    meta["migrated"] = {"from": version, "to": LAYOUT_VERSION, "tool": "sorry_env.training.migrate_policy"}
    tensor_file.save_atomic(new_path, tensors, FORMAT, meta)
    return meta


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description="Migrate a policy/value file to this sorry_env's input layout, exactly.")
    p.add_argument("old", help="policy file made for an older layout (.safetensors)")
    p.add_argument("new", help="file to write (may be the same path)")
    args = p.parse_args(argv)
    try:
        meta = migrate(args.old, args.new)
    except ValueError as e:
        p.error(str(e))
    except OSError as e:
        p.exit(1, f"migrate_policy: cannot migrate {args.old} to {args.new}: {e}\n")
    print(f"wrote {args.new} ({meta['migrated']['from']} -> {meta['migrated']['to']})")


if __name__ == "__main__":
    main()
