"""``gpu-advisor audit list|show|replay|verify|export``: for auditors."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from engine.audit.location import Location
from engine.cli.options import (
    StoreLocation,
    audit_db_option,
    catalog_options,
    format_option,
    rules_option,
    trace_option,
)
from engine.errors import EngineError
from engine.files.printable import csv_cell, json_printable, printable
from engine.version import __version__

if TYPE_CHECKING:
    from engine.catalog.prices import PriceInput


def _path(option: Location | None) -> Location:
    from engine.audit.store import default_path

    return option or default_path()


def _store(option: Location | None):  # type: ignore[no-untyped-def]
    from engine.audit.store import AuditStore

    return AuditStore(_path(option), create=False)


@click.group()
def audit() -> None:
    """Inspect, replay and verify recorded recommendations."""


def _choice(value: str | None) -> tuple[str, str] | None:
    if value is None:
        return None
    axis, sep, option = value.partition("=")
    if not sep or not axis or not option:
        raise click.BadParameter(f"expected AXIS=OPTION, got '{value}'", param_hint="--choice")
    return axis, option


def _utc(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """An ISO date or date/time, as the records' time column writes it (refused otherwise)."""
    from engine.audit.store import utc_time

    return None if value is None else utc_time(value, f"--{param.name}")


@audit.command("list")
@audit_db_option
@click.option("--since", default=None, metavar="DATE", callback=_utc,
              help="From this UTC date/time (ISO: 2026-11-01, 2026-11-01T14:30, or with an "
                   "offset such as +02:00).")
@click.option("--until", default=None, metavar="DATE", callback=_utc,
              help="Before this UTC date/time (ISO, as --since).")
@click.option("--choice", default=None, metavar="AXIS=OPTION", help="Only decisions with it.")
@click.option("--rule", default=None, metavar="RULE_ID", help="Only decisions this rule fired in.")
@click.option("--limit", type=click.IntRange(1, 1_000_000), default=None, help="At most N.")
@format_option("text", "json")
def list_(audit_db: Location | None, since: str | None, until: str | None, choice: str | None,
          rule: str | None, limit: int | None, fmt: str) -> None:
    """List recorded decisions, oldest first.

    \b
    Example:
      gpu-advisor audit list --since 2026-11-01 --choice deployment=local
    """
    from engine.audit.sqlite import store_exists

    path = _path(audit_db)
    wanted = _choice(choice)
    if isinstance(path, Path) and not store_exists(path):
        _say_nothing_recorded(path, fmt)
        return
    with _store(path) as store:
        if not store.count():
            _say_nothing_recorded(path, fmt)
            return
        records = store.entries(since=since, until=until, choice=wanted, rule=rule,
                                limit=limit)
        picks = [_pick(store, r.id) for r in records]
    if fmt == "json":
        click.echo(json.dumps([{**r.summary(), "pick": pick, "per_year_usd": cost}
                               for r, (pick, cost) in zip(records, picks, strict=True)],
                              indent=2))
        return
    from engine.files.printable import printable
    from engine.rules.declarations import always_applies, bundled_axes

    shown = always_applies(bundled_axes())
    lines = [f"{len(records)} decision(s): the pick, its cost a year for the team's work, "
             "and the choices"]
    for r, (pick, cost) in zip(records, picks, strict=True):  # stored text shown printable
        money = "" if cost is None else f", ${cost:,.0f} a year"
        lines += [printable(f"{r.id}  {r.created_at[:16].replace('T', ' ')}  "
                            f"{pick or 'no pick'}{money}"),
                  printable(f"    {_choices_text(r.choices_data, shown)}")]
    click.echo("\n".join(lines))  # nothing printed where a record cannot be read


