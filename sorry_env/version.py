"""The versions of sorry_env, in one place (the rule: docs/versioning.md).

- ``__version__``: the package release (pyproject.toml reads it from here).
- ``ENV_VERSION``: the N of the registered env id ``sorry_env/sorry-vN``. It goes up whenever
  the game's behaviour (the rules engine, rewards, truncation) or a layout (observation,
  actions, state array) changes, with a CHANGELOG entry; tests/test_golden_layout.py fails
  until it does.
- ``LAYOUT_VERSION``: the observation/action layout id that policy files record
  (agents.policy) and check at load. It is derived from ENV_VERSION, so the two cannot move
  apart: a file trained on another layout is refused instead of playing nonsense.
- Every other registered game declares its env version in its ``GameType`` (``version``,
  ``env_id``, ``env_name``: :mod:`sorry_env.games`), under the same rule.
"""

import shlex

__version__ = "0.2.0"

ENV_VERSION = 1
ENV_ID = f"sorry_env/sorry-v{ENV_VERSION}"  # pettingzoo.make("aec", ENV_ID)
GYM_ENV_ID = f"sorry_env/Sorry-v{ENV_VERSION}"  # gymnasium.make(GYM_ENV_ID): the single-agent view, same version
ENV_NAME = f"sorry_v{ENV_VERSION}"  # raw_env.metadata["name"]
LAYOUT_VERSION = ENV_NAME


def made_by(program: str, argv: list[str]) -> dict:
    """What a results file says of how it was made: the command as typed (`program` and its
    arguments, quoted for a shell) and this package's version (which fixes every game's env
    version), so a figure can be cited and re-run."""
    return {"command": shlex.join([program, *argv]), "sorry_env": __version__}
