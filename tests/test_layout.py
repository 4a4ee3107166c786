"""The package layout: no import loop anywhere in the tree (imports inside functions count, as
they only hide a loop), and sorry_env imports nothing from sorry_env.agents or training. Read with ast,
so nothing is imported to check it."""

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
# Repository folder -> the import name it installs as (pyproject.toml's package-dir).
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