def _pick(store: Any, decision_id: str) -> tuple[str | None, float | None]:
    """A recorded pick in words and its cost a year (None where it made none, or where its
    body cannot be read: ``audit verify`` says why; the list goes on)."""
    try:
        result = store.get(decision_id).result_data
    except EngineError:
        return "unreadable (see audit verify)", None
    choice = result.get("hardware", {}).get("choice")
    if not isinstance(choice, dict):
        return None, None
    from engine.decide.decision import to_buy
    bought = to_buy(bool(choice.get("used")))
    where = ("yours" if choice.get("owned") else bought) if choice.get("where") == "local" \
        else f"{choice.get('provider_label')} {choice.get('pricing')}"
    cost = (choice.get("cost") or {}).get("per_year_usd")
    pick = f"{choice.get('count')}× {choice.get('gpu_label')}, {where}"
    owned = result.get("estimates", {}).get("owned_options") or {}
    from engine.decide.owned_options import own_usd_per_year, picked_split

    peaks = picked_split(owned) if isinstance(owned, dict) else None
    if peaks is not None and isinstance(cost, (int, float)):
        # the team's own GPUs on most of the work, the pick rented for the rest
        name = result.get("facts", {}).get("owned_gpu_name") or owned.get("gpu")
        rest = "the other jobs" if peaks["option"] == "jobs" else "the peaks"
        pick = f"your {owned.get('count')}× {name} + {pick} for {rest}"
        cost += own_usd_per_year(peaks)
    return pick, float(cost) if isinstance(cost, (int, float)) else None


def _say_nothing_recorded(path: Location, fmt: str) -> None:
    """An empty list: ``[]`` for JSON, a sentence naming the store for a person."""
    if fmt == "json":
        click.echo("[]")
    else:
        click.echo(f"no decisions recorded yet (store: {path})")


def _choices_text(choices: dict[str, Any], axes: list[str]) -> str:
    """``approach=fine-tune method=lora …`` for these axes, as recorded."""
    return " ".join(f"{axis}={choices[axis]}" for axis in axes if axis in choices)


@audit.command("show")
@click.argument("decision_id", metavar="ID")
@audit_db_option
@trace_option("Rebuild the full trace by replaying the record on its stored policy.")
@format_option("text", "json", "markdown")
def show(decision_id: str, audit_db: Location | None, show_trace: bool, fmt: str) -> None:
    """Show one recorded decision as `recommend` rendered it, with its policy hashes.

    With --trace, as `recommend --trace` rendered it: the record holds the lean decision, and
    the traces are rebuilt by replaying it on its stored policy (a note on stderr if that
    replay no longer gives the recorded decision).

    \b
    Example:
      gpu-advisor audit show 3f9c2a
      gpu-advisor audit show 3f9c2a --trace --format json
    """
    from engine.audit.replay import NotReplayable, recorded_decision, stored_engine
    from engine.cli.emit import platform_names
    from engine.decide.engine import load_engine

    with _store(audit_db) as store:
        record = store.get(decision_id)
        if show_trace:
            _show_traced(store, record, fmt)
            return
        if fmt == "json":
            click.echo(json_printable(record.result), nl=False)
            return
        decision = recorded_decision(record)
        try:
            engine = stored_engine(store, record)
        except NotReplayable as exc:  # the record is shown; its rule texts are today's
            click.echo(f"note: {printable(str(exc))}; shown with today's rule texts",
                       err=True)
            engine = load_engine()
    book, platforms = engine.rulebook, platform_names(engine)
    header = _header(record)
    if fmt == "markdown":
        from engine.output.markdown import render_markdown

        click.echo(f"<!-- {header} -->\n" + render_markdown(decision, book, platforms),
                   nl=False)
        return
    from engine.cli.pager import show
    from engine.output.text import render_text

    show(render_text(decision, book, platforms) + header + "\n")


def _header(record: Any) -> str:
    return printable(f"recorded {record.created_at} UTC · engine {record.engine_version} · "
                     f"rules {record.rules_hash} · catalog {record.catalog_hash} · hash "
                     f"{record.hash}")


