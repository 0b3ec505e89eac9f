"""A module's private names (``_name``) stay in it: what two modules share is public."""

from __future__ import annotations

import ast
from pathlib import Path

ENGINE = Path(__file__).resolve().parent.parent / "engine"


def private_imports(path: Path) -> list[str]:
    """``from engine.x import _name`` in one module, as ``line: module._name``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("engine"):
            found += [f"{node.lineno}: {node.module}.{alias.name}" for alias in node.names
                      if alias.name.startswith("_") and not alias.name.startswith("__")]
    return found


def test_no_module_imports_another_modules_private_names() -> None:
    crossing = {str(p.relative_to(ENGINE)): private_imports(p)
                for p in sorted(ENGINE.rglob("*.py")) if "__pycache__" not in p.parts}
    assert {k: v for k, v in crossing.items() if v} == {}


def test_the_check_sees_a_private_import(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("from engine.answers.check import _num, describe\n", encoding="utf-8")
    assert private_imports(module) == ["1: engine.answers.check._num"]
