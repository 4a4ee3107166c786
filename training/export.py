"""Export a MaskablePPO policy to a self-describing policy file (see agents/policy.py).

Only the actor is kept (training/sb3_policy.py): the value network is a training aid and
stays in the training checkpoint.

CLI: ``sorry-export RUN_DIR OUT.safetensors [--tournament results.json ...]`` exports the
run's latest checkpoint with the run's config and evaluation history as metadata, plus the
summary of tournaments measured with ``sorry-eval --out`` (its ``results.json``).
"""
from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from agents.policy import save_policy


def export_model(model, path, config: dict, timesteps: int, evaluation: dict | None = None,
                 wall_seconds: float | None = None) -> None:
    """Write the model's actor to `path` atomically (a reader never sees half a file)."""
    policy = model.policy
    tmp = f"{path}.tmp"
    save_policy(tmp, policy.mlp_extractor.actor, rules=config["game"]["rules"],
                num_players=config["game"]["num_players"], network=policy.network,
                name=f"{config['name']}@{timesteps}",
                training={"config": config, "timesteps": int(timesteps), "wall_seconds": wall_seconds},
                evaluation=evaluation)
    os.chmod(tmp, 0o644)  # safetensors writes owner-only files; policy files are for sharing
    os.replace(tmp, path)


def tournament_summary(results_path) -> dict:
    """The parts of a sorry-eval results.json worth keeping in a policy file (no game log)."""
    results = json.loads(Path(results_path).read_text())
    return {key: results[key] for key in ("config", "agents", "mean_turns", "first_mover_advantage")}


def export_run(run_dir, out, tournaments=()) -> None:
    """Export the latest checkpoint of a training run directory."""
    from sb3_contrib import MaskablePPO

    run_dir = Path(run_dir)
    state = json.loads((run_dir / "run_state.json").read_text())
    model = MaskablePPO.load(run_dir / "checkpoint.zip", device="cpu")
    history = state["evaluations"]
    evaluation = {"latest": history[-1] if history else None, "history": history,
                  "imitation": state["imitation"], "tournaments": [tournament_summary(p) for p in tournaments]}
    export_model(model, out, state["config"], model.num_timesteps, evaluation, state.get("wall_seconds"))


def main(argv=None):
    p = argparse.ArgumentParser(description="Export a training run's latest checkpoint as a policy file.")
    p.add_argument("run_dir", help="training run directory (holds checkpoint.zip and run_state.json)")
    p.add_argument("out", help="policy file to write (.safetensors)")
    p.add_argument("--tournament", nargs="*", default=[], metavar="RESULTS_JSON",
                   help="sorry-eval results.json files to record in the metadata")
    args = p.parse_args(argv)
    export_run(args.run_dir, args.out, args.tournament)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