def _show_traced(store: Any, record: Any, fmt: str) -> None:
    """``audit show --trace``: the record replayed with every trace, rendered like
    ``recommend --trace``."""
    from engine.audit.replay import traced_replay
    from engine.cli.emit import emit_traced

    replay = traced_replay(store, record)
    if not replay.identical:
        click.echo(f"note: {printable(record.id)}: replayed on its stored policy, the "
                   "decision differs from the record (see `audit replay`); the trace shown is "
                   "the replay's", err=True)
    emit_traced(replay.evaluation, replay.engine, fmt)
    if fmt != "json":
        click.echo(_header(record))


@audit.command("replay")
@click.argument("decision_id", metavar="ID")
@audit_db_option
@click.option("--current", is_flag=True, help="Re-run on today's policy and show what changed.")
@rules_option
@catalog_options
@format_option("text", "json")
def replay(decision_id: str, audit_db: Location | None, current: bool, rules_dir: Path | None,
           catalog_dir: Path | None, prices: PriceInput | None, fmt: str) -> None:
    """Re-run a recorded decision: exactly on its stored policy, or on today's (--current).

    Exit 1 if the stored-policy replay does not reproduce the record byte for byte.

    \b
    Example:
      gpu-advisor audit replay 3f9c2a
      gpu-advisor audit replay 3f9c2a --current
    """
    from engine.audit.replay import replay_current, replay_stored

    with _store(audit_db) as store:
        record = store.get(decision_id)
        if not current:
            outcome = replay_stored(store, record)
            if fmt == "json":
                click.echo(json.dumps({"id": record.id, "identical": outcome.identical,
                                       "diff": outcome.diff}, indent=2))
            elif outcome.identical:
                click.echo(printable(f"{record.id}: replayed on its stored policy "
                                     f"(rules {record.rules_hash[:12]}, catalog "
                                     f"{record.catalog_hash[:12]}): identical"))
            else:
                click.echo(f"{printable(record.id)}: replay DIFFERS from the record:")
                if record.engine_version != __version__:
                    click.echo(printable(f"(recorded by engine {record.engine_version}, "
                                         f"replayed by {__version__}: the engine's own "
                                         "changes show here too)"))
                click.echo("\n".join(printable(line) for line in outcome.diff[:80]))
            sys.exit(0 if outcome.identical else 1)
        from engine.decide.engine import load_engine

        result = replay_current(store, record, load_engine(rules_dir, catalog_dir, prices))
    if fmt == "json":
        click.echo(json.dumps({
            "id": record.id,
            "changes": [c.__dict__ for c in result.changes],
            "hardware": {"before": result.hardware_before, "after": result.hardware_after},
            "rules_added": result.rules_added, "rules_removed": result.rules_removed,
            "rules_edited": result.rules_edited}, indent=2))
        return
    if not result.changes and result.hardware_before == result.hardware_after:
        click.echo(f"{printable(record.id)}: today's policy gives the same decisions.")
    for change in result.changes:  # the "before" side is the record's
        click.echo(printable(f"{change.axis}: {change.before} → {change.after}"
                             + (f" (rules: {', '.join(change.rules)})" if change.rules else "")))
    if result.hardware_before != result.hardware_after:
        click.echo(printable(f"hardware: {result.hardware_before} → {result.hardware_after}"))
    for label, ids in (("added", result.rules_added), ("removed", result.rules_removed),
                       ("edited", result.rules_edited)):
        if ids:
            click.echo(printable(f"rules {label} since the record: {', '.join(ids)}"))


def _head(ctx: click.Context, param: click.Parameter, value: str | None) -> Any:
    if value is None:
        return None
    from engine.audit.chain import Head
    from engine.errors import InputError

    try:
        return Head.parse(value)
    except InputError as exc:
        raise click.BadParameter(exc.message) from None


@audit.command("verify")
@audit_db_option
@click.option("--since", callback=_head, default=None, metavar="HEAD",
              help="A head printed by an earlier verify (COUNT:HASH, kept elsewhere): fail "
                   "unless it is still in the chain.")
