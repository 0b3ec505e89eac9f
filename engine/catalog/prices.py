"""A ``--prices`` file read once, where the flags are read, into what the policy holds of it.

Everything a price file contributes to a decision is in :class:`PriceInput`: its exact text,
its layout (a YAML quotes file, or a SkyPilot ``vms.csv``), and for a CSV the provider it
prices and the date its prices are from. :meth:`PriceInput.texts` puts all of that among the
catalog's texts, so the catalog hash, the policy cache key and the audit record change when
any of it does (the same CSV bytes as ``aws=x.csv`` and ``lambda=x.csv`` are two policies),
and :meth:`PriceInput.from_texts` rebuilds it from a record alone: nothing is re-read, and no
date comes from a file's modification time on replay.

A CSV has no date of its own: ``--prices-date`` gives it, else the file's modification time,
recorded as such (``dated_by``).
"""

from __future__ import annotations

import datetime as dt
import errno
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from engine.errors import CatalogError, InputError
from engine.files.yamlio import read_text

Layout = Literal["quotes", "skypilot"]
QUOTES_TEXT = "prices"
"""The catalog text of a YAML quotes file (its name since the first records)."""
CSV_TEXT, CSV_ABOUT = "prices.csv", "prices.json"
"""The catalog texts of a SkyPilot CSV: its bytes, and what it is (provider, date, layout)."""
BY_FLAG, BY_MTIME = "--prices-date", "the file's modification time"
_PROVIDER = re.compile(r"[a-z0-9][a-z0-9.\-]*")


@dataclass(frozen=True)
class PriceInput:
    """One price file as the policy holds it."""

    shown: str
    """The file as errors name it (the path given, or its name in a record)."""
    text: str
    layout: Layout
    provider: str | None = None
    """The provider a CSV prices (None for a quotes file: each offer names its own)."""
    as_of: dt.date | None = None
    """The date of a CSV's prices."""
    dated_by: str | None = None
    """Where ``as_of`` came from: :data:`BY_FLAG` or :data:`BY_MTIME`."""

    @property
    def name(self) -> str:
        """The file's name (``vms.csv``)."""
        return Path(self.shown).name

    def texts(self) -> dict[str, str]:
        """The catalog texts that stand for this file (hashed, cached, recorded)."""
        if self.layout == "quotes":
            return {QUOTES_TEXT: self.text}
        about = {"layout": "skypilot-vms-csv", "file": self.name, "provider": self.provider,
                 "as_of": self.as_of.isoformat() if self.as_of else None,
                 "dated_by": self.dated_by}
        return {CSV_TEXT: self.text, CSV_ABOUT: json.dumps(about, sort_keys=True)}

    @classmethod
    def from_texts(cls, texts: Mapping[str, str]) -> PriceInput | None:
        """The price file a stored catalog holds (None if it holds none)."""
        if CSV_ABOUT in texts and CSV_TEXT in texts:
            about: dict[str, Any] = json.loads(texts[CSV_ABOUT])
            return cls(shown=str(about["file"]), text=texts[CSV_TEXT], layout="skypilot",
                       provider=about["provider"], as_of=dt.date.fromisoformat(about["as_of"]),
                       dated_by=about["dated_by"])
        if QUOTES_TEXT not in texts:
            return None
        text = texts[QUOTES_TEXT]
        if _looks_like_skypilot(text):
            raise CatalogError("the record's price file is a SkyPilot CSV stored before its "
                               "provider and date were recorded; it cannot be replayed",
                               path="prices")
        return cls(shown="prices.yaml", text=text, layout="quotes")


def is_price_text(name: str) -> bool:
    """Whether a stored catalog text is a price file's (not a file of the catalog folder)."""
    return name in (QUOTES_TEXT, CSV_TEXT, CSV_ABOUT)


def read_prices(spec: Path, *, date: dt.date | None = None) -> PriceInput:
    """``--prices FILE`` (or ``PROVIDER=FILE``) read: its text, layout, provider and date."""
    path, provider = split_prices(spec)
    shown = str(path)
    layout: Layout = "skypilot" if path.suffix.lower() == ".csv" else "quotes"
    if layout == "quotes" and (provider is not None or date is not None):
        what = "PROVIDER=" if provider is not None else "--prices-date"
        raise CatalogError(f"{what} is for a SkyPilot vms.csv; a YAML quotes file names each "
                           "offer's provider and date (as_of)", path=shown)
    text = read_text(path)
    if layout == "quotes":
        return PriceInput(shown, text, layout)
    dated_by = BY_FLAG if date is not None else BY_MTIME
    return PriceInput(shown, text, layout, provider or _folder_name(path),
                      date or _modified(path), dated_by)


def split_prices(prices: Path) -> tuple[Path, str | None]:
    """``--prices`` as (file, provider): ``aws=vms.csv`` names the provider of a price file
    (when no file has that very name)."""
    if _exists(prices):
        return prices, None
    provider, sep, rest = str(prices).partition("=")
    if not sep or not _PROVIDER.fullmatch(provider):
        return prices, None
    return Path(rest), provider


def _exists(path: Path) -> bool:
    try:
        path.stat()
    except FileNotFoundError:
        return False
    except (OSError, ValueError) as exc:  # a name too long, a NUL byte, no permission
        if isinstance(exc, OSError) and exc.errno == errno.ENOTDIR:
            return False
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise InputError(f"cannot read ({reason})", path=str(path)) from None
    return True


def _folder_name(path: Path) -> str:
    """The provider a CSV's folder names (``aws/vms.csv`` → ``aws``)."""
    try:
        return path.resolve().parent.name
    except (OSError, RuntimeError) as exc:  # a link loop
        raise InputError(f"cannot read ({exc})", path=str(path)) from None


def _modified(path: Path) -> dt.date:
    try:
        return dt.date.fromtimestamp(path.stat().st_mtime)
    except (OSError, OverflowError, ValueError) as exc:
        raise InputError(f"cannot read its date ({exc}); give --prices-date", path=str(path)
                         ) from None


def _looks_like_skypilot(text: str) -> bool:
    first = text.lstrip("\ufeff").split("\n", 1)[0]
    return "InstanceType" in first and "," in first
