"""``sorry-bench``: the standard tasks, scoring agents on them, training baselines from
scratch, and the results report (docs/baselines.md).

    sorry-bench list                                   # the tasks and their definitions
    sorry-bench score heuristic                        # every task the agent fits
    sorry-bench score runs/x/policy.safetensors --task 2p-heuristic --out runs/bench/score
    sorry-bench run ppo 2p-heuristic --seed 0 --budget 200000
    sorry-bench report                                 # table + learning curves from runs/bench

Every name (task, algorithm) and every agent is checked before any game is played; a name
it does not know gets the list of those that exist.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys

from sorry_env import games
from sorry_env.agent import IllegalMove
from sorry_env.version import made_by

from .tasks import TASKS, get_task

DEFAULT_RUNS = "runs/bench"


def _percent(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def score_header(width: int) -> str:
    return f"{'task':<26} {'agent':<{width}} {'win rate':>9} {'95% interval':>16} {'games':>6} {'normalized':>10}"


def score_line(row: dict, width: int) -> str:
    normalized = "-" if row["normalized"] is None else f"{row['normalized']:.3f}"
    interval = f"[{_percent(row['ci_low'])}, {_percent(row['ci_high'])}]"
    line = (
        f"{row['task']:<26} {row['agent']:<{width}} {_percent(row['win_rate']):>9} {interval:>16} "
        f"{row['games']:>6} {normalized:>10}"
    )
    return line + ("" if row.get("standard", True) else "  (not standard: games or seed)")


def format_scores(rows: list[dict]) -> str:
    width = max([28] + [len(row["agent"]) for row in rows])  # a long spec is shown whole
    return "\n".join([score_header(width)] + [score_line(row, width) for row in rows])


def format_tasks() -> str:
    lines = []
    for task in TASKS.values():
        d = task.definition()
        game = f"rules {task.rules}" if task.rules else games.game_type(task.game_id).long_name
        learner = f"one seat vs {', '.join(task.opponents)}" if task.opponents else "self-play (every seat)"
        anchors = ", ".join(f"{k} {w}/{g}" for k, (w, g) in d["anchors"].items()) or "not measured"
        lines += [
            f"{task.id}: {task.summary}",
            f"  game: {game}, {task.players} players; learner: {learner}; budget {task.budget:,} learner steps",
            f"  score: win rate of [AGENT, {', '.join(task.eval_opponents)}] over {task.eval_games} games, "
            f"seed {task.eval_seed}; anchors: {anchors}",
            f"  in-run evaluations: {task.curve_games} games every {task.curve_every:,} steps",
        ]
    return "\n".join(lines)


def check_out_dir(parser: argparse.ArgumentParser, out: str) -> pathlib.Path:
    from sorry_env.agents.arena.cli import check_out_dir as check

    try:
        check(out)
    except ValueError as error:
        parser.error(str(error).replace("--out", "out directory"))
    return pathlib.Path(out)


def earlier_scores(parser: argparse.ArgumentParser, out: pathlib.Path, agent: str) -> list[dict]:
    """`agent`'s scores already in `out` (kept for the tasks not scored again); a usage error
    if `out` holds another agent's scores or a scores.json that does not read."""
    from .results import read_scores

    if not (out / "scores.json").exists():
        return []
    try:
        earlier = read_scores(out / "scores.json")
    except ValueError as error:
        parser.error(f"{error}; pass another --out")
    others = sorted({row["agent"] for row in earlier} - {agent})
    if others:
        parser.error(f"{out} holds the scores of {others[0]!r}, not {agent!r}: pass another --out")
    return earlier


