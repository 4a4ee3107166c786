"""Untrusted policy files: every check runs on the header before anything is allocated, and a
broken file is a ValueError naming the problem, never a traceback or a silent bad player."""

import json
import struct
import subprocess
import sys

import pytest
import torch
from safetensors.torch import load_file, save_file

import sorry_env.agents.policy as policy_module
from sorry_env.agents.policy import Actor, PolicyAgent, load_policy, save_policy


def write_policy(path, hidden=(32,), kind="afterstate"):
    torch.manual_seed(0)
    actor = Actor(kind, list(hidden), "relu", "hasbro2003")
    save_policy(
        path,
        actor,
        rules="hasbro2003",
        num_players=2,
        network={"kind": kind, "hidden": list(hidden), "activation": "relu"},
        name="test",
    )
    return path


def parts(path):
    """(tensors, metadata dict) of a policy file."""
    from sorry_env.agents.tensor_file import read_header

    meta, _ = read_header(path)
    return load_file(str(path)), json.loads(meta["sorry_policy"])


def rewrite(path, out, tensors=None, meta=None, raw_meta=None):
    old_tensors, old_meta = parts(path)
    tensors = old_tensors if tensors is None else tensors
    text = raw_meta if raw_meta is not None else json.dumps(old_meta if meta is None else meta)
    save_file(tensors, str(out), metadata={"sorry_policy": text})
    return out


def test_metadata_cannot_make_the_loader_build_a_huge_network(tmp_path, monkeypatch):
    """A 20 kB file claiming a 100,000-wide network is refused before any network is built."""
    path = write_policy(tmp_path / "p.safetensors")
    _, meta = parts(path)
    meta["network"]["hidden"] = [100_000, 100_000]
    bad = rewrite(path, tmp_path / "huge.safetensors", meta=meta)

    def no_build(*args, **kwargs):
        raise AssertionError("the loader built a network before checking the file")

    monkeypatch.setattr(policy_module, "Actor", no_build)
    with pytest.raises(ValueError, match="layers of 1..16,384 units"):  # each width is capped (sorry_env.checks)
        load_policy(bad)
    meta["network"]["hidden"] = [16_384] * 3  # each width allowed, too many parameters together
    bad = rewrite(path, tmp_path / "wide.safetensors", meta=meta)
    with pytest.raises(ValueError, match="parameters"):
        load_policy(bad)
    meta["network"]["hidden"] = [64]  # the right size, but not what the tensors hold
    with pytest.raises(ValueError, match=r"net.layers.0.weight is F32 \[32, 1184\], .*needs F32 \[64, 1184\]"):
        load_policy(rewrite(path, tmp_path / "other.safetensors", meta=meta))


def test_a_header_claiming_more_bytes_than_the_file_is_refused(tmp_path):
    path = tmp_path / "lie.safetensors"
    header = {
        "net.layers.0.weight": {"dtype": "F32", "shape": [100_000, 100_000], "data_offsets": [0, 4 * 10**10]},
        "__metadata__": {"sorry_policy": "{}"},
    }
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + b"\0" * 64)
    with pytest.raises(ValueError, match="needs 40,000,000,000 bytes"):
        load_policy(path)
    path.write_bytes(struct.pack("<Q", 2**60) + b"{}")
    with pytest.raises(ValueError, match="not a header length"):
        load_policy(path)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_non_finite_weights_are_refused_with_the_tensor_name(tmp_path, value):
    path = write_policy(tmp_path / "p.safetensors")
    tensors, _ = parts(path)
    tensors["net.layers.1.weight"][0, 3] = value
    with pytest.raises(ValueError, match="net.layers.1.weight holds 1 non-finite"):
        PolicyAgent(rewrite(path, tmp_path / "bad.safetensors", tensors=tensors))


def _meta(**changes):
    def change(meta):
        for dotted, value in changes.items():
            *keys, last = dotted.split(".")
            target = meta
            for key in keys:
                target = target[key]
            if value is KeyError:
                del target[last]
            else:
                target[last] = value
        return meta

    return change


