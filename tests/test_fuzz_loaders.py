"""Fuzz the loaders with arbitrary bytes and mutated valid files (hypothesis).

The only acceptable outcomes are success or an :class:`EngineError` subclass (InputError,
AnswerError, CatalogError, RuleError): never another exception, never a hang. A crasher found
here is kept under tests/bad_inputs/fuzz/, which tests/test_bad_inputs.py runs in every role.

Bounded: FUZZ_EXAMPLES (default 60) examples per target, each with a deadline.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.answers.model import load_answers
from engine.catalog.load import Catalog, load_catalog
from engine.errors import EngineError
from engine.files.jsonio import load_data_file
from engine.files.yamlio import parse_yaml
from engine.resources import bundled_dir
from engine.rules.load import load_rulebook

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "60"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None,  # no wall-clock bound: load only slows it
                derandomize=not os.environ.get("FUZZ_RANDOM"),
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])
CATALOG = load_catalog()

SEEDS = {
    "answers": (ROOT / "examples" / "research-70b-intermittent.yaml").read_bytes(),
    "rules": (bundled_dir("rules") / "usage.yaml").read_bytes(),
    "gpus": (bundled_dir("catalog") / "gpus.yaml").read_bytes()[:3000],
    "questions": (bundled_dir("catalog") / "questions.yaml").read_bytes()[:3000],
}
# YAML-ish tokens that tend to reach deeper code paths than random bytes do
TOKENS = [b"&a ", b"*a", b"!!python/object:os.system ", b"!include ", b"{", b"}", b"[", b"]",
          b": ", b"- ", b"\n", b"\t", b"\x00", b"\xff", b".nan", b".inf", b"-1e309", b"1e400",
          b"'", b'"', b"? ", b"<<: ", b"---\n", b"%YAML 1.1\n", b"{fact: ", b"when: ",
          b"because: '{__class__}'", b"id: ", b"~", b"null", b"true", b"0x1F", b"0o17",
          b"99999999999999999999999", b"2001-12-14", b"!!binary aGk=", b"!!set {a}"]


@st.composite
def mutated(draw: st.DrawFn, seed: bytes) -> bytes:
    """The seed file with a few splices: bytes or YAML tokens inserted, deleted, replaced."""
    data = bytearray(seed)
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, len(data)))
        action = draw(st.sampled_from(["insert", "delete", "replace", "token"]))
        if action == "delete":
            del data[at:at + draw(st.integers(1, 40))]
        elif action == "token":
            data[at:at] = draw(st.sampled_from(TOKENS))
        else:
            chunk = draw(st.binary(min_size=1, max_size=12))
            if action == "insert":
                data[at:at] = chunk
            else:
                data[at:at + len(chunk)] = chunk
    return bytes(data)


def inputs(seed: str) -> st.SearchStrategy[bytes]:
    return st.binary(max_size=400) | mutated(SEEDS[seed])


def acceptable(call: object) -> None:
    """Run ``call``; success and EngineError are fine, anything else fails the test."""
    try:
        call()  # type: ignore[operator]
    except EngineError as exc:
        text = str(exc)
        assert text and "Traceback" not in text


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fuzz")
    shutil.copytree(bundled_dir("rules"), root / "rules")
    shutil.copytree(bundled_dir("catalog"), root / "catalog")
    return root


@FUZZ
@given(data=inputs("answers"))
def test_parse_yaml_and_load_data_file(data: bytes, scratch: Path) -> None:
    acceptable(lambda: parse_yaml(data.decode("utf-8", errors="replace"), path="fuzz"))
    for suffix in (".yaml", ".json"):
        path = scratch / f"data{suffix}"
        path.write_bytes(data)
        acceptable(lambda p=path: load_data_file(p))


@FUZZ
@given(data=inputs("answers"))
def test_answers_loader(data: bytes, scratch: Path) -> None:
    path = scratch / "answers.yaml"
    path.write_bytes(data)
    acceptable(lambda: load_answers(path, [], CATALOG))


@pytest.mark.slow
@FUZZ
@given(data=inputs("rules"))
def test_rulebook_loader(data: bytes, scratch: Path) -> None:
    target = scratch / "rules" / "usage.yaml"
    original = (bundled_dir("rules") / "usage.yaml").read_bytes()
    target.write_bytes(data)
    try:
        acceptable(lambda: load_rulebook(scratch / "rules", CATALOG))
    finally:
        target.write_bytes(original)


@pytest.mark.slow
@FUZZ
@given(name=st.sampled_from(["gpus", "questions"]), data=st.data())
def test_catalog_loader(name: str, data: st.DataObject, scratch: Path) -> None:
    raw = data.draw(inputs(name))
    target = scratch / "catalog" / f"{name}.yaml"
    original = (bundled_dir("catalog") / f"{name}.yaml").read_bytes()
    target.write_bytes(raw)
    try:
        acceptable(lambda: load_catalog(scratch / "catalog"))
    finally:
        target.write_bytes(original)


@pytest.mark.slow
@FUZZ
@given(data=inputs("gpus"))
def test_prices_loader(data: bytes, scratch: Path) -> None:
    path = scratch / "prices.yaml"
    path.write_bytes(data)
    acceptable(lambda: load_catalog(prices=path))


def test_fuzz_regressions_are_kept_for_the_corpus() -> None:
    """Crashers found by this file live in tests/bad_inputs/fuzz/ (run by the corpus test)."""
    fuzz = ROOT / "tests" / "bad_inputs" / "fuzz"
    assert fuzz.is_dir()
    for path in fuzz.iterdir():
        if path.is_file():
            catalog: Catalog = CATALOG
            acceptable(lambda p=path, c=catalog: load_answers(p, [], c))


# -- --set KEY=VALUE ---------------------------------------------------------------------------
KEYS = [q.id for q in CATALOG.questions]
NUMBERISH = st.text(alphabet="0123456789,._-+eE nainfINF", max_size=30)
VALUES = (st.text(max_size=40) | NUMBERISH | st.sampled_from(
    ["2,5", "2,500", "1_000", "nan", "-inf", "1e400", "9" * 5000, "yes", "auto", "null", "eu,us",
     "llama-2-7b", "rtx-4090", "\x1b[2J", "region"]))


@st.composite
def overrides(draw: st.DrawFn) -> list[str]:
    """A few ``KEY=VALUE`` items: known or random keys, typed-looking or random values."""
    items = []
    for _ in range(draw(st.integers(1, 5))):
        key = draw(st.sampled_from(KEYS) | st.text(max_size=12))
        separator = draw(st.sampled_from(["=", "=", "=", ""]))
        items.append(f"{key}{separator}{draw(VALUES)}")
    if draw(st.booleans()):
        items.insert(0, "model=llama-2-7b")
    return items


@FUZZ
@given(items=overrides())
def test_set_overrides(items: list[str]) -> None:
    """Every outcome is valid Answers or one AnswerError, printed as one clean line."""
    from engine.answers.model import Answers
    from engine.cli import _one_line
    from engine.errors import AnswerError
    from engine.files.yamlio import CONTROL_CHARACTERS

    try:
        answers = load_answers(None, items, CATALOG)
    except AnswerError as exc:
        printed = _one_line(str(exc))
        assert "\n" not in printed and not CONTROL_CHARACTERS.search(printed), printed
        return
    assert isinstance(answers, Answers)


# -- the JSON node count, taken from the text's structure before decoding -----------------------
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: st.lists(children, max_size=5)
    | st.dictionaries(st.text(max_size=8), children, max_size=5),
    max_leaves=40)


def nodes(value: object) -> int:
    """Values, keys and containers, counted on decoded data."""
    if isinstance(value, dict):
        return 1 + sum(1 + nodes(v) for v in value.values())
    if isinstance(value, list):
        return 1 + sum(nodes(v) for v in value)
    return 1


@pytest.mark.slow
@FUZZ
@given(value=JSON_VALUES, indent=st.sampled_from([None, 0, 2, "\t"]), ascii_only=st.booleans())
def test_json_node_count_is_exact(value: object, indent: int | str | None,
                                  ascii_only: bool) -> None:
    import json

    from engine.files.jsonio import _json_nodes, _json_structure

    text = json.dumps(value, indent=indent, ensure_ascii=ascii_only)
    assert _json_nodes(_json_structure(text)) == nodes(value)