def fitting_tasks(parser: argparse.ArgumentParser, args) -> list:
    """The tasks to score (`--task`, else all) that the agent fits, every one checked before
    the first game; a task named with --task must fit, others are skipped with the reason."""
    from .scoring import check_fits

    try:
        tasks = [get_task(name) for name in args.task] if args.task else list(TASKS.values())
    except ValueError as error:
        parser.error(str(error))
    fitting, skipped = [], []
    for task in tasks:
        try:
            check_fits(args.agent, task)
            fitting.append(task)
        except ValueError as error:
            if args.task:
                parser.error(str(error))
            skipped.append(f"{task.name}: {error}")
    if not fitting:
        reasons = list(dict.fromkeys(reason.partition("): ")[2] for reason in skipped))  # each reason once
        parser.error(f"{args.agent!r} fits none of the tasks ({', '.join(TASKS)}): " + "; ".join(reasons))
    for line in skipped:
        print(f"skipped {line}")
    return fitting


def cmd_score(parser, args, argv: list[str] | None = None) -> None:
    from .results import write_scores
    from .scoring import score

    if args.out is None:  # one directory per agent (its whole spec: two folders' model.zip differ), for report
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in args.agent.strip("/")).lstrip(".")
        args.out = f"{DEFAULT_RUNS}/score/{safe[:120] or 'agent'}"
    out = check_out_dir(parser, args.out)
    earlier = earlier_scores(parser, out, args.agent)
    provenance = made_by("sorry-bench", sys.argv[1:] if argv is None else argv)
    fitting = fitting_tasks(parser, args)
    rows, measured = [], {}
    width = max(28, len(args.agent))
    if args.no_progress:  # rows print as they are measured under one header (no bars between them)
        print(score_header(width))
    for task in fitting:
        # Tasks with the same evaluation (2p-heuristic, 2p-selfplay) share one tournament.
        key = (task.game, task.rules, task.players, task.eval_opponents, args.games or task.eval_games, args.seed)
        if key not in measured:
            try:
                measured[key] = score(args.agent, task, args.games, args.seed, args.workers, not args.no_progress)
            except IllegalMove as error:  # found during play: the run failed, its arguments were fine
                parser.exit(1, f"sorry-bench: {error}; no score written for {task.id}\n")
        rows.append({**measured[key], "task": task.id, **provenance})
        print(score_line(rows[-1], width), flush=True)
        scored = {row["task"] for row in rows}
        kept = [row for row in earlier if row["task"] not in scored]
        paths = write_scores(kept + rows, out)  # after every task: an interrupted run keeps what it measured
    if not args.no_progress:  # the rows again as one table, after the progress bars
        print(format_scores(rows))
    for path in paths:
        print(f"wrote {path}")


def run_command(args, budget: int) -> str:
    """The sorry-bench command that makes this run, with every option that was given."""
    words = ["sorry-bench run", args.algorithm, args.task, f"--seed {args.seed}", f"--budget {budget}"]
    for name in ("curve_every", "curve_games", "final_games"):
        if getattr(args, name) is not None:
            words.append(f"--{name.replace('_', '-')} {getattr(args, name)}")
    return " ".join(words)


def cmd_run(parser, args) -> None:
    from .algorithms import check_algorithm, run_baseline

    try:
        task = get_task(args.task)
        algorithm = check_algorithm(args.algorithm, task)
    except ValueError as error:
        parser.error(str(error))
    budget = task.budget if args.budget is None else args.budget
    runs = check_out_dir(parser, args.runs_dir)
    run_dir = runs / task.name / algorithm.name / f"seed-{args.seed}"
    if (run_dir / "result.json").exists() or (run_dir / "curve.csv").exists():
        parser.error(f"{run_dir} already holds a run; remove it or pass another --runs-dir")
    try:
        result = run_baseline(
            algorithm,
            task,
            args.seed,
            budget,
            run_dir,
            curve_every=args.curve_every,
            curve_games=args.curve_games,
            final_games=args.final_games,
            command=run_command(args, budget),
        )
    except KeyboardInterrupt:
        parser.exit(130, f"\nsorry-bench: interrupted; the curve so far is in {run_dir}\n")
    print(format_scores([result["score"]]))
    print(
        f"{algorithm.name} on {task.id}, seed {args.seed}: {result['steps']:,} learner steps in "
        f"{result['train_seconds']:.0f} s of training; results in {run_dir}"
    )


