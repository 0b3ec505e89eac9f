"""``audit copy``: one store's records into another (a person's SQLite file into the
organisation's PostgreSQL database), every record still verifiable.

The source is verified first; nothing is copied from a chain that does not verify. Into an
empty store (or one holding the start of the same chain, from a copy run before) the records
go as they are, in one transaction: ids, times, links, hashes and keys kept, so the copy
verifies against the source's head, and a second copy adds nothing. Into a store holding
another chain they can only go with new links (``--append``): each is appended as a new
record that keeps its id, time, answers, result and policy, one that is there already is
skipped. Either way the destination is verified after the copy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from engine.audit.chain import Verification, verify
from engine.audit.key import load_key
from engine.audit.location import Location
from engine.audit.store import AuditError, AuditStore, OtherChain


@dataclass(frozen=True)
class Copied:
    """What a copy did: records written, records the destination held already, how
    (``kept``: hashes and links as in the source; else appended with new links), and the
    two verifications."""

    written: int
    held: int
    kept: bool
    source: Verification
    destination: Verification

    def line(self) -> str:
        """Three lines for a person (and a ticket): what was copied, and each verification."""
        how = ("ids, times, links and hashes kept" if self.kept
               else "appended with new links; ids, times, answers, results and policies kept")
        return (f"copied {self.written:,} record(s) ({how}); {self.held:,} were there already\n"
                f"source: {self.source.line()}\ndestination: {self.destination.line()}")


def copy_store(source: Location, destination: Location, *, append: bool = False) -> Copied:
    """Copy every record of ``source`` into ``destination`` (see the module)."""
    key = load_key()
    with AuditStore(source, create=False) as src:
        before = verify(src, key=key)
        if not before.ok:
            raise AuditError(f"{source} does not verify, so nothing was copied: {before.line()}")
        policies = _Policies(src)
        with AuditStore(destination) as dst:
            kept = True
            try:
                written = dst.adopt(src.iter_stored(), policies)
            except OtherChain:
                if not append:
                    raise
                kept, written = False, _append_all(src, dst, policies)
            after = verify(dst, key=key, since=before.head if kept else None)
    if not after.ok:
        raise AuditError(f"{destination} does not verify after the copy: {after.line()}")
    return Copied(written, before.count - written, kept, before, after)


def _append_all(src: AuditStore, dst: AuditStore, policies: _Policies) -> int:
    written = 0
    for record in src.iter_all():
        added = dst.append_record(record, policies(record.rules_hash),
                                  policies(record.catalog_hash))
        written += added is not None
    return written


class _Policies:
    """The source's policies by hash, each read (and checked against its hash) once."""

    def __init__(self, store: AuditStore) -> None:
        self._store = store
        self._texts: dict[str, Mapping[str, str]] = {}

    def __call__(self, digest: str) -> Mapping[str, str]:
        if digest not in self._texts:
            self._texts[digest] = self._store.policy(digest)
        return self._texts[digest]


__all__ = ["Copied", "copy_store"]
