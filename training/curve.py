"""The learning-curve PNG of a run: evaluation win rate against each opponent over steps."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; no display on a training machine
import matplotlib.pyplot as plt  # noqa: E402


def plot_learning_curve(evaluations: list[dict], num_players: int, path: str | Path, title: str) -> None:
    fig, ax = plt.subplots(figsize=(7, 4.5))
    opponents = sorted({name for e in evaluations for name in e["win_rates"]})
    for name in opponents:
        points = [(e["timesteps"], e["win_rates"][name]) for e in evaluations if name in e["win_rates"]]
        ax.plot([t for t, _ in points], [w for _, w in points], marker="o", label=f"vs {name}")
    ax.axhline(1 / num_players, color="grey", linestyle="--", label=f"even ({1 / num_players:.0%})")
    ax.set_xlabel("learner steps")
    ax.set_ylabel("win rate")
    ax.set_ylim(0, 1)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
