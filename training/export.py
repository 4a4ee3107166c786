"""Export a MaskablePPO policy to a self-describing policy file (see agents/policy.py).

The actor is kept (training/sb3_policy.py), and with it the run's critic (the value MLP on
the observation, +1 win / -1 loss), which lets the file tell its estimate of a position
(:meth:`sorry_env.agents.policy.PolicyAgent.win_chance`); the optimizer state stays in the checkpoint.

CLI: ``sorry-export RUN_DIR OUT.safetensors [--tournament results.json ...]`` exports the
run's latest checkpoint with the run's config and evaluation history as metadata, plus the
summary of tournaments measured with ``sorry-eval --out`` (its ``results.json``).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, cast

from sorry_env import files
from sorry_env.agents.policy import PolicyAgent, save_policy
from sorry_env.files import MB

from . import checkpoint
from .config import validate

if TYPE_CHECKING:
    from sb3_contrib import MaskablePPO

    from .sb3_policy import ActorCritic


def export_model(
    model: MaskablePPO,
    path: str | Path,
    config: dict,
    timesteps: int,
    evaluation: dict | None = None,
    wall_seconds: float | None = None,
) -> None:
    """Write the model's actor and critic to `path` atomically (a reader never sees half a file)."""
    policy = model.policy
    extractor = cast("ActorCritic", policy.mlp_extractor)  # typed as sb3's MlpExtractor; SelfPlayPolicy's
    critic = {f"critic.{k}": v for k, v in extractor.critic.state_dict().items()}
    critic.update({f"value_net.{k}": v for k, v in policy.value_net.state_dict().items()})
    actor = checkpoint.with_value(extractor.actor, critic, config)
    training = {"config": config, "timesteps": int(timesteps), "wall_seconds": wall_seconds}
    export_actor(actor, path, config, f"{config['name']}@{timesteps}", training, evaluation)


def export_actor(actor, path, config: dict, name: str, training: dict, evaluation: dict | None = None) -> None:
    """Write `actor` (agents.policy.Actor) of a run with `config` (its ``game`` and ``network``
    sections: sorry-train's or sorry-train-rllib's) to policy file `path`, atomically, named
    `name`, with `training` (and `evaluation`) in its metadata: every trainer's one export."""
    net = config["network"]
    save_policy(
        path,
        actor,
        rules=config["game"]["rules"],
        num_players=config["game"]["num_players"],
        network={"kind": actor.kind, "hidden": list(net["hidden"]), "activation": net["activation"]},
        name=name,
        training=training,
        evaluation=evaluation,
    )


def policy_agent(actor, path: str | Path) -> PolicyAgent:
    """The agent of policy file `path` (written by this run, read once) playing `actor`, the
    run's network in memory, which keeps learning: the evaluation hook's agent, greedy, that
    measures the current weights at every check without writing or reading a file again."""
    agent = PolicyAgent(path)
    agent.actor = actor
    return agent


# Caps on the JSON files export reads (a run's state holds its config and evaluation history;
# a sorry-eval results.json its summary, without the games, which go to games.csv): far above
# real ones (kilobytes), and small enough that parsing stays bounded: JSON of empty lists
# takes about 26 times its size once parsed (16 MB: 429 MB peak RSS), so 32 MB stays under 1 GB.
MAX_RUN_STATE_BYTES = 32 * MB
MAX_RESULTS_BYTES = 16 * MB