BAD_METADATA = {
    "rules not an object": _meta(rules=3),
    "unknown rules field": _meta(**{"rules.colour": "red"}),
    "rules pack text": _meta(**{"rules.pack": "abc"}),
    "rules missing": _meta(rules=KeyError),
    "network missing": _meta(network=KeyError),
    "network a list": _meta(network=[1]),
    "hidden text": _meta(**{"network.hidden": "abc"}),
    "hidden negative": _meta(**{"network.hidden": [-3]}),
    "hidden bool": _meta(**{"network.hidden": [True]}),
    "hidden float": _meta(**{"network.hidden": [32.0]}),
    "hidden nested": _meta(**{"network.hidden": [[32]]}),
    "activation unknown": _meta(**{"network.activation": "gelu"}),
    "kind unknown": _meta(**{"network.kind": "cnn"}),
    "num_players text": _meta(num_players="two"),
    "num_players 7": _meta(num_players=7),
    "num_players missing": _meta(num_players=KeyError),
    "layout missing": _meta(layout=KeyError),
    "metadata a list": lambda meta: [meta],
    "version missing": _meta(format_version=KeyError),
}


@pytest.mark.parametrize("name", sorted(BAD_METADATA))
def test_bad_metadata_is_a_value_error(tmp_path, name):
    path = write_policy(tmp_path / "p.safetensors")
    _, meta = parts(path)
    bad = rewrite(path, tmp_path / "bad.safetensors", meta=BAD_METADATA[name](meta))
    with pytest.raises(ValueError):
        PolicyAgent(bad)


@pytest.mark.parametrize(
    "raw",
    ["{not json", "[" * 100_000 + "]" * 100_000, '"text"', "x" * 2_000_000],
    ids=["broken", "deep", "text", "long"],
)
def test_unreadable_metadata_is_a_short_value_error(tmp_path, raw):
    path = write_policy(tmp_path / "p.safetensors")
    with pytest.raises(ValueError) as error:
        PolicyAgent(rewrite(path, tmp_path / "bad.safetensors", raw_meta=raw))
    assert len(str(error.value)) < 400


def test_wrong_dtypes_and_missing_or_extra_tensors_are_refused(tmp_path):
    path = write_policy(tmp_path / "p.safetensors")
    tensors, _ = parts(path)
    cases = {
        "f64": dict(tensors, **{"net.layers.0.bias": tensors["net.layers.0.bias"].double()}),
        "missing": {k: v for k, v in tensors.items() if k != "net.layers.1.bias"},
        "extra": dict(tensors, extra=torch.zeros(3)),
    }
    for name, bad in cases.items():
        with pytest.raises(ValueError, match="net.layers.0.bias is F64|missing|unexpected"):
            PolicyAgent(rewrite(path, tmp_path / f"{name}.safetensors", tensors=bad))
    (tmp_path / "cut.safetensors").write_bytes(path.read_bytes()[:-100])
    with pytest.raises(ValueError, match="byte range"):
        PolicyAgent(tmp_path / "cut.safetensors")


def test_bad_policy_files_get_a_message_from_the_commands(tmp_path):
    path = write_policy(tmp_path / "p.safetensors")
    tensors, _ = parts(path)
    tensors["net.layers.0.weight"][0, 0] = float("nan")
    bad = rewrite(path, tmp_path / "nan.safetensors", tensors=tensors)
    for command in (
        ["sorry_env.agents.arena.cli", bad, "random", "--games", "2", "--workers", "1", "--out", tmp_path / "o"],
        ["sorry_env.agents.play", "--opponents", bad],
    ):
        result = subprocess.run(
            [sys.executable, "-m", *map(str, command)],
            capture_output=True,
            text=True,
            check=False,
            input="q\n",
            timeout=300,
        )
        assert result.returncode == 2 and "non-finite" in result.stderr and "Traceback" not in result.stderr, (
            result.stderr
        )
