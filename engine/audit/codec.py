"""Compressing record bodies: zstd with a dictionary kept, versioned, in the store.

A dictionary is the bytes of the first record of its *scope* (one form of record made by
one engine version on one policy): later records of the scope share most of their text
with it, so each compresses to a few kB. Dictionaries are stored once (table
``dictionaries``, compressed themselves) and never change; each record names the one it
was compressed with. The hash is over the uncompressed bytes, so altering a stored body or
a dictionary shows as a record whose content no longer matches its hash.

Reading is bounded: bodies are decompressed one at a time, as the walk reaches them; a
body or dictionary that claims more than :data:`MAX_CONTENT_BYTES` (or does not say its
size) is refused before anything is allocated for it; at most
:data:`DICTIONARIES_KEPT` dictionaries are held at once.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from typing import Any

import zstandard

LEVEL = 6
"""zstd level: with a dictionary, level 6 gives ~5.5 kB per ~110 kB record in ~3 ms (level 3:
~7 kB in ~1 ms; the page slack and index columns add ~2 kB a record)."""

MAX_CONTENT_BYTES = 16 * 2**20
"""The largest record (or dictionary) stored or read, a safety limit: a record is ~20 kB
(a schema-2 one with every trace ~0.1 MB, one on a 2 MB price file a few MB), and a
hostile store of a few kB of zstd must not make a reader allocate more than this per
record."""

DICTIONARIES_KEPT = 2
"""Dictionaries held decompressed at once (records of one engine version and policy share
one; a store that alternates them costs a decompression each time, never more memory)."""


class BodyError(ValueError):
    """A stored body (or its dictionary) cannot be read back."""


@dataclass
class Codec:
    """Compresses and decompresses the bodies of one store's records (``conn``: a SQLite
    connection, or the store's PostgreSQL one, which takes the same SQL)."""

    conn: Any
    _compressors: dict[str, tuple[int, zstandard.ZstdCompressor]] = field(default_factory=dict)
    _decompressors: dict[int, zstandard.ZstdDecompressor] = field(default_factory=dict)

    def pack(self, content: bytes, scope: str) -> tuple[bytes, int]:
        """``content`` compressed with its scope's dictionary (made from ``content`` itself
        when the scope has none yet), and that dictionary's id. Call inside the write
        transaction that stores the record."""
        if len(content) > MAX_CONTENT_BYTES:
            raise BodyError(f"the record is {len(content):,} bytes; at most "
                            f"{MAX_CONTENT_BYTES:,} can be recorded")
        known = self._compressors.get(scope)
        if known is None:
            known = self._compressor(scope, content)
        dictionary, compressor = known
        return compressor.compress(content), dictionary

    def unpack(self, body: object, dictionary: object) -> bytes:
        """A stored body's bytes (``BodyError`` if it cannot be read back)."""
        if dictionary is not None and not isinstance(dictionary, int):
            raise BodyError("its dictionary column is not a dictionary id")
        decompressor = self._decompressor(dictionary)
        return _bounded(decompressor, body, "body")

    def _compressor(self, scope: str, content: bytes) -> tuple[int, zstandard.ZstdCompressor]:
        row = self.conn.execute("SELECT id, content FROM dictionaries WHERE scope = ?",
                                (scope,)).fetchone()
        if row is None:  # a new scope: this record becomes its dictionary
            packed = zstandard.ZstdCompressor(level=LEVEL).compress(content)
            made = self.conn.execute(
                "INSERT INTO dictionaries (scope, content) VALUES (?, ?) RETURNING id",
                (scope, packed)).fetchone()
            # not remembered: the transaction that made it may yet roll back
            return int(made[0]), _compressor(content)
        raw = _bounded(zstandard.ZstdDecompressor(), row[1], "dictionary")
        self._compressors[scope] = known = (int(row[0]), _compressor(raw))
        return known

    def _decompressor(self, dictionary: int | None) -> zstandard.ZstdDecompressor:
        key = 0 if dictionary is None else dictionary
        if key not in self._decompressors:
            while len(self._decompressors) >= DICTIONARIES_KEPT:
                del self._decompressors[next(iter(self._decompressors))]
            if dictionary is None:
                self._decompressors[key] = zstandard.ZstdDecompressor()
            else:
                self._decompressors[key] = zstandard.ZstdDecompressor(
                    dict_data=_raw_dictionary(self._dictionary(dictionary)))
        return self._decompressors[key]

    def _dictionary(self, dictionary: int) -> bytes:
        try:
            row = self.conn.execute("SELECT content FROM dictionaries WHERE id = ?",
                                    (dictionary,)).fetchone()
        except getattr(self.conn, "errors", (sqlite3.DatabaseError,)) as exc:
            raise BodyError(f"its dictionary {dictionary} cannot be read ({exc})") from None
        if row is None:
            raise BodyError(f"its dictionary {dictionary} is missing")
        return _bounded(zstandard.ZstdDecompressor(), row[0], "dictionary")


def _compressor(dictionary: bytes) -> zstandard.ZstdCompressor:
    return zstandard.ZstdCompressor(level=LEVEL, dict_data=_raw_dictionary(dictionary))


def _raw_dictionary(content: bytes) -> zstandard.ZstdCompressionDict:
    return zstandard.ZstdCompressionDict(content, dict_type=zstandard.DICT_TYPE_RAWCONTENT)


def _bounded(decompressor: zstandard.ZstdDecompressor, data: object, what: str) -> bytes:
    """One whole zstd frame decompressed, refused when it claims too much."""
    if not isinstance(data, bytes):
        raise BodyError(f"its stored {what} is not a blob")
    try:
        size = zstandard.frame_content_size(data)
        if not 0 <= size <= MAX_CONTENT_BYTES:
            raise BodyError(f"its stored {what} claims {size:,} bytes" if size > 0
                            else f"its stored {what} does not say its size")
        return decompressor.decompress(data, max_output_size=MAX_CONTENT_BYTES,
                                       allow_extra_data=False)
    except zstandard.ZstdError as exc:
        raise BodyError(f"its stored {what} is not valid zstd ({exc})") from None
