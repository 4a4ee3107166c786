"""The package layout: no import loop anywhere in the tree (imports inside functions count, as
they only hide a loop), and sorry_env imports nothing from sorry_env.agents or training. Read with ast,
so nothing is imported to check it."""

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
# Repository folder -> its import name (sorry_env/agents and sorry_env/training link to the folders).
PACKAGES = {"sorry_env": "sorry_env", "agents": "sorry_env.agents", "training": "sorry_env.training"}


def modules() -> dict[str, pathlib.Path]:
    out = {}
    for folder, package in PACKAGES.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            name = ".".join((package, *(parts[:-1] if parts[-1] == "__init__" else parts)))
            out[name] = path
    return out


def imported(name: str, path: pathlib.Path, known: dict) -> set[str]:
    """The modules of the tree that module `name` imports anywhere in its body."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package
                for _ in range(node.level - 1):
                    anchor = anchor.rpartition(".")[0]
                base = f"{anchor}.{node.module}" if node.module else anchor
            targets = [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:  # `from pkg import name`: the module pkg.name, else pkg
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def import_graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imported(name, path, known) for name, path in known.items()}


def loops(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def test_the_loop_finder_finds_a_loop():
    assert loops({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert loops({"a": {"b"}, "b": set()}) == []


def test_the_graph_reads_relative_and_function_level_imports():
    graph = import_graph()
    assert "sorry_env.training.learner_env" in graph["sorry_env.training.imitation"]  # imported inside a function
    assert "sorry_env.agents.arena.stats" in graph["sorry_env.agents.arena.play"]  # relative


def test_no_import_loop_in_the_tree():
    assert loops(import_graph()) == []


def test_sorry_env_imports_nothing_from_agents_or_training():
    graph = import_graph()
    bad = {
        (name, target)
        for name, targets in graph.items()
        if modules()[name].is_relative_to(ROOT / "sorry_env")  # the env's own folder
        for target in targets
        if target.startswith(("sorry_env.agents", "sorry_env.training"))
    }
    assert not bad


# ---- one game interface: a game is named only in its own folder ------------------------------
# Issue 26: everything outside a game's folder reaches it through the registry (sorry_env.games).
# The games checked are the built-in ones whose module lives in a folder of their own.
GAME_FOLDERS = {"express": "sorry_env/express"}
# Where a game's name may appear outside its folder: its tests and docs, the run records
# (results/: data naming the tasks they ran), the user-facing notes
# (README, CHANGELOG), the licence's "express or implied", the shipped policy files (binary
# data; their names are ids users have), and these lines, each a fact with one home:
SKIPPED_DIRS = {"tests", "docs", "results", ".git", "runs", "build", "dist", "__pycache__", "node_modules"}
SKIPPED_FILES = {"README.md", "CHANGELOG.md", "LICENSE"}
ALLOWED_LINES = {
    "sorry_env/games.py": ['"sorry_env.express.express_game",'],  # the one registry line
    "pyproject.toml": ['"sorry_env.express",'],  # the wheel's package list (tests/test_wheel.py)
    # sorry-bench's task of that game, pinned by tests/bench_tasks_golden.json: its name, id and
    # anchors are data users have (a renamed task would be a new task version).
    "training/bench/tasks.py": [
        '"express-2p-heuristic",',
        '"Sorry! Express, 2 players: one seat against the heuristic",',
        'game="express",',
        '"express-2p-heuristic": {"random": [395, 2000], "heuristic": [989, 2000]},',
    ],
}


def files_outside_game_folders(word: str) -> list[str]:
    """'path:line: text' of every line naming `word` (any case) outside the allowed places."""
    offenders = []
    for path in sorted(ROOT.rglob("*")):
        rel = path.relative_to(ROOT)
        if (
            not path.is_file()
            or rel.parts[0] in SKIPPED_DIRS
            or any(part.startswith(".") or part in SKIPPED_DIRS or part.endswith(".egg-info") for part in rel.parts)
            or rel.as_posix().startswith(GAME_FOLDERS[word] + "/")
            or rel.as_posix() in SKIPPED_FILES
        ):
            continue
        if word in rel.as_posix().lower() and rel.parts[0] == "checkpoints" and path.suffix == ".safetensors":
            continue  # a shipped policy of that game: binary data with a user-facing name
        if word in rel.as_posix().lower():
            offenders.append(f"{rel}: the file's name")
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # binary (pictures, policy files, compiled caches)
        allowed = ALLOWED_LINES.get(rel.as_posix(), [])
        for number, line in enumerate(text.splitlines(), start=1):
            if word in line.lower() and line.strip().split("  #")[0].strip() not in allowed:
                offenders.append(f"{rel}:{number}: {line.strip()[:100]}")
    return offenders


def test_no_game_is_named_outside_its_folder_tests_and_docs():
    for word in GAME_FOLDERS:
        offenders = files_outside_game_folders(word)
        assert not offenders, f"{word!r} named outside {GAME_FOLDERS[word]}/:\n" + "\n".join(offenders)


def test_the_name_check_finds_an_offender(tmp_path, monkeypatch):
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "x.py").write_text("ok = 1\nfrom sorry_env.express import game  # a second wing\n")
    (tmp_path / "sorry_env" / "express").mkdir(parents=True)
    (tmp_path / "sorry_env" / "express" / "game.py").write_text("express = 1\n")
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    assert files_outside_game_folders("express") == [
        "agents/x.py:2: from sorry_env.express import game  # a second wing"
    ]
