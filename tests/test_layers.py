"""The layout shows the flow, and imports only go down it.

answers → facts → rules → decisions → hardware → output/audit: each folder of ``engine/`` sits
on one layer and may import only its own layer and the ones below (function-level imports
included). The command line is the top; nothing imports it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ENGINE = Path(__file__).resolve().parent.parent / "engine"

LAYERS: list[set[str]] = [
    {"errors", "resources", "memo", "gc_pause", "plugin_scan", "files",
     "version"},                            # parsing, messages, files; the process
    {"catalog"},                            # GPUs, offers, models, policy, questions
    {"answers", "estimates"},               # the team's answers; memory, compute, cost
    {"facts"},                              # what the rules read
    {"rules"},                              # the rule language on durable_rules
    {"decide"},                             # the phases of a recommendation; the Decision
    {"output"},                             # text, markdown, chart
    {"audit", "tools", "batch"},            # records, what-if/diff/scenarios, many at once
    {"cli"},                                # flags and rendering only
]
LAYER = {part: level for level, parts in enumerate(LAYERS) for part in parts}


def _part(module: str) -> str | None:
    """The first component under ``engine`` (``engine.rules.load`` → ``rules``)."""
    parts = module.split(".")
    if parts[0] != "engine" or len(parts) < 2:
        return None
    return parts[1]


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "engine":
                found += [(node.lineno, f"engine.{alias.name}") for alias in node.names]
            else:
                found.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
    return found


def _modules() -> list[Path]:
    return sorted(p for p in ENGINE.rglob("*.py") if "__pycache__" not in p.parts)


def test_every_folder_has_a_layer() -> None:
    top = {p.relative_to(ENGINE).parts[0].removesuffix(".py") for p in _modules()}
    assert top - {"__init__", "__main__"} <= set(LAYER), top - set(LAYER)


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(ENGINE)))
def test_imports_only_go_down(path: Path) -> None:
    here = path.relative_to(ENGINE).parts[0].removesuffix(".py")
    if here in ("__init__", "__main__"):
        return  # the package's own lazy exports and entry point
    upward = []
    for line, module in _imports(path):
        part = _part(module)
        if part is None:
            continue
        if LAYER.get(part, -1) > LAYER[here]:
            upward.append(f"{path.name}:{line} imports {module} ({part} is above {here})")
    assert upward == []


def test_no_module_imports_itself_through_others() -> None:
    """No import cycle between modules, counting imports inside functions too."""
    names = {_module_name(p): p for p in _modules()}
    graph = {name: {m for _, m in _imports(path) if m in names and m != name}
             | {f"{m}.{n}" for m, n in _imported_names(path) if f"{m}.{n}" in names}
             for name, path in names.items()}
    cycles = [sorted(c) for c in _strongly_connected(graph) if len(c) > 1]
    assert cycles == []


def _module_name(path: Path) -> str:
    parts = ("engine", *path.relative_to(ENGINE).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported_names(path: Path) -> list[tuple[str, str]]:
    """(module, name) of every ``from module import name`` (a name may be a submodule)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [(node.module, alias.name) for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0
            for alias in node.names]


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's components, iteratively."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            step = next(edges, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(graph[step]))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
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
                found.append(component)
    return found


@pytest.mark.slow
def test_the_promised_api_from_a_fresh_interpreter(tmp_path: Path) -> None:
    """``import engine; engine.recommend({...})`` works, and stays the function even after the
    module that defines it is imported."""
    import subprocess
    import sys

    code = ("import engine\n"
            "d = engine.recommend({'model': 'llama-3.1-8b', 'hours_per_year': 2000})\n"
            "import engine.decide.engine\n"
            "from engine import Decision, Engine, recommend\n"
            "assert isinstance(d, Decision) and callable(engine.recommend)\n"
            "assert engine.recommend is recommend and Engine is not None\n"
            "print(d.decisions['deployment'].choice, d.hardware.choice.where)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    deployment, where = done.stdout.split()
    assert where == ("local" if deployment == "local" else "cloud")
