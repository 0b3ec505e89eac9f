"""Reading and rewriting audit records from outside the engine: plain sqlite3 and zstd, and
the published record format (engine.audit.record). What anyone with write access to the
store file can do, for the tamper tests."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import zstandard

from engine.audit.record import digest, parse_header


def _dictionary(conn: sqlite3.Connection, dictionary: int) -> zstandard.ZstdCompressionDict:
    (packed,) = conn.execute("SELECT content FROM dictionaries WHERE id = ?",
                             (dictionary,)).fetchone()
    raw = zstandard.ZstdDecompressor().decompress(packed)
    return zstandard.ZstdCompressionDict(raw, dict_type=zstandard.DICT_TYPE_RAWCONTENT)


def content(conn: sqlite3.Connection, row: dict[str, Any]) -> bytes:
    """The bytes a stored row holds (its body decompressed with its dictionary)."""
    dictionary = _dictionary(conn, row["dictionary"])
    return zstandard.ZstdDecompressor(dict_data=dictionary).decompress(row["body"])


def packed(conn: sqlite3.Connection, row: dict[str, Any], data: bytes) -> bytes:
    """``data`` compressed as the row's body (with the row's dictionary)."""
    dictionary = _dictionary(conn, row["dictionary"])
    return zstandard.ZstdCompressor(level=3, dict_data=dictionary).compress(data)


def rows(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """Every decision row, in chain order, as a dict of its columns."""
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute("SELECT * FROM decisions ORDER BY seq")]
    finally:
        conn.row_factory = None


def reframed(data: bytes, **header: Any) -> bytes:
    """A framed record's bytes with header fields changed (the rest kept byte for byte)."""
    import json

    first = data.index(b"\n")
    changed = {**parse_header(data), **header}
    line = json.dumps(changed, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return line.encode() + data[first:]


def replace_in_record(path: Path, record_id: str, old: str, new: str, *,
                      rehash: bool = False) -> None:
    """Edit a record's text in place (and, with ``rehash``, give it its new plain sha256,
    as a forger would)."""
    conn = sqlite3.connect(path)
    try:
        [row] = [r for r in rows(conn) if r["id"] == record_id]
        data = content(conn, row)
        assert old.encode() in data, old
        edited = data.replace(old.encode(), new.encode())
        changes: dict[str, Any] = {"body": packed(conn, row, edited)}
        if rehash:
            changes["hash"] = digest(edited, "sha256")
        names = ", ".join(f"{k} = ?" for k in changes)
        conn.execute(f"UPDATE decisions SET {names} WHERE seq = ?",
                     (*changes.values(), row["seq"]))
        conn.commit()
    finally:
        conn.close()
