"""sorry-bench: standard tasks, scoring, baselines from scratch and their report (docs/baselines.md)."""