def tournament_summary(results_path: str | Path, config: dict) -> dict:
    """The parts of a sorry-eval results.json worth keeping in a policy file (no game log);
    ValueError unless it is one, played under the run's rules and player count by a policy."""
    results = files.read_json(results_path, MAX_RESULTS_BYTES, "--tournament results file")
    try:
        summary = {key: results[key] for key in ("config", "agents", "mean_turns", "first_mover_advantage")}
        played = (results["config"]["rules"], results["config"]["players"])
        specs = results["config"]["agents"]
    except (KeyError, TypeError) as e:
        raise ValueError(
            f"--tournament {results_path}: not a sorry-eval results.json ({type(e).__name__}: {str(e)[:80]})"
        ) from None
    game = config["game"]
    if played != (game["rules"], game["num_players"]):
        raise ValueError(
            f"--tournament {results_path}: played under {played[0]} with {played[1]} players, "
            f"but the run trains {game['rules']} with {game['num_players']}"
        )
    if not any(str(spec).endswith(".safetensors") and ":" not in str(spec) for spec in specs):
        raise ValueError(f"--tournament {results_path}: no policy file took part (agents {specs})")
    return summary


def export_run(
    run_dir: str | Path, out: str | Path, tournaments: Iterable[str | Path] = (), trusted: Iterable[str] = ()
) -> None:
    """Export the latest checkpoint of a training run directory. Reads data only (JSON and
    safetensors): a run directory from elsewhere cannot run code here. The agent specs of its
    stored config are data: one that runs code (``module:Name``, an sb3 zip) is refused unless
    it is in `trusted` (the specs the user named with ``--trust-agent``)."""
    run_dir, out = Path(run_dir), Path(out)
    state_path = run_dir / "run_state.json"
    if not run_dir.is_dir():
        raise ValueError(f"{run_dir}: no such directory (a training run's folder, e.g. runs/quick)")
    if not state_path.is_file():
        raise ValueError(f"{run_dir} is not a training run directory: it has no run_state.json")
    checkpoint_path = checkpoint.find(run_dir)
    if checkpoint_path is None:
        raise ValueError(f"{run_dir} is not a training run directory: it has no {checkpoint.FILE}")
    if not out.parent.is_dir():
        raise ValueError(f"cannot write {out}: no directory {out.parent}")
    state = files.read_json(state_path, MAX_RUN_STATE_BYTES, "run state")
    try:
        config = state["config"]
        validate(
            config,
            warm_start=False,
            stored_in=str(state_path),
            trusted=tuple(trusted),
            how=f"sorry-export {run_dir} {out} --trust-agent 'SPEC'",
        )
        history = list(state["evaluations"])
        evaluation = {"latest": history[-1] if history else None, "history": history, "imitation": state["imitation"]}
        wall_seconds = state.get("wall_seconds")
    except (KeyError, TypeError, AttributeError, RecursionError) as exc:
        raise ValueError(f"{state_path} is damaged ({type(exc).__name__}: {str(exc)[:120]})") from None
    except ValueError as exc:
        raise ValueError(f"{state_path}: {str(exc)[:400]}") from None
    evaluation["tournaments"] = [tournament_summary(path, config) for path in tournaments]
    actor, timesteps = checkpoint.load_actor(checkpoint_path, config)
    training = {"config": config, "timesteps": int(timesteps), "wall_seconds": wall_seconds}
    export_actor(actor, out, config, f"{config['name']}@{timesteps}", training, evaluation)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description="Export a training run's latest checkpoint as a policy file.")
    p.add_argument("run_dir", help="training run directory (holds checkpoint.safetensors and run_state.json)")
    p.add_argument("out", help="policy file to write (.safetensors)")
    p.add_argument(
        "--tournament",
        nargs="*",
        default=[],
        metavar="RESULTS_JSON",
        help="sorry-eval results.json files to record in the metadata",
    )
    p.add_argument(
        "--trust-agent",
        action="append",
        default=[],
        metavar="SPEC",
        help="an agent spec that runs code (package.module:Name, an sb3 .zip) which the run's stored config "
        "names and you trust: stored specs are data, so such a spec is refused unless named here",
    )
    args = p.parse_args(argv)
    try:
        export_run(args.run_dir, args.out, args.tournament, args.trust_agent)
    except ValueError as e:
        p.error(str(e))
    except OSError as e:  # e.g. OUT is a directory, or the disk is full
        p.exit(1, f"sorry-export: cannot write {args.out}: {e}\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