def cmd_report(parser, args) -> None:
    from .results import build_report

    runs = pathlib.Path(args.runs_dir)
    if not runs.is_dir():
        parser.error(f"{runs} is not a directory of sorry-bench results (sorry-bench run writes them)")
    out = check_out_dir(parser, args.out or str(runs / "report"))
    try:
        paths = build_report(runs, out)
    except ValueError as error:
        parser.error(str(error))
    for path in paths:
        print(f"wrote {path}")


def at_least(low: int):
    """An argparse type: a whole number of at least `low` (its flag named in the message)."""

    def number(text: str) -> int:
        value = int(text)
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {value}")
        return value

    number.__name__ = "integer"  # argparse's word for text that is not one
    return number


def build_parser() -> argparse.ArgumentParser:
    from .algorithms import ALGORITHMS

    parser = argparse.ArgumentParser(
        prog="sorry-bench",
        description="Standard Sorry! tasks, agents scored on them, RL baselines trained from scratch.",
        epilog=__doc__.split("\n\n")[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="{list,score,run,report}")
    sub.add_parser("list", help="the tasks and their definitions").add_argument(
        "--json", action="store_true", help="the definitions as JSON"
    )
    p = sub.add_parser("score", help="score an agent on the tasks it fits")
    p.add_argument(
        "agent", help="an agent spec as sorry-eval's: a name, name:settings, a policy file, package.module:Name"
    )
    p.add_argument("--task", action="append", help=f"a task (repeatable; default: all that fit): {', '.join(TASKS)}")
    p.add_argument(
        "--games", type=at_least(1), help="games (default: the task's; another count is not the standard score)"
    )
    p.add_argument("--seed", type=at_least(0), help="seed (default: the task's; another is not the standard score)")
    p.add_argument("--workers", type=at_least(1), default=os.cpu_count(), help="processes (default: all cores)")
    p.add_argument(
        "--out", help=f"directory for scores.json and scores.csv (default: {DEFAULT_RUNS}/score/AGENT, read by report)"
    )
    p.add_argument("--no-progress", action="store_true")
    p = sub.add_parser("run", help="train a baseline from scratch on a task")
    p.add_argument("algorithm", help=f"one of {', '.join(ALGORITHMS)}")
    p.add_argument("task", help=f"one of {', '.join(TASKS)}")
    p.add_argument("--seed", type=at_least(0), required=True)
    p.add_argument(
        "--budget",
        type=at_least(1),
        help="learner steps (default: the task's budget); learners that collect rollouts stop at the first "
        "rollout that reaches it (ppo: 8,192 steps), and the record says the steps taken",
    )
    p.add_argument(
        "--curve-every", type=at_least(1), help="learner steps between in-run evaluations (default: the task's)"
    )
    p.add_argument("--curve-games", type=at_least(1), help="games per in-run evaluation (default: the task's)")
    p.add_argument(
        "--final-games", type=at_least(1), help="games of the final score (default: the task's; others: not standard)"
    )
    p.add_argument("--runs-dir", default=DEFAULT_RUNS, help="writes RUNS_DIR/TASK/ALGORITHM/seed-S/")
    p = sub.add_parser("report", help="rebuild the results table and learning curves from result files")
    p.add_argument("--runs-dir", default=DEFAULT_RUNS, help="where sorry-bench run wrote its results")
    p.add_argument("--out", help="directory for the table, CSV and PNGs (default: RUNS_DIR/report)")
    return parser


def main(argv: list[str] | None = None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "list":
        if args.json:
            json.dump({t.name: t.definition() for t in TASKS.values()}, sys.stdout, indent=1)
            print()
        else:
            print(format_tasks())
    elif args.command == "score":
        cmd_score(parser, args, argv)
    elif args.command == "run":
        cmd_run(parser, args)
    else:
        cmd_report(parser, args)


if __name__ == "__main__":
    main()
