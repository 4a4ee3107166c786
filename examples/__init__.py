"""The example scripts, installed as ``sorry_env.examples`` so that sorry-bench can run the
single-file PPO (``selfplay_ppo.py``) itself; each script runs on its own (``python FILE``)."""
