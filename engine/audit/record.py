"""The bytes an audit record's hash is made over, reading them back, and a record as the
store gives it (:class:`Record` to show, :class:`Entry` to list, :class:`Stored` to verify).

A record's bytes are **framed**: a header line (compact JSON: the record's id, time, engine
version, policy hashes, link, hash kind and key, and its index: the choices and the rules
that fired), then the answers (JSON) on one line, then the result exactly as
``recommend --format json`` printed it (decision schema 3). Verifying one hashes these bytes
and reads the header line; the result is neither re-serialised nor parsed. The JSON form of
the unreleased audit schemas 1 and 2, and decisions of schema 1 and 2, are recognised only
to be refused in one line.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.audit.key import AuditKey
from engine.audit.sqlite import AuditError

PLAIN, KEYED = "sha256", "hmac-sha256"
FORMAT = 3
"""The ``format`` of a framed record's header (the schema that introduced it)."""

HEADER_FIELDS = ("id", "created_at", "engine_version", "rules_hash", "catalog_hash",
                 "prev_hash", "hash_kind", "key_id")
"""The columns a framed record's header repeats (and ``audit verify`` compares)."""

DECISION_SCHEMA = 3
"""The decision schema a record's result is read in."""

_OLD_FORM_START = b'{"answers":'
OLD_FORM = ("it is a record of the unreleased audit schema 1 or 2, which this version does "
            "not read")


def index_of(data: Mapping[str, Any]) -> dict[str, Any]:
    """What ``audit list`` filters on, taken from a result: each axis's choice and the
    rules that fired."""
    return {"choices": {a: d["choice"] for a, d in data["decisions"].items()},
            "rules_fired": sorted(_rules_fired(data["fired"]))}


def _rules_fired(fired: Any) -> set[str]:
    """The rules of ``fired`` (rule → facts)."""
    return set(fired)


def index_text(index: Mapping[str, Any]) -> dict[str, str]:
    """The ``choices`` and ``rules_fired`` columns for an index."""
    return {"choices": json.dumps(index["choices"], sort_keys=True),
            "rules_fired": json.dumps(index["rules_fired"])}


def index_columns(data: Mapping[str, Any]) -> dict[str, str]:
    """The ``choices`` and ``rules_fired`` columns for a result."""
    return index_text(index_of(data))


