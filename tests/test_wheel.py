"""The built wheel (issue 26): one import name in site-packages, the shipped policies and
configs inside it, and, installed into a fresh virtual environment, a shipped policy that
plays from any folder."""

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Repository folder -> the import name it installs as (pyproject.toml's package-dir).
INSTALLS_AS = {"sorry_env": "sorry_env", "agents": "sorry_env.agents", "training": "sorry_env.training"}


# What the build reads: the packages' folders, the shipped files, and the metadata's files.
BUILD_INPUTS = ["pyproject.toml", "README.md", "LICENSE", "sorry_env", "agents", "training", "checkpoints", "configs"]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel, built from a copy of the tree: setuptools writes build/ and *.egg-info beside
    the sources it builds, and a test run must leave the working tree as it found it."""
    out = tmp_path_factory.mktemp("wheel")
    source = tmp_path_factory.mktemp("source")
    for name in BUILD_INPUTS:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(ROOT / name, source / name)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(source)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    (built,) = out.glob("sorry_env-*.whl")
    return built


def test_the_wheel_installs_one_import_name_with_its_data(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    top = {name.split("/")[0] for name in names}
    assert {t for t in top if not t.endswith(".dist-info")} == {"sorry_env"}  # no "agents", no "training"
    # every package folder of the repository is in the wheel (pyproject's list is complete)
    for folder, dotted in INSTALLS_AS.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            if "__pycache__" in init.parts:
                continue
            inside = "/".join((*dotted.split("."), *init.parent.relative_to(ROOT / folder).parts, "__init__.py"))
            missing = f"{init.relative_to(ROOT)} is missing from the wheel: list its package in pyproject.toml"
            assert inside in names, missing
    shipped = {p.name for p in (ROOT / "checkpoints").glob("*.safetensors")}
    assert shipped and {n.split("/")[-1] for n in names if n.startswith("sorry_env/checkpoints/")} >= shipped
    configs = {p.name for p in (ROOT / "configs").glob("*.yaml")}
    assert {n.split("/")[-1] for n in names if n.startswith("sorry_env/configs/")} >= configs
    assert any(n.endswith(".dist-info/licenses/LICENSE") or n.endswith(".dist-info/LICENSE") for n in names)
    assert any(n.startswith("sorry_env/agents/play/serve/static/") for n in names)


@pytest.mark.slow
def test_the_installed_wheel_plays_a_shipped_policy_from_any_folder(wheel, tmp_path):
    """A venv that sees the machine's packages (numpy, torch, ...) but gets sorry_env only
    from the wheel; run from an empty folder, so nothing of the checkout is on the path."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    # --ignore-installed: the machine's own editable install of sorry-env must not satisfy it
    install = ["install", "-q", "--no-deps", "--no-index", "--ignore-installed", str(wheel)]
    subprocess.run([python, "-m", "pip", *install], check=True, timeout=600)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # nothing of a checkout
    code = (
        "import sorry_env, sorry_env.agents as agents\n"
        "from sorry_env.agents import catalog\n"
        "assert 'site-packages' in sorry_env.__file__, sorry_env.__file__\n"
        "assert all(row['present'] for row in catalog.catalog_rows()), catalog.catalog_rows()\n"
        "from sorry_env.training.config import load_config\n"
        "assert load_config('quick')['name'] == 'quick'\n"
        "env = sorry_env.env(num_players=2)\n"
        "env.reset(seed=0)\n"
        "policy = agents.as_agent('hasbro2003-2p')\n"
        "for _ in range(40):\n"
        "    env.step(agents.action_for(env, policy))\n"
        "    if not env.agents: break\n"
        "print('played')\n"
    )
    result = subprocess.run([python, "-c", code], cwd=elsewhere, env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0 and "played" in result.stdout, result.stderr[-3000:]
    listing = subprocess.run(
        [venv / "bin" / "sorry-play", "--list"], cwd=elsewhere, env=env, capture_output=True, text=True, timeout=600
    )
    assert listing.returncode == 0 and "hasbro2003-2p" in listing.stdout and "missing" not in listing.stdout.lower()


def test_the_wheel_metadata_names_authors_licence_and_project_links(wheel):
    archive = zipfile.ZipFile(wheel)
    (metadata_name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
    headers = archive.read(metadata_name).decode().split("\n\n", 1)[0].splitlines()
    assert any(h.startswith("Author:") and h.split(":", 1)[1].strip() for h in headers), headers
    assert "License-Expression: MIT" in headers
    links = dict(h.split(":", 1)[1].strip().split(", ", 1) for h in headers if h.startswith("Project-URL:"))
    assert {"Homepage", "Documentation", "Changelog"} <= set(links), links
    for label, target in links.items():  # no public address yet: each link is a file of the tree
        assert (ROOT / target).is_file(), f"Project-URL {label} names {target}, which is not in the tree"
