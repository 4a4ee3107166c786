"""Bounded reads of files that come from outside: every file a user names (a replay, a policy
file, a config, a run directory's JSON) is checked to be a regular file no larger than a cap
*before* any of it is read, so ``/dev/zero``, a FIFO or a 2 GB sparse file named as one is
refused at once instead of filling memory or blocking forever.

Error messages name the file and what is wrong with it, never its bytes: a path may name any
file on the disk (``/etc/shadow``), and its content is not ours to echo.
"""

from __future__ import annotations

import os
import stat
import tempfile

MB = 1024 * 1024


def _size_text(n: int) -> str:
    return f"{n / MB:,.1f} MB" if n >= MB else f"{n:,} bytes"


def check_regular_file(path, max_bytes: int, what: str) -> int:
    """The size of `path` after checking that it is a regular file of at most `max_bytes`
    (nothing is read); ValueError naming the problem otherwise. `what` names the kind of
    file expected ("replay", "policy file")."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise ValueError(f"{what} {path} does not exist") from None
    except NotADirectoryError:
        raise ValueError(f"{what} {path} does not exist (a part of the path is not a directory)") from None
    except PermissionError:
        raise ValueError(f"{what} {path} cannot be read: permission denied") from None
    except (OSError, ValueError) as error:  # a name too long, a NUL byte in it, ...
        raise ValueError(f"{what} {str(path)[:200]!r} cannot be opened ({type(error).__name__})") from None
    if stat.S_ISDIR(info.st_mode):
        raise ValueError(f"{what} {path} is a directory, not a file")
    if not stat.S_ISREG(info.st_mode):
        raise ValueError(f"{what} {path} is not a regular file (a device, FIFO or socket): refused")
    if info.st_size > max_bytes:
        raise ValueError(
            f"{what} {path} is {_size_text(info.st_size)}, more than the {_size_text(max_bytes)} such a file may hold"
        )
    return info.st_size


def read_bytes(path, max_bytes: int, what: str) -> bytes:
    """The bytes of regular file `path`, at most `max_bytes` of them (see
    :func:`check_regular_file`). The file is opened without blocking and checked again once
    open, so a file swapped for a FIFO between the check and the open is refused too."""
    check_regular_file(path, max_bytes, what)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except PermissionError:
        raise ValueError(f"{what} {path} cannot be read: permission denied") from None
    except OSError as error:
        raise ValueError(f"{what} {path} cannot be opened ({type(error).__name__})") from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError(f"{what} {path} is not a regular file (a device, FIFO or socket): refused")
        try:
            # At most the cap even where the size said 0: /proc's files look regular and empty.
            data = f.read(max_bytes + 1)
        except OSError as error:  # /proc/self/mem, a file on a failing disk
            raise ValueError(f"{what} {path} cannot be read ({type(error).__name__})") from None
    if len(data) > max_bytes:  # it grew since the check
        raise ValueError(f"{what} {path} is more than the {_size_text(max_bytes)} such a file may hold")
    return data


def read_text(path, max_bytes: int, what: str) -> str:
    """The UTF-8 text of regular file `path` (see :func:`read_bytes`); a file that is not
    UTF-8 is a ValueError that does not quote it."""
    data = read_bytes(path, max_bytes, what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"{what} {path} is not UTF-8 text (byte {error.start:,} of {len(data):,})") from None


def read_json(path, max_bytes: int, what: str):
    """The JSON value of regular file `path` (see :func:`read_bytes`): a file that is not JSON,
    nests too deeply or holds a too-long integer is a ValueError that does not quote it."""
    import json

    text = read_text(path, max_bytes, what)
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"{what} {path} is not JSON (line {error.lineno}, column {error.colno})") from None
    except (ValueError, RecursionError) as error:  # nesting too deep, an integer of thousands of digits
        raise ValueError(f"{what} {path} is not usable JSON ({type(error).__name__})") from None


def make_writable_dir(path) -> None:
    """Make directory `path` (and its parents) if needed and check a file can be written in
    it, before any work whose output would go there; OSError's reason as a ValueError."""
    try:
        os.makedirs(path, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as error:
        raise ValueError(f"cannot write in {path} ({error.strerror or error})") from None


def write_text_atomic(path, text: str) -> None:
    """Replace file `path` with `text` whole (through a temporary file beside it): a reader,
    or a resume after a kill, sees the old file or the new one, never half of one."""
    tmp = f"{path}.tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)
