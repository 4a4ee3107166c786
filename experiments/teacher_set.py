"""Play a config's search teacher and save its decisions, without training a student.

`sorry-train` plays the teacher of a config's ``distillation`` section, distils a student and
then runs PPO. When the teacher set is what an experiment is after (students are trained on
it with experiments/distil_students.py), this script makes only the set, in the same file
and with the same games as the run would: ``<runs-dir>/<name>/teacher.npz``. A saved set of
the same settings is read back, or extended when it is shorter (training/search_teacher.py).

    python experiments/teacher_set.py experiments/configs/flagship-2p-a4.yaml

Results: docs/research/2026-11-24-flagship-2p.md.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from sorry_env.training.config import check_network_file, load_config
from sorry_env.training.search_teacher import teacher_data


def main(argv: list[str] | None = None) -> Path:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("config", help="a sorry-train config with a distillation section")
    p.add_argument("--runs-dir", default="runs", help="parent directory of run directories (default runs)")
    args = p.parse_args(argv)
    try:
        cfg = load_config(args.config)
    except (ValueError, OSError) as e:
        p.error(str(e))
    if cfg["distillation"]["decisions"] == 0:
        p.error(f"{args.config} has no distillation decisions: there is no teacher to play")
    if cfg["distillation"]["value"] is not None:
        try:
            check_network_file(cfg, "distillation.value")  # the teacher's value network, as sorry-train checks it
        except ValueError as e:
            p.error(str(e))
    run_dir = Path(args.runs_dir) / cfg["name"]
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / "teacher.npz"
    teacher_data(cfg, path)
    print(f"teacher set: {path}")
    return path


if __name__ == "__main__":
    main()
