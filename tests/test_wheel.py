"""The built wheel (issue 26): one import name in site-packages, the shipped policies and
configs inside it, and, installed into a fresh virtual environment, a shipped policy that
plays from any folder. And (issue 38) every way of importing the package, a checkout on the
path, the editable install and the wheel, finds sorry_env.agents and sorry_env.training in the
same tree as sorry_env, with nothing added to the package's path."""

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Repository folder -> the import name it installs as (sorry_env/agents, sorry_env/training and
# sorry_env/examples are links to the folders agents/, training/ and examples/).
INSTALLS_AS = {
    "sorry_env": "sorry_env",
    "agents": "sorry_env.agents",
    "training": "sorry_env.training",
    "examples": "sorry_env.examples",
}


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


# Where sorry_env, sorry_env.agents and sorry_env.training come from, the package's path, and the
# names a walk over the package finds (capped: before issue 38 the walk never ended).
WHERE = """
import itertools, json, pkgutil, sorry_env, sorry_env.agents, sorry_env.training
walk = pkgutil.walk_packages(sorry_env.__path__, "sorry_env.")
names = [m.name for m in itertools.islice(walk, 10000)]
files = [m.__file__ for m in (sorry_env, sorry_env.agents, sorry_env.training)]
print(json.dumps({"path": list(sorry_env.__path__), "files": files, "names": names}))
"""
# Repository folders that are not packages of the product.
# sorry_env.examples is a package (examples/ linked in, for sorry-bench's single-file PPO)
NOT_PACKAGES = ("sorry_env", "tests", "benchmarks", "experiments", "docs", "results", "configs")


def imported_tree(python, cwd, env) -> Path:
    """The folder `python` (run in `cwd` with `env`) imports sorry_env from, after checking that
    sorry_env.agents and .training come from inside it and that walking the package ends."""
    result = subprocess.run([python, "-c", WHERE], cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    found = json.loads(result.stdout.strip().splitlines()[-1])
    assert len(found["path"]) == 1, found["path"]  # nothing added to the package's path
    root = Path(found["path"][0])
    assert found["files"] == [str(root / part / "__init__.py") for part in ("", "agents", "training")]
    names = found["names"]
    assert len(names) < 10000, names[-5:]  # the walk ended by itself
    assert {"sorry_env.agents", "sorry_env.agents.arena", "sorry_env.training", "sorry_env.training.bench"} <= set(
        names
    )
    assert not [name for name in names if name.split(".")[1] in NOT_PACKAGES]
    return root


def test_a_checkout_on_the_path_imports_its_own_folders(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))  # as in a second work tree: PYTHONPATH=$PWD
    assert imported_tree(sys.executable, tmp_path, env) == ROOT / "sorry_env"


@pytest.mark.slow
def test_an_editable_install_imports_the_checkouts_folders(tmp_path):
    venv = tmp_path / "venv"
    # without a pip (and setuptools) of its own: the machine's build the checkout as CI's does
    make_venv = [sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)]
    subprocess.run(make_venv, check=True, timeout=300)
    python = venv / "bin" / "python"
    install = [
        "install",
        "-q",
        "--no-deps",
        "--no-index",
        "--no-build-isolation",
        "--ignore-installed",
        "-e",
        str(ROOT),
    ]
    subprocess.run([python, "-m", "pip", *install], check=True, capture_output=True, timeout=600)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    assert imported_tree(python, tmp_path, env) == ROOT / "sorry_env"


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
    assert imported_tree(python, elsewhere, env).is_relative_to(venv)
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
