"""Keep numba's on-disk caches in step with the source they were compiled from.

numba's ``cache=True`` checks only the timestamp of the file that defines a function, not
of the functions it calls: code compiled against an older engine (other layouts, other
constants) would be loaded again and could crash. Every package that compiles code calling
the engine clears its own cached machine code when any source it depends on has changed.
"""
import hashlib
import pathlib

_STAMP = "numba-sources.sha1"


def clear_stale(package_dir, *depends_on):
    """Delete `package_dir`'s numba cache files if the .py sources of `package_dir` or of
    the `depends_on` directories changed since they were compiled."""
    package_dir = pathlib.Path(package_dir)
    digest = hashlib.sha1()
    for directory in (package_dir, *map(pathlib.Path, depends_on)):
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
