"""Self-play training and evaluation for sorry_env (see :mod:`training.evaluate`)."""
