"""Walking the audit chain: each record's hash (or keyed MAC), its link to the one before,
its index columns and its policy; the head to keep elsewhere (``COUNT:HASH``); and, given a
head kept earlier, whether that head is still in the chain.

What each check can see: a walk alone finds any edit that leaves a link or a hash wrong,
but not a store cut short or rewritten whole (the rewrite is as self-consistent as the
original). A head kept elsewhere finds both up to that head; the key (when records are
keyed) finds any rewrite by someone without it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.audit.key import ENV_KEY, ENV_KEY_FILE, AuditKey
from engine.audit.record import (
    HEADER_FIELDS,
    KEYED,
    OLD_FORM,
    PLAIN,
    digest,
    index_text,
    is_old_form,
    parse_header,
)
from engine.audit.store import GENESIS, AuditError, AuditStore, PolicyMismatch, Stored
from engine.errors import InputError
from engine.files.printable import printable

_HEAD = re.compile(r"(\d{1,15}):([0-9a-f]{16,64})")


@dataclass(frozen=True)
class Head:
    """A chain position and the hash of the record there (or, when parsed, a prefix of it
    of at least 16 hex digits). ``0:000…`` is the empty chain."""

    count: int
    hash: str

    def __str__(self) -> str:
        return f"{self.count}:{self.hash}"

    @classmethod
    def parse(cls, text: str) -> Head:
        """A head as ``audit verify`` prints it; anything else is an :class:`InputError`."""
        match = _HEAD.fullmatch(text.strip().lower())
        if not match or (match[1] == "0" and match[2].strip("0")):
            raise InputError(f"expected a head as `audit verify` prints it, COUNT:HASH with 16 "
                             f"to 64 hex digits (e.g. 1234:9f86d081884c7d65), got {text[:80]!r}",
                             field="--since")
        return cls(int(match[1]), match[2])

    def names(self, record_hash_: str) -> bool:
        """Whether this head's hash is (a prefix of) ``record_hash_``."""
        return record_hash_.startswith(self.hash)


@dataclass(frozen=True)
class Verification:
    """The result of walking the chain.

    ``count`` records passed every check, in chain order, up to ``head``; ``problem`` is
    None when nothing is wrong, else ``BROKEN`` (``broken_id`` names the first record that
    failed and ``reason`` says why), ``TRUNCATED`` or ``REWRITTEN`` (the head ``since`` is
    gone), or ``UNKEYED`` (a key was given but no record is keyed).
    """

    count: int
    head: Head
    problem: str | None = None
    broken_id: str | None = None
    reason: str | None = None
    keyed: int = 0
    plain: int = 0
    unchecked: int = 0
    since: Head | None = None

    @property
    def ok(self) -> bool:
        """Nothing found wrong (keyed records may still be unchecked: see ``complete``)."""
        return self.problem is None

    @property
    def complete(self) -> bool:
        """Nothing found wrong and every record's hash or MAC was checked."""
        return self.ok and not self.unchecked

    def line(self) -> str:
        """One line for a person (and a ticket): what was checked, or what happened. Ids and
        reasons quoted from the store are escaped (:func:`printable`), so no record can
        repaint this line as another verdict."""
        return printable(self._said())

    def _said(self) -> str:
        if self.problem == "BROKEN":
            kept = (f" (head {self.since} still in the chain before it)"
                    if self.since and self.since.count <= self.count else "")
            return (f"BROKEN at record {self.broken_id} (after {self.count:,} good record(s)): "
                    f"{self.reason}{kept}")
        if self.problem:
            return f"{self.problem}: {self.reason}"
        if self.unchecked:
            return (f"{self.unchecked:,} of {self.count:,} record(s) are keyed (HMAC-SHA256) and "
                    f"no key was given, so their MACs were not checked (links intact"
                    f"{self._anchor_note()}); set {ENV_KEY} or {ENV_KEY_FILE}, or pass --key-file")
        return (f"ok: {self.count:,} record(s), chain intact{self._key_note()}"
                f"{self._anchor_note()}; head {self.head}")

    def _key_note(self) -> str:
        if not self.keyed:
            return ""
        before = f" after {self.plain:,} plain record(s) from before the key" if self.plain else ""
        return f", {self.keyed:,} keyed MAC(s) checked{before}"

    def _anchor_note(self) -> str:
        return f", head {self.since} still in the chain" if self.since else ""


