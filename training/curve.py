"""The learning-curve PNG of a run: win rates over the run (learner steps, generations...)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; no display on a training machine
import matplotlib.pyplot as plt  # noqa: E402


def plot_win_rates(
    series: dict[str, list], path: str | Path, title: str, even: float | None, xlabel: str, lines=(), top: float = 1
) -> None:
    """One line per label of `series`, whose points are (x, win rate) or (x, win rate, low,
    high), the interval drawn as an error bar; a dashed line at the `even` win rate (None:
    none) and one grey line per (label, win rate, line style) of `lines` (e.g. sorry-bench's
    anchors); win rates from 0 to `top`. Labels are plain text, never TeX (``$...$``)."""
    with matplotlib.rc_context({"text.parse_math": False}):
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for label, points in series.items():
            if not points:
                continue
            rates = [p[1] for p in points]
            err = [[p[1] - p[2] for p in points], [p[3] - p[1] for p in points]] if len(points[0]) == 4 else None
            ax.errorbar([p[0] for p in points], rates, yerr=err, marker="o", capsize=3, label=label)
        if even is not None:
            lines = [(f"even ({even:.0%})", even, "--"), *lines]
        for label, rate, style in lines:
            ax.axhline(rate, color="grey", linestyle=style, label=label)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("win rate")
        ax.set_ylim(0, top)
        ax.set_title(title)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(path, dpi=100)
        plt.close(fig)


def plot_learning_curve(evaluations: list[dict], num_players: int, path: str | Path, title: str) -> None:
    """A trainer's in-run evaluations ({"timesteps", "win_rates": {opponent: rate}}) over learner steps."""
    opponents = sorted({name for e in evaluations for name in e["win_rates"]})
    series = {
        f"vs {name}": [(e["timesteps"], e["win_rates"][name]) for e in evaluations if name in e["win_rates"]]
        for name in opponents
    }
    plot_win_rates(series, path, title, 1 / num_players, "learner steps")