@click.option("--key-file", type=click.Path(path_type=Path), default=None, metavar="FILE",
              help="The audit key, to check keyed records [env: GPU_ADVISOR_AUDIT_KEY, "
                   "GPU_ADVISOR_AUDIT_KEY_FILE].")
def verify(audit_db: Location | None, since: Any, key_file: Path | None) -> None:
    """Walk the hash chain and print its head (COUNT:HASH) to keep elsewhere.

    Exit 0 when every record checks out; 1 naming the first broken record, or when the
    head given with --since is gone (truncated) or has another hash (rewritten); 2 when the
    store holds keyed records and no key is given (their MACs cannot be checked).

    \b
    Example:
      gpu-advisor audit verify
      gpu-advisor audit verify --since 1234:9f86d081884c7d65a1b2c3d4e5f60718
    """
    from engine.audit.chain import verify as walk
    from engine.audit.key import load_key
    from engine.audit.store import AuditError

    key = load_key(key_file)
    with _store(audit_db) as store:
        result = walk(store, key=key, since=since)
    if not result.ok:  # one line, data in it escaped (Verification.line): it cannot be repainted
        click.echo(result.line(), err=True)
        sys.exit(1)
    if not result.complete:
        raise AuditError(f"{store.path}: {result.line()}")
    click.echo(result.line())


@audit.command("copy")
@click.option("--from", "source", type=StoreLocation(), required=True, metavar="PATH|URL",
              help="The store to copy from (e.g. a person's SQLite file).")
@click.option("--to", "destination", type=StoreLocation(), required=True, metavar="PATH|URL",
              help="The store to copy into (e.g. postgresql://USER@HOST/DB).")
@click.option("--append", is_flag=True, default=False,
              help="Where the destination holds another chain, add the records at its end "
                   "with new links (each checked against the source now).")
def copy(source: Location, destination: Location, append: bool) -> None:
    """Copy every record of one store into another, still verifiable.

    The source must verify. Into an empty store the records go as they are (ids, times,
    links, hashes, keys), in one transaction, so the copy verifies against the source's
    head; running the copy again adds nothing.

    \b
    Example:
      gpu-advisor audit copy --from ~/.local/share/gpu-advisor/audit.sqlite3 \\
          --to postgresql://gpu_writer@db.example/audit
    """
    from engine.audit.copy import copy_store

    click.echo(printable(copy_store(source, destination, append=append).line()))


@audit.command("export")
@audit_db_option
@format_option("jsonl", "csv")
def export(audit_db: Location | None, fmt: str) -> None:
    """Export every record (JSON lines with the full result, or a CSV summary).

    \b
    Example:
      gpu-advisor audit export --format csv > decisions.csv
    """
    with _store(audit_db) as store:
        if fmt == "jsonl":
            for r in store.iter_all():
                line = json.dumps({**r.__dict__, "answers": r.answers_data,
                                   "result": r.result_data, "choices": r.choices_data,
                                   "rules_fired": r.rules_fired_data}, ensure_ascii=False)
                click.echo(json_printable(line))
            return
        from engine.rules.declarations import bundled_axes

        writer = csv.writer(sys.stdout)
        axes = list(bundled_axes())
        writer.writerow(["seq", "id", "created_at", "engine_version", "rules_hash",
                         "catalog_hash", *axes, "hardware", "hash", "prev_hash"])
        for r in store.iter_all():
            choices = r.choices_data
            writer.writerow([csv_cell(cell) for cell in (
                r.seq, r.id, r.created_at, r.engine_version, r.rules_hash, r.catalog_hash,
                *(choices.get(a) for a in axes), _hardware_id(r), r.hash, r.prev_hash)])


def _hardware_id(record: Any) -> object:
    """The id of a record's pick ("" when it has none)."""
    from engine.audit.store import AuditError

    try:
        choice = record.result_data["hardware"]["choice"]
        return choice["id"] if choice else ""
    except (KeyError, TypeError) as exc:
        raise AuditError(f"record {record.id} cannot be read: its result has no hardware "
                         f"choice ({exc}); run `gpu-advisor audit verify`") from None
