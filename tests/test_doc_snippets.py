"""The Python snippets of the README and docs/*.md run as written, each as a script in its own
process from an empty temporary folder (never the repository root), as a reader pasting it
would run it. A snippet that is a fragment on purpose is listed in NOT_RUN with the reason;
one that shows an error names the error in EXPECTED_ERROR."""

import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
# docs/integrations.md is run by tests/test_integrations.py, which skips a library's snippet
# (with the reason) where that library is not installed.
PAGES = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").glob("*.md") if p.name != "integrations.md")]

# (page, index of the snippet on the page) -> why it is not run.
NOT_RUN = {
    ("hardening.md", 0): "converts the reader's own old run (runs/NAME/checkpoint.zip)",
    ("vector.md", 0): "the actions are left to the reader (actions = ...)",
    ("vector.md", 2): "steps with the first snippet's actions (left to the reader)",
    ("vector.md", 3): "trains for 100,000 steps",
}
# Names a fragment uses that the page defines in prose, supplied before it runs.
PRELUDE = {
    ("byo.md", 1): "import numpy as np\nmy_policy = lambda obs: int(np.flatnonzero(obs['action_mask'])[0])\n",
}
EXPECTED_ERROR = {("shipped.md", 0): "ValueError: no shipped policy for rules 'hasbro2003_fast'"}


def snippets():
    for page in PAGES:
        for k, match in enumerate(re.finditer(r"```python\n(.*?)```", page.read_text(), re.S)):
            key = (page.name, k)
            marks = [pytest.mark.skip(reason=NOT_RUN[key])] if key in NOT_RUN else []
            yield pytest.param(key, match.group(1), id=f"{page.name}-{k}", marks=marks)


def test_the_lists_name_snippets_that_exist():
    keys = {param.values[0] for param in snippets()}
    assert set(NOT_RUN) | set(PRELUDE) | set(EXPECTED_ERROR) <= keys


@pytest.mark.parametrize(("key", "code"), list(snippets()))
def test_snippet_runs_from_another_folder(key, code, tmp_path):
    script = tmp_path / "snippet.py"
    script.write_text(PRELUDE.get(key, "") + code)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    result = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    if key in EXPECTED_ERROR:
        assert result.returncode != 0 and EXPECTED_ERROR[key] in result.stderr, result.stderr[-2000:]
    else:
        assert result.returncode == 0, result.stderr[-3000:]
    if key == ("README.md", 0):  # the PettingZoo loop says who won
        assert re.fullmatch(r"player_\d won\n", result.stdout), result.stdout


def test_the_docs_give_the_input_sizes_the_code_has():
    """Every "N floats" in the docs is the observation's size or the trained policies' input size."""
    from sorry_env.board.observation import OBS_SIZE
    from sorry_env.board.policy_input import INPUT_SIZE

    root = pathlib.Path(__file__).parents[1]
    for page in [root / "README.md", *sorted((root / "docs").glob("*.md"))]:
        for size in re.findall(r"\b(\d[\d,]*)[- ]floats?\b", page.read_text()):
            assert int(size.replace(",", "")) in (OBS_SIZE, INPUT_SIZE), f"{page.name}: {size} floats"
