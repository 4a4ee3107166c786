"""CI (.ci/run) runs the README's two commands as written: the first one's install part, then
the test command whole, in that order, so a new user's fresh machine and CI agree (issue 36)."""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent


def readme_commands() -> list[list[str]]:
    """The README's bash blocks before "## The environment", each as its `&&`-joined parts."""
    text = (ROOT / "README.md").read_text()
    quick_start = text[: text.index("## The environment")]
    return [block.strip().split(" && ") for block in re.findall(r"```bash\n(.*?)```", quick_start, re.S)]


def ci_lines() -> list[str]:
    """.ci/run's commands, without comments, `$SUDO ` (root or not) or trailing comments."""
    lines = []
    for line in (ROOT / ".ci" / "run").read_text().splitlines():
        line = line.split("  #")[0].strip()
        if line and not line.startswith("#"):
            lines.append(line.removeprefix("$SUDO "))
    return lines


def test_ci_runs_the_readmes_install_and_test_commands_in_order():
    first, tests = readme_commands()
    install = first[: first.index("rm -rf runs/quick")]  # the rest is the main job, not CI's
    assert install == ['pip install -c constraints.txt -e ".[train,eval]"', "python -m sorry_env.training.warm"]
    assert "chromium" not in " ".join(first)  # the main job installs only what it needs
    assert any("apt-get install -y chromium" in part for part in tests) and tests[-1].startswith("python -m pytest")
    lines = ci_lines()
    at = [lines.index(part) for part in [*install, *tests]]  # ValueError: a README part CI does not run
    assert at == sorted(at)
    assert lines.index("ruff check .") < at[-1] and lines.index("mypy") < at[-1]  # lint before the suite
