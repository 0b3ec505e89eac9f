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

Layout = Literal["quotes", "skypilot", "gpuhunt"]
CSV_LAYOUTS = {"skypilot": "skypilot-vms-csv", "gpuhunt": "gpuhunt-csv"}
"""The CSV layouts, by the name a record's ``prices.json`` gives each."""
QUOTES_TEXT, QUOTES_ABOUT = "prices", "prices.about.json"
"""The catalog texts of a YAML quotes file: its text (its name since the first records), and
its file name (records from before the name was kept have none)."""
CSV_TEXT, CSV_ABOUT = "prices.csv", "prices.json"
"""The catalog texts of a SkyPilot CSV: its bytes, and what it is (provider, date, layout)."""
BY_FLAG, BY_MTIME = "--prices-date", "the file's modification time"
BY_VERSION = "the gpuhunt catalog version"
GPUHUNT_PREFIX = "gpuhunt:"
"""``--prices gpuhunt:FILE.csv`` names the layout outright (else the header tells)."""
_VERSION = re.compile(r"^(\d{4})(\d{2})(\d{2})(-\d+)?$")
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

    @property
    def sha256(self) -> str:
        """The hash of the file's text (what a record keeps to show which file it was)."""
        import hashlib

        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    def texts(self) -> dict[str, str]:
        """The catalog texts that stand for this file (hashed, cached, recorded)."""
        if self.layout == "quotes":
            return {QUOTES_TEXT: self.text,
                    QUOTES_ABOUT: json.dumps({"file": self.name}, sort_keys=True)}
        about = {"layout": CSV_LAYOUTS[self.layout], "file": self.name,
                 "provider": self.provider,
                 "as_of": self.as_of.isoformat() if self.as_of else None,
                 "dated_by": self.dated_by}
        return {CSV_TEXT: self.text, CSV_ABOUT: json.dumps(about, sort_keys=True)}

    @classmethod
    def from_texts(cls, texts: Mapping[str, str]) -> PriceInput | None:
        """The price file a stored catalog holds (None if it holds none)."""
        if CSV_ABOUT in texts and CSV_TEXT in texts:
            about: dict[str, Any] = json.loads(texts[CSV_ABOUT])
            layout: Layout = "gpuhunt" if about.get("layout") == CSV_LAYOUTS["gpuhunt"] \
                else "skypilot"
            return cls(shown=str(about["file"]), text=texts[CSV_TEXT], layout=layout,
                       provider=about["provider"], as_of=dt.date.fromisoformat(about["as_of"]),
                       dated_by=about["dated_by"])
        if QUOTES_TEXT not in texts:
            return None
        text = texts[QUOTES_TEXT]
        if _looks_like_skypilot(text):
            raise CatalogError("the record's price file is a SkyPilot CSV stored before its "
                               "provider and date were recorded; it cannot be replayed",
                               path="prices")
        name = json.loads(texts[QUOTES_ABOUT])["file"] if QUOTES_ABOUT in texts else "prices.yaml"
        return cls(shown=str(name), text=text, layout="quotes")


@dataclass(frozen=True)
class PriceChange:
    """What one price file changed in the catalog: said in the output, kept in the record."""

    file: str
    """The file as given (for messages; a record keeps its name: it replays anywhere)."""
    name: str
    layout: str
    provider: str | None
    as_of: str | None
    dated_by: str | None
    sha256: str
    offers: int
    replaced: int
    added: int
    skipped_rows: int

    def record(self) -> dict[str, Any]:
        """The JSON a decision and its audit record keep of it (the file by name)."""
        return {"file": self.name, "layout": self.layout, "provider": self.provider,
                "as_of": self.as_of, "dated_by": self.dated_by, "sha256": self.sha256,
                "offers": self.offers, "replaced": self.replaced, "added": self.added,
                "skipped_rows": self.skipped_rows}


def is_price_text(name: str) -> bool:
    """Whether a stored catalog text is a price file's (not a file of the catalog folder)."""
    return name in (QUOTES_TEXT, QUOTES_ABOUT, CSV_TEXT, CSV_ABOUT)


def read_prices(spec: Path, *, date: dt.date | None = None) -> PriceInput:
    """``--prices FILE`` (``PROVIDER=FILE``, ``gpuhunt:FILE``) read: its text, layout,
    provider and date.

    A CSV is a SkyPilot ``vms.csv`` or one of gpuhunt's per-provider files, told apart by its
    header (or by ``gpuhunt:``). A SkyPilot file's provider is its folder's name, a gpuhunt
    file's its own name (``lambdalabs.csv``), unless ``PROVIDER=`` says; its date is
    ``--prices-date``, else (gpuhunt) the catalog's ``version`` file beside it
    (``YYYYMMDD-N``), else the file's modification time, and the record says which.
    """
    forced = str(spec).startswith(GPUHUNT_PREFIX)
    path, provider = split_prices(Path(str(spec).removeprefix(GPUHUNT_PREFIX)))
    shown = str(path)
    csv_file = forced or path.suffix.lower() == ".csv"
    if not csv_file and (provider is not None or date is not None):
        what = "PROVIDER=" if provider is not None else "--prices-date"
        raise CatalogError(f"{what} is for a price CSV (SkyPilot or gpuhunt); a YAML quotes "
                           "file names each offer's provider and date (as_of)", path=shown)
    text = read_text(path)
    if not csv_file:
        return PriceInput(shown, text, "quotes")
    if forced or _looks_like_gpuhunt(text):
        version = _version_date(path) if date is None else None
        return PriceInput(shown, text, "gpuhunt", provider or path.stem,
                          date or (version or _modified(path)),
                          BY_FLAG if date is not None else BY_VERSION if version else BY_MTIME)
    dated_by = BY_FLAG if date is not None else BY_MTIME
    return PriceInput(shown, text, "skypilot", provider or _folder_name(path),
                      date or _modified(path), dated_by)


def _version_date(path: Path) -> dt.date | None:
    """The date of a gpuhunt catalog's ``version`` file beside the CSV (``20261130-1``)."""
    version = path.parent / "version"
    if not version.is_file():
        return None
    first = read_text(version).strip().split("\n", 1)[0].strip()
    found = _VERSION.match(first)
    if found is None:
        raise CatalogError(f"expected a gpuhunt catalog version YYYYMMDD-N, got {first[:40]!r}",
                           path=str(version), line=1)
    try:
        return dt.date(int(found[1]), int(found[2]), int(found[3]))
    except ValueError:
        raise CatalogError(f"{first[:40]!r} is not a date", path=str(version),
                           line=1) from None


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


def _looks_like_gpuhunt(text: str) -> bool:
    first = text.lstrip("\ufeff").split("\n", 1)[0]
    return "instance_name" in first and "gpu_name" in first


def _looks_like_skypilot(text: str) -> bool:
    first = text.lstrip("\ufeff").split("\n", 1)[0]
    return "InstanceType" in first and "," in first