def framed_content(fields: Mapping[str, Any]) -> bytes:
    """A new record's bytes: header line, answers line, result."""
    header = {name: fields[name] for name in HEADER_FIELDS}
    header.update(format=FORMAT, choices=json.loads(fields["choices"]),
                  rules_fired=json.loads(fields["rules_fired"]))
    line = json.dumps(header, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return b"\n".join((line.encode(), fields["answers"].encode(), fields["result"].encode()))


def digest(content: bytes, hash_kind: str, key: AuditKey | None = None) -> str:
    """A record's hash: sha256 of its bytes, or for a keyed record their HMAC-SHA256 under
    ``key``."""
    if hash_kind == PLAIN:
        return hashlib.sha256(content).hexdigest()
    if key is None:
        raise ValueError("a keyed record's hash needs the key")
    return key.mac(content)


def is_old_form(content: bytes) -> bool:
    """Whether these are the bytes of a record of the unreleased audit schema 1 or 2."""
    return content.startswith(_OLD_FORM_START)


@dataclass(frozen=True)
class Parsed:
    """A record's bytes read back: its header, its answers and result texts."""

    header: dict[str, Any]
    answers: str
    result: str


def parse_header(content: bytes) -> dict[str, Any]:
    """A framed record's header (its first line); ``ValueError`` if it has none."""
    end = content.find(b"\n")
    header = json.loads(content[:end]) if end > 0 else None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise ValueError("no record header")
    return header


def parse(content: bytes) -> Parsed:
    """Read a record's bytes back (``ValueError`` saying why if they are not a record of
    this version: not framed, or holding a decision of another schema)."""
    if is_old_form(content):
        raise ValueError(OLD_FORM)
    header = parse_header(content)
    first = content.index(b"\n")
    second = content.index(b"\n", first + 1)
    result = content[second + 1:].decode()
    schema = decision_schema(result)
    if schema not in (None, DECISION_SCHEMA):
        raise ValueError(f"it holds a decision of schema {schema}; this version reads "
                         f"schema {DECISION_SCHEMA} only (1 and 2 were never released)")
    return Parsed(header, content[first + 1:second].decode(), result)


def decision_schema(result: str) -> int | None:
    """The decision schema of a stored result, read from its first lines."""
    found = re.search(r'"schema_version": *(\d+)', result[:200])
    return int(found.group(1)) if found else None


def stored_json(record_id: str, name: str, text: object) -> Any:
    """A JSON column (or the answers or result) of a stored record, parsed; an
    :class:`AuditError` naming the record when it is not JSON (a store edited by hand)."""
    try:
        return json.loads(text)  # type: ignore[arg-type]
    except (ValueError, TypeError):
        raise _unreadable(record_id, name, "not JSON") from None


def _choices(record_id: str, text: object) -> dict[str, Any]:
    data = stored_json(record_id, "choices", text)
    if not isinstance(data, dict):
        raise _unreadable(record_id, "choices", "not a JSON object")
    return data


def _unreadable(record_id: str, name: str, why: str) -> AuditError:
    return AuditError(f"record {record_id} cannot be read: its {name} is {why}; run "
                      "`gpu-advisor audit verify`")


@dataclass(frozen=True)
class Record:
    """One recorded decision, as ``audit show``/``export`` give it."""

    seq: int
    id: str
    created_at: str
    engine_version: str
    rules_hash: str
    catalog_hash: str
    answers: str
    result: str
    choices: str
    rules_fired: str
    prev_hash: str
    hash: str
    hash_kind: str = PLAIN
    key_id: str | None = None

    @property
    def result_data(self) -> dict[str, Any]:
        """The stored result as data (an :class:`AuditError` naming the record if it is not
        a JSON object)."""
        data = stored_json(self.id, "result", self.result)
        if not isinstance(data, dict):
            raise _unreadable(self.id, "result", "not a JSON object")
        return data

    @property
    def answers_data(self) -> Any:
        """The stored answers as data."""
        return stored_json(self.id, "answers", self.answers)

    @property
    def choices_data(self) -> dict[str, Any]:
        """The ``choices`` column as data (axis → option)."""
        return _choices(self.id, self.choices)

    @property
    def rules_fired_data(self) -> Any:
        """The ``rules_fired`` column as data."""
        return stored_json(self.id, "rules_fired", self.rules_fired)

    def summary(self) -> dict[str, Any]:
        """What ``audit list`` shows."""
        return Entry(self.seq, self.id, self.created_at, self.engine_version, self.rules_hash,
                     self.catalog_hash, self.choices).summary()


@dataclass(frozen=True)
class Entry:
    """A record as ``audit list`` shows it: its columns, not its body."""

    seq: int
    id: str
    created_at: str
    engine_version: str
    rules_hash: str
    catalog_hash: str
    choices: str

    @property
    def choices_data(self) -> dict[str, Any]:
        """The ``choices`` column as data (axis → option)."""
        return _choices(self.id, self.choices)

    def summary(self) -> dict[str, Any]:
        """What ``audit list --format json`` shows."""
        return {"id": self.id, "created_at": self.created_at,
                "engine_version": self.engine_version, "choices": self.choices_data,
                "rules_hash": self.rules_hash, "catalog_hash": self.catalog_hash}


@dataclass(frozen=True)
class Stored:
    """One record as stored: its columns and the bytes its hash is made over (``content``;
    None when they cannot be read back, ``unreadable`` says why)."""

    seq: int
    id: str
    created_at: str
    engine_version: str
    rules_hash: str
    catalog_hash: str
    choices: str
    rules_fired: str
    prev_hash: str
    hash: str
    hash_kind: str
    key_id: str | None
    content: bytes | None
    unreadable: str | None = None

    def record(self, path: object) -> Record:
        """The record these bytes hold (an :class:`AuditError` naming it if they cannot be
        read back: ``audit verify`` says more)."""
        try:
            if self.content is None:
                raise ValueError(self.unreadable)
            parsed = parse(self.content)
        except ValueError as exc:
            raise AuditError(f"{path}: record {self.id} cannot be read ({exc}); run "
                             "`gpu-advisor audit verify`") from None
        return Record(self.seq, self.id, self.created_at, self.engine_version,
                      self.rules_hash, self.catalog_hash, parsed.answers, parsed.result,
                      self.choices, self.rules_fired, self.prev_hash, self.hash,
                      self.hash_kind, self.key_id)
