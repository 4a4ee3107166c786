"""Keep numba's on-disk caches in step with the source they were compiled from.

numba's ``cache=True`` checks only the timestamp of the file that defines a function, not
of the functions it calls: code compiled against an older engine (other layouts, other
constants) would be loaded again and could crash.

The rule, one for every package: a package whose modules compile with ``cache=True`` calls,
in its ``__init__.py`` before importing them, ::

    clear_stale("<package>", "<every first-party package it compiles against>", ...)

(``sorry_env``: none; ``sorry_env.agents``: ``sorry_env``; ``sorry_env.training``: ``sorry_env``,
``sorry_env.agents``).
That deletes the package's cached machine code whenever the ``.py`` sources of the package or
of any of those dependencies changed since it was compiled. Code outside a package (the
benchmark scripts, the tests) is not cached. ``tests/test_numba_cache.py`` checks that every
caching package calls this with all it imports.

Compiling is visible: the first time in a process that numba compiles (rather than loads from
the disk cache) a function of a package that called :func:`clear_stale`, one line on stderr
says so and how long it usually takes (:data:`COMPILE_NOTICE`). ``python -m sorry_env.training.warm``
fills every cache the README's main job and the tests use, in one visible step.
"""

from __future__ import annotations

import hashlib
import importlib.util
import pathlib
import sys

import numba.core.event as _numba_event

_STAMP = "numba-sources.sha1"

# Package name -> names of the packages it was declared to compile against (filled by
# clear_stale; read by the test that checks the rule is followed).
WATCHED: dict[str, tuple[str, ...]] = {}


def _directory(package: str | pathlib.Path) -> pathlib.Path:
    """A package's source directory, from an importable name or a path."""
    if isinstance(package, pathlib.Path):
        return package
    spec = importlib.util.find_spec(package)  # a top-level name: found without importing it
    if spec is None or not spec.submodule_search_locations:
        raise ValueError(f"clear_stale: {package!r} is not an importable package")
    return pathlib.Path(next(iter(spec.submodule_search_locations)))


def clear_stale(package: str | pathlib.Path, *depends_on: str | pathlib.Path) -> None:
    """Delete `package`'s numba cache files if the .py sources of `package` or of the
    `depends_on` packages changed since they were compiled. Each is an importable package
    name (``"sorry_env"``) or a directory."""
    package_dir = _directory(package)
    dirs = [_directory(d) for d in depends_on]
    WATCHED[package_dir.name] = tuple(d.name for d in dirs)
    digest = hashlib.sha1()
    for directory in (package_dir, *dirs):
        for path in sorted(directory.glob("*.py")):
            digest.update(path.name.encode())
            digest.update(path.read_bytes())
    cache = package_dir / "__pycache__"
    stamp = cache / _STAMP
    try:
        if stamp.read_text() == digest.hexdigest():
            return
    except OSError:
        pass
    try:
        for stale in list(cache.glob("*.nbi")) + list(cache.glob("*.nbc")):
            stale.unlink(missing_ok=True)
        cache.mkdir(exist_ok=True)
        stamp.write_text(digest.hexdigest())
    except OSError:
        pass  # a read-only install: numba itself falls back to not caching


# What a cold cache costs, measured with benchmarks/bench_cold_compile.py (docs/speed.md).
COMPILE_NOTICE = (
    "sorry_env: compiling machine code into numba's disk cache (first run after an install or an "
    "edit; about 10 CPU-seconds, up to a few minutes on a busy machine; later runs load it at once)"
)


class _CompileNotice(_numba_event.Listener):
    """Prints COMPILE_NOTICE once per process, when a first-party function is really compiled:
    numba fires "numba:compile" only on a cache miss, never when it loads cached code."""

    def __init__(self) -> None:
        self.shown = False

    def on_start(self, event: _numba_event.Event) -> None:
        if self.shown:
            return
        dispatcher = (event.data or {}).get("dispatcher")
        module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
        if module.split(".")[0] in WATCHED:
            self.shown = True
            print(COMPILE_NOTICE, file=sys.stderr, flush=True)

    def on_end(self, event: _numba_event.Event) -> None:
        pass


NOTICE = _CompileNotice()
_numba_event.register("numba:compile", NOTICE)
