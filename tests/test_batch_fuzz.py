"""Fuzz batch lines (hypothesis): random text, random JSON values, answers-like objects.

Whatever a line holds, ``gpu-advisor batch`` writes exactly one record per non-blank line, in
order, each a one-line JSON object with ``line`` and either ``decision`` or ``error``; no
exception escapes. Run through the file reader and :func:`engine.batch.lines.evaluate_lines` (many
examples) and through the CLI (fewer). Bounded: FUZZ_EXAMPLES (default 60) per target.
"""

from __future__ import annotations

import io
import json
import os
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.batch.files import read_lines
from engine.batch.lines import Line, evaluate_lines
from engine.catalog.load import load_catalog
from engine.cli import cli

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "60"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None,  # no wall-clock bound: load only slows it
                derandomize=not os.environ.get("FUZZ_RANDOM"),
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
CATALOG = load_catalog()
QUESTIONS = [question.id for question in CATALOG.questions]
CHOICES = sorted({choice for q in CATALOG.questions for choice in (q.choices or [])})
MODELS = sorted(CATALOG.models)[:20]
LIMIT = 100_000  # catalog/policy.yaml: batch_line_max_bytes

no_line_break = st.characters(blacklist_characters="\n")
scalars = (st.none() | st.booleans() | st.integers() | st.floats()
           | st.text(max_size=20) | st.sampled_from([*CHOICES, *MODELS, "auto"])
           | st.integers(min_value=-10**400, max_value=10**400))
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=4),
    max_leaves=12)
answers_like = st.dictionaries(st.sampled_from(QUESTIONS) | st.text(max_size=12), json_values,
                               max_size=6)
json_text = st.one_of(json_values, answers_like).flatmap(
    lambda value: st.sampled_from([json.dumps(value), json.dumps(value, ensure_ascii=False)]))
mangled = st.tuples(json_text, st.integers(0, 200), st.text(no_line_break, max_size=5)).map(
    lambda t: t[0][:t[1]] + t[2] + t[0][t[1]:])
nested = st.tuples(st.integers(1, 60_000), st.sampled_from(["[", '{"a":', '{"model":['])).map(
    lambda t: t[1] * t[0])
line_text = st.one_of(st.text(no_line_break, max_size=200), json_text, mangled, nested,
                      st.sampled_from(["", " ", "\r", "\t\ufeff", "null", "[]", "{}", "NaN"]))
lines = st.lists(line_text, min_size=1, max_size=12)


def check_records(records: list[str], expected_lines: list[int]) -> None:
    """One record per expected line, in order, each one a one-line JSON object of the contract."""
    assert [json.loads(record)["line"] for record in records] == expected_lines
    for record in records:
        assert "\n" not in record and "\r" not in record
        data: dict[str, Any] = json.loads(record)
        assert list(data) in (["line", "decision"], ["line", "error"]), record[:200]
        if "error" in data:
            assert isinstance(data["error"], str) and data["error"]
            assert len(data["error"]) <= 300
            assert not any(ord(c) < 32 or 127 <= ord(c) < 160 for c in data["error"])


def expected_lines(pairs: list[Line]) -> list[int]:
    """The lines that get a record: every non-blank one (an over-long line is not blank)."""
    return [n for n, text in pairs if not isinstance(text, str) or text.strip()]


@pytest.mark.slow
@FUZZ
@given(lines)
def test_evaluate_lines_one_record_per_non_blank_line(texts: list[str]) -> None:
    data = "\n".join(texts).encode("utf-8", "surrogatepass") + b"\n"
    pairs = list(read_lines(io.BytesIO(data), LIMIT))
    assert [n for n, _ in pairs] == list(range(1, len(pairs) + 1))
    check_records(evaluate_lines(pairs), expected_lines(pairs))


@pytest.mark.slow
@settings(FUZZ, max_examples=max(1, EXAMPLES // 4))
@given(texts=lines)
def test_batch_command_one_record_per_non_blank_line(
        tmp_path_factory: pytest.TempPathFactory, texts: list[str]) -> None:
    folder = tmp_path_factory.mktemp("fuzz")
    source, out = folder / "in.jsonl", folder / "out.jsonl"
    source.write_bytes("\n".join(texts).encode("utf-8", "surrogatepass"))
    result = CliRunner().invoke(cli, ["batch", str(source), "--out", str(out)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code in (0, 1), result.stderr
    raw = out.read_bytes().decode("utf-8")  # valid UTF-8, whatever the input held
    records = raw.splitlines()
    check_records(records, expected_lines(list(read_lines(io.BytesIO(source.read_bytes()),
                                                          LIMIT))))
    failed = sum("error" in json.loads(r) for r in records)
    assert result.exit_code == (1 if failed else 0)
    assert len(result.stderr.splitlines()) == failed + 1
