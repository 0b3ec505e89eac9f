"""One line on stderr for what loading the policy noticed (skipped price rows, old prices)."""

from __future__ import annotations

import datetime as dt

import click

from engine.catalog.load import Catalog, stale_prices


def say_notices(catalog: Catalog) -> None:
    """Print the catalog's notices and, when prices are older than the policy allows, that."""
    stale = stale_prices(catalog, dt.date.today())
    for notice in (*catalog.notices, *([stale] if stale else [])):
        click.echo(f"note: {notice}", err=True)
