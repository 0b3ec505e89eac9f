"""One line on stderr for what a run noticed: skipped price rows, old prices, and the files
it created for the user (the audit store, the policy cache), the one time it creates them."""

from __future__ import annotations

import datetime as dt

import click

from engine.catalog.load import Catalog, stale_prices
from engine.files.printable import printable


def say_notices(catalog: Catalog) -> None:
    """Print the catalog's notices and, when prices are older than the policy allows, that;
    and where the policy cache is, when this run created it."""
    stale = stale_prices(catalog, dt.date.today())
    for notice in (*catalog.notices, *([stale] if stale else [])):  # names from price files
        click.echo(f"note: {printable(notice)}", err=True)
    say_new_cache()


def say_new_store(path: object) -> None:
    """Where the audit store this run created is (later runs find it and say nothing)."""
    click.echo(f"note: created the audit store {path}; every recommendation is recorded there "
               "(--no-audit to skip, --audit-db or GPU_ADVISOR_AUDIT_DB to move it)", err=True)


def say_new_cache() -> None:
    """Where the policy cache is, when this process created its folder."""
    from engine.decide.policy_cache import cache_dir
    from engine.files.private import created_here

    path = cache_dir()
    if created_here(path):
        click.echo(f"note: created the policy cache {path} (safe to delete; "
                   "GPU_ADVISOR_NO_CACHE=1 turns it off, GPU_ADVISOR_CACHE_DIR moves it)",
                   err=True)