def verify(store: AuditStore, *, key: AuditKey | None = None,
           since: Head | None = None) -> Verification:
    """Walk the whole chain; with ``since``, also check that head is still in it; with
    ``key``, check every keyed record's MAC and refuse plain records after keyed ones."""
    walk = _Walk(store, key, since)
    for record in store.iter_stored():
        reason = walk.fault(record)
        if reason:
            return walk.result("BROKEN", reason, record.id)
        if since and walk.count + 1 == since.count and not since.names(record.hash):
            return walk.result("REWRITTEN", (
                f"record {since.count:,} ({record.id}) now has hash {record.hash[:16]}…, not "
                f"{since.hash[:16]}…: the chain at or before it was rewritten"), record.id)
        walk.accept(record)
    return walk.end()


class _Walk:
    """The state of one walk along the chain."""

    def __init__(self, store: AuditStore, key: AuditKey | None, since: Head | None) -> None:
        self.store, self.key, self.since = store, key, since
        self.count = self.keyed = self.plain = self.unchecked = 0
        self.head = Head(0, GENESIS)
        self.policies: dict[str, str | None] = {}

    def fault(self, record: Stored) -> str | None:
        """Why this record fails, or None."""
        if record.prev_hash != self.head.hash:
            return "its link to the previous record is broken"
        if record.content is None:
            return record.unreadable
        return (self._hash_fault(record, record.content)
                or _content_fault(record, record.content)
                or self._policy_fault(record.rules_hash)
                or self._policy_fault(record.catalog_hash))

    def accept(self, record: Stored) -> None:
        if record.hash_kind == PLAIN:
            self.plain += 1
        elif self.key is None:
            self.unchecked += 1
        else:
            self.keyed += 1
        self.count += 1
        self.head = Head(self.count, record.hash)

    def result(self, problem: str | None = None, reason: str | None = None,
               broken_id: str | None = None) -> Verification:
        return Verification(self.count, self.head, problem, broken_id, reason, self.keyed,
                            self.plain, self.unchecked, self.since)

    def end(self) -> Verification:
        since = self.since
        if since and self.count < since.count:
            where = (f"the store ends at record {self.count:,}" if self.count
                     else "the store is empty")
            return self.result("TRUNCATED", f"{where}; head {since} is gone: "
                                            f"{since.count - self.count:,} record(s) deleted")
        if self.key and self.count and not (self.keyed or self.unchecked):
            return self.result("UNKEYED", (
                f"none of the {self.count:,} record(s) is keyed, though a key was given: written "
                "before the key was set up, or rewritten without it"))
        return self.result()

    def _hash_fault(self, record: Stored, content: bytes) -> str | None:
        if record.hash_kind == PLAIN:
            if self.keyed or self.unchecked:
                return ("it is a plain sha256 record after keyed ones (a writer with the key "
                        "never writes one): written without the key")
            return None if digest(content, PLAIN) == record.hash else (
                "its content does not match its hash")
        if record.hash_kind != KEYED:
            return f"its hash kind {record.hash_kind!r} is unknown"
        if self.key is None:
            return None  # counted as unchecked
        if record.key_id != self.key.id:
            return f"it is keyed with key {record.key_id}, not with the key given ({self.key.id})"
        return None if digest(content, KEYED, self.key) == record.hash else (
            "its MAC does not match its content: rewritten without the key")

    def _policy_fault(self, digest: str) -> str | None:
        if digest not in self.policies:
            try:
                self.store.policy(digest)
                self.policies[digest] = None
            except PolicyMismatch:
                self.policies[digest] = (f"its stored policy {digest[:12]} no longer matches "
                                         "its hash")
            except AuditError:
                self.policies[digest] = f"its stored policy {digest[:12]} is missing"
        return self.policies[digest]


_INDEX_FAULT = "its choices/rules_fired columns do not match its result"


def _content_fault(record: Stored, content: bytes) -> str | None:
    """Whether the record's columns say what its (hashed) bytes say: its header line."""
    if is_old_form(content):
        return OLD_FORM
    try:
        header = parse_header(content)
        index = index_text(header)
    except (ValueError, KeyError, TypeError):
        return "its content is not a record"
    wrong = [name for name in HEADER_FIELDS if header.get(name) != getattr(record, name)]
    if wrong:
        return _columns_fault(wrong)
    if index != {"choices": record.choices, "rules_fired": record.rules_fired}:
        return _INDEX_FAULT
    return None


def _columns_fault(names: list[str]) -> str:
    if len(names) == 1:
        return f"its {names[0]} column does not match its content"
    return f"its {', '.join(names)} columns do not match its content"
