"""Read a safetensors file's header without trusting it: sizes, names, dtypes and shapes are
checked before any tensor is allocated.

A safetensors file is an 8-byte little-endian header length, a JSON header (each tensor's
dtype, shape and byte range, plus ``__metadata__``: text keys and values), then the raw
tensor bytes. :func:`read_header` parses the header itself, refusing a header larger than
``max_header_bytes``, tensors whose byte range does not fit their shape or the file, and
anything that is not the format. Loading then needs no more memory than the file holds,
and callers compare the shapes with what they expect before building anything from them.
"""

from __future__ import annotations

import json
import math
import os
import struct

import numpy as np
import torch
from safetensors.torch import save_file

from sorry_env import files
from sorry_env.checks import excerpt, is_integer

MAX_HEADER_BYTES = 16 * 1024 * 1024
MAX_DIMS = 8  # dimensions of one tensor: the networks here have at most 2
# The largest file read as a policy or checkpoint: a 50M-parameter network in float32 with
# Adam's two moments is 600 MB; anything larger (a 2 GB sparse file, /dev/zero) is refused
# before it is opened.
MAX_FILE_BYTES = 1024 * 1024 * 1024
# safetensors' dtype names and the torch dtypes they are (their item sizes size a tensor's bytes).
DTYPES = {
    "F64": torch.float64,
    "F32": torch.float32,
    "F16": torch.float16,
    "BF16": torch.bfloat16,
    "I64": torch.int64,
    "I32": torch.int32,
    "I16": torch.int16,
    "I8": torch.int8,
    "U8": torch.uint8,
    "U16": torch.uint16,
    "U32": torch.uint32,
    "U64": torch.uint64,
    "BOOL": torch.bool,
}
ITEM_BYTES = {name: dtype.itemsize for name, dtype in DTYPES.items()}


def read_header(path, max_header_bytes: int = MAX_HEADER_BYTES, what: str = "safetensors file") -> tuple[dict, dict]:
    """(metadata, {tensor name: (dtype, shape)}) of safetensors file `path`, or ValueError
    naming what is wrong (`what` names the kind of file expected). Reads only the header."""
    # A regular file of bounded size, checked before it is opened (a FIFO would block, a device
    # never end). The messages below say what is wrong without numbers read from the file:
    # the path may name any file on the disk, whose bytes are not ours to reveal.
    size = files.check_regular_file(path, MAX_FILE_BYTES, what)
    try:
        with open(path, "rb") as f:
            head = f.read(8)
            if len(head) < 8:
                raise ValueError(f"{path} is not a {what}: too short for a header")
            (length,) = struct.unpack("<Q", head)
            if length > max_header_bytes or length > size - 8:
                raise ValueError(
                    f"{path} is not a {what} (or is damaged): its first 8 bytes are not a header length "
                    f"that fits the file and the {max_header_bytes:,}-byte limit"
                )
            raw = f.read(length)
    except OSError as error:
        raise ValueError(f"{what} {path} cannot be read ({type(error).__name__})") from None
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise ValueError(f"{path} is not a {what}: its header is not JSON") from None
    if not isinstance(header, dict):
        raise ValueError(f"{path} is not a {what}: its header is not a JSON object")  # noqa: TRY004 (file content)
    metadata = header.pop("__metadata__", None) or {}
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        raise ValueError(f"{path}: the header's __metadata__ must map text to text")
    data_bytes = size - 8 - length
    tensors = {}
    for name, entry in header.items():
        tensors[name] = _check_entry(path, name, entry, data_bytes)
    return metadata, tensors


def _is_int(x) -> bool:
    return is_integer(x) and x >= 0


def _check_entry(path, name, entry, data_bytes):
    if (
        not isinstance(entry, dict)
        or entry.get("dtype") not in ITEM_BYTES
        or not isinstance(entry.get("shape"), list)
        or len(entry["shape"]) > MAX_DIMS  # before the product: a shape of millions of 2s is a huge number
        or not all(_is_int(d) for d in entry["shape"])
        or not isinstance(entry.get("data_offsets"), list)
        or len(entry["data_offsets"]) != 2
        or not all(_is_int(o) for o in entry["data_offsets"])
    ):
        raise ValueError(f"{path}: tensor {excerpt(name)} has a malformed header entry {excerpt(entry)}")
    begin, end = entry["data_offsets"]
    need = math.prod(entry["shape"]) * ITEM_BYTES[entry["dtype"]]
    if end < begin or end - begin != need or end > data_bytes:
        raise ValueError(
            f"{path}: tensor {excerpt(name)} ({entry['dtype']} {excerpt(entry['shape'])}) needs {need:,} bytes "
            f"but its byte range is {begin:,}..{end:,} of {data_bytes:,}"
        )
    return entry["dtype"], tuple(entry["shape"])


def check_expected(path, found: dict, expected: dict, what: str) -> None:
    """ValueError unless the header's tensors (`found`: name -> (dtype, shape)) are exactly
    `expected` (name -> (dtype, shape)): the same names, dtypes and shapes."""
    missing = sorted(set(expected) - set(found))
    extra = sorted(set(found) - set(expected))
    if missing or extra:
        raise ValueError(
            f"{path}: the tensors do not match {what}: missing {excerpt(missing, 200)}, "
            f"unexpected {excerpt(extra, 200)}"
        )
    for name, (dtype, shape) in expected.items():
        if found[name] != (dtype, tuple(shape)):
            raise ValueError(
                f"{path}: tensor {name} is {found[name][0]} {list(found[name][1])}, {what} needs {dtype} {list(shape)}"
            )


def load_checked(path, names) -> dict[str, torch.Tensor]:
    """The named tensors of `path` (whose header was checked), refusing any that is not finite."""
    from safetensors import safe_open

    tensors = {}
    try:
        with safe_open(str(path), framework="pt") as f:
            for name in names:
                tensors[name] = f.get_tensor(name)
    except Exception as exc:  # noqa: BLE001 (safetensors raises its own types for a file changed under us)
        raise ValueError(f"{path}: cannot read its tensors ({exc})") from None
    for name, tensor in tensors.items():
        if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
            bad = int((~torch.isfinite(tensor)).sum())
            raise ValueError(
                f"{path}: tensor {name} holds {bad} non-finite values (NaN or infinite): the file is broken"
            )
    return tensors


TORCH_DTYPES = {dtype: name for name, dtype in DTYPES.items()}


def spec(tensor: torch.Tensor | np.ndarray) -> tuple[str, tuple]:
    """(safetensors dtype name, shape) of a tensor, as :func:`read_header` reports them."""
    return TORCH_DTYPES[torch.as_tensor(tensor).dtype], tuple(tensor.shape)


def save_atomic(path, tensors: dict, key: str, meta: dict) -> None:
    """Write `tensors` as a safetensors file whose metadata holds `meta` as JSON under `key`.
    The file is written beside `path` and renamed over it, so an interrupted write never
    leaves half a file where a good one was."""
    tmp = f"{path}.tmp"
    try:
        save_file(tensors, tmp, metadata={key: json.dumps(meta)})
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
