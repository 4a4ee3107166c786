"""The optional extras of the install, and the one line that names the missing one.

The environment alone (``pip install sorry-env`` / ``pip install -e .``) has numpy, numba,
Gymnasium, PettingZoo and Pillow; training, evaluation tables, the browser game, Ray and
OpenSpiel come with extras (pyproject.toml ``[project.optional-dependencies]``). A command
that reaches for a package it does not have ends with one line that names the extra to add
(:func:`run_command`, the console scripts' launcher; :func:`guard_module_run` for a
``python -m sorry_env...`` run), exit code 2, no traceback; library code raises
ModuleNotFoundError with the same words (:func:`missing_extra_error`).
"""

from __future__ import annotations

import importlib
import sys

# The top-level modules of the extras' packages and the extra to name when one is missing.
# tqdm and matplotlib come with train and eval alike: eval is the smaller install.
EXTRA_OF = {
    "torch": "train",
    "safetensors": "train",
    "stable_baselines3": "train",
    "sb3_contrib": "train",
    "tensorboard": "train",
    "yaml": "train",
    "openskill": "eval",
    "tqdm": "eval",
    "matplotlib": "eval",
    "starlette": "serve",
    "uvicorn": "serve",
    "ray": "rllib",
    "pygame": "human",
    "pyspiel": "openspiel",
}


def _package(missing: ModuleNotFoundError) -> str:
    """The top-level name of the module `missing` could not import (matplotlib for matplotlib.figure)."""
    return (missing.name or "").split(".")[0]


def extra_for(missing: ModuleNotFoundError) -> str | None:
    """The extra that provides the module `missing` could not import, or None (not an extra's)."""
    return EXTRA_OF.get(_package(missing))


def needs_extra_line(what: str, missing: ModuleNotFoundError) -> str:
    """'WHAT: needs the X extra (M is not installed): pip install ...' for an extra's module."""
    extra = extra_for(missing)
    return (
        f"{what}: needs the {extra} extra ({_package(missing)} is not installed): "
        f'pip install "sorry-env[{extra}]" (in a clone: pip install -e ".[{extra}]")'
    )


def missing_extra_error(what: str, missing: ModuleNotFoundError) -> ModuleNotFoundError:
    """A ModuleNotFoundError for `missing` whose message names the extra (raise it from `missing`)."""
    return ModuleNotFoundError(needs_extra_line(what, missing), name=missing.name)


def run_command(command: str, target: str) -> int | None:
    """Import `target` ("module:function") and call it; a module of an extra missing on the way
    (at import or while running) ends the command with :func:`needs_extra_line` on stderr and
    exit code 2. Any other error propagates."""
    module, _, function = target.partition(":")
    try:
        return getattr(importlib.import_module(module), function)()
    except ModuleNotFoundError as missing:
        if extra_for(missing) is None:
            raise
        print(needs_extra_line(command, missing), file=sys.stderr)
        return 2


# Python's options that take the next argument as their value (python -X importtime -m ...).
_OPTIONS_WITH_VALUE = ("-X", "-W", "--check-hash-based-pycs")


def module_run(argv: list[str]) -> str | None:
    """The module of a ``python [options] -m MODULE ...`` command line (`argv` as
    ``sys.orig_argv`` gives it), or None for a script, ``-c`` or an interactive run."""
    k = 1
    while k < len(argv):
        arg = argv[k]
        if arg == "-m":
            return argv[k + 1] if k + 1 < len(argv) else None
        if arg in _OPTIONS_WITH_VALUE:
            k += 2
            continue
        if not arg.startswith("-") or arg in ("-c", "-", "--"):
            return None  # a script, a command or stdin: what follows are its arguments
        k += 1
    return None


def guard_module_run() -> None:
    """In a ``python -m sorry_env...`` run, make a missing extra end it as :func:`run_command`
    ends a console script: one line naming the extra on stderr, exit code 2. The module's own
    imports run before its ``if __name__ == "__main__":`` block could catch anything, so this
    is an exception hook, installed when sorry_env is imported on the way to that module (and
    in no other process): it handles only an uncaught ModuleNotFoundError of an extra's
    package and leaves every other error to the previous hook."""
    module = module_run(list(getattr(sys, "orig_argv", [])))
    if module is None or module.split(".")[0] != __name__.split(".")[0]:
        return
    previous = sys.excepthook

    def hook(kind, error, traceback) -> None:
        if isinstance(error, ModuleNotFoundError) and extra_for(error) is not None:
            print(needs_extra_line(f"python -m {module}", error), file=sys.stderr)
            raise SystemExit(2)  # from an exception hook: the interpreter exits with this code
        previous(kind, error, traceback)

    sys.excepthook = hook
