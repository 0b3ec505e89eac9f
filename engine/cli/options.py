"""Shared click options, each defined once and stacked as decorators."""

from __future__ import annotations

import errno
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])

_UNUSABLE = (errno.ENAMETOOLONG, errno.ELOOP, errno.EILSEQ)
"""What makes a path unusable whatever is done with it (a missing file is the loader's to
say, with its own words)."""


class InputPath(click.ParamType):  # type: ignore[type-arg]
    """A path flag, checked once when the flags are read: a path that no call could use (a
    component over the system's name limit, a link loop, a NUL byte) is one line naming the
    flag, exit 2, never an ``OSError`` traceback from whichever call meets it first."""

    name = "path"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        path = Path(value)
        flag = param.opts[0] if param is not None and param.opts else None
        problem = path_problem(path)
        if problem is not None:
            from engine.errors import InputError

            raise InputError(f"{_shown(str(path))}: {problem}", field=flag)
        return path


def path_problem(path: Path) -> str | None:
    """Why ``path`` cannot be used at all (None: it can, or it is simply missing)."""
    try:
        os.lstat(path)
    except ValueError:
        return "a path cannot hold a NUL byte"
    except OSError as exc:
        if exc.errno in _UNUSABLE:
            return f"cannot use this path ({exc.strerror})"
    return None


def _shown(text: str, most: int = 120) -> str:
    """A path as an error line quotes it: at most ``most`` characters."""
    return text if len(text) <= most else f"{text[:most - 1]}…"


_path = InputPath()


class StoreLocation(InputPath):
    """``--audit-db``: a SQLite file path, or a ``postgresql://`` URL; a URL of any other
    scheme is refused in one line, never taken as a file name."""

    name = "path or URL"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        from engine.audit.location import DatabaseUrl, parse_location

        if isinstance(value, (Path, DatabaseUrl)):
            return value
        flag = param.opts[0] if param is not None and param.opts else "--audit-db"
        found = parse_location(str(value), flag)
        return found if isinstance(found, DatabaseUrl) else super().convert(value, param, ctx)


class FiniteFloatRange(click.FloatRange):
    """A float flag in a range, and finite: ``nan`` passes every comparison of a plain
    :class:`click.FloatRange`, so it is refused here first (``inf`` too, with one message)."""

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        number = click.FLOAT.convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return super().convert(number, param, ctx)


def finite_float(low: float | None = None, high: float | None = None) -> FiniteFloatRange:
    """The type of every float flag: ``type=finite_float(0, 5)``."""
    return FiniteFloatRange(min=low, max=high)


def catalog_option(func: F) -> F:
    """``--catalog DIR``."""
    return click.option(
        "--catalog", "catalog_dir", type=_path, default=None, metavar="DIR",
        help="Catalog directory to use instead of the bundled one.",
    )(func)


def catalog_options(func: F) -> F:
    """``--catalog DIR``, ``--prices FILE`` and ``--prices-date DATE``; the command gets the
    price file read (a :class:`~engine.catalog.prices.PriceInput`) as ``prices``."""
    func = click.option(
        "--prices-date", type=click.DateTime(["%Y-%m-%d"]), default=None, metavar="DATE",
        is_eager=True, expose_value=False, callback=_prices_date,
        help="The date of a --prices vms.csv's prices (YYYY-MM-DD; default: the file's "
             "modification time). Recorded with the file.",
    )(func)
    func = click.option(
        "--prices", type=_path, default=None, metavar="FILE", callback=_read_prices,
        help="Fresh prices: a YAML file of offers (and sources) that override the catalog's, "
             "or a SkyPilot catalog vms.csv whose offers replace its provider's (the "
             "provider is the file's folder, as in aws/vms.csv, or PROVIDER=FILE).",
    )(func)
    return catalog_option(func)


def _prices_date(ctx: click.Context, param: click.Parameter, value: Any) -> None:
    """Kept for ``--prices`` (eager: read before it)."""
    if value is not None:
        ctx.meta["gpu_advisor.prices_date"] = value.date()


def _read_prices(ctx: click.Context, param: click.Parameter, path: Path | None) -> Any:
    """The price file read once, with its provider and date, as the policy will hold it."""
    date = ctx.meta.get("gpu_advisor.prices_date")
    if path is None:
        if date is not None:
            raise click.BadParameter("--prices-date dates a --prices file; give one", ctx,
                                     param)
        return None
    from engine.catalog.prices import read_prices

    return read_prices(path, date=date)


def rules_option(func: F) -> F:
    """``--rules DIR``."""
    return click.option(
        "--rules", "rules_dir", type=_path, default=None, metavar="DIR",
        help="Rule directory to use instead of the bundled one.",
    )(func)


def audit_db_option(func: F) -> F:
    """``--audit-db PATH`` (or the environment, else the user data directory)."""
    return click.option(
        "--audit-db", type=StoreLocation(), default=None, metavar="PATH|URL",
        envvar="GPU_ADVISOR_AUDIT_DB",
        help="Audit store: a SQLite file, or postgresql://USER@HOST/DB for an organisation's "
             "[env: GPU_ADVISOR_AUDIT_DB; default: a file in the user data directory].",
    )(func)


def audit_options(func: F) -> F:
    """``--audit-db PATH`` and ``--no-audit``."""
    func = click.option(
        "--no-audit", is_flag=True, default=False, help="Do not record this decision.",
    )(func)
    return audit_db_option(func)


def explain_options(func: F) -> F:
    """``--explain``/``-v`` (the full text output instead of the one-screen answer) and
    ``--no-pager``."""
    func = click.option("--no-pager", "no_pager", is_flag=True,
                        help="Never page the text output (also NO_PAGER).")(func)
    return click.option("--explain", "-v", "explain", is_flag=True,
                        help="The full explanation: every decision with its reasons and "
                             "sources, the hardware table, warnings, strategies, the "
                             "chart.")(func)


def trace_option(help_text: str) -> Callable[[F], F]:
    """``--trace``: the decision with every trace (``show_trace``)."""
    def decorate(func: F) -> F:
        return click.option("--trace", "show_trace", is_flag=True, help=help_text)(func)
    return decorate


def scenarios_option(func: F) -> F:
    """``--scenarios PATH`` (repeatable)."""
    return click.option(
        "--scenarios", "scenario_paths_", multiple=True, type=_path,
        help="Scenario files or directories (default: tests/scenarios, if present).",
    )(func)


def gpu_choice(*, required: bool, help_text: str) -> Callable[[F], F]:
    """``--gpu ID``: a catalog GPU id, required or a filter."""
    def decorate(func: F) -> F:
        return click.option("--gpu", "gpu_id", required=required, metavar="ID",
                            help=help_text)(func)
    return decorate


gpu_option = gpu_choice(required=True, help_text="A catalog GPU id.")
"""``--gpu ID`` (required)."""


def strict_option(help_text: str) -> Callable[[F], F]:
    """``--strict``: exit 1 when the check finds what it warns about."""
    def decorate(func: F) -> F:
        return click.option("--strict", is_flag=True, help=help_text)(func)
    return decorate


def gpus_option(help_text: str, *, most: int = 100_000) -> Callable[[F], F]:
    """``--gpus N``: how many GPUs (1 by default, at most ``most``)."""
    def decorate(func: F) -> F:
        return click.option("--gpus", type=click.IntRange(1, most), default=1,
                            show_default=True, help=help_text)(func)
    return decorate


def format_option(*choices: str) -> Callable[[F], F]:
    """``--format`` limited to ``choices`` (the first is the default)."""
    def decorate(func: F) -> F:
        return click.option(
            "--format", "fmt", type=click.Choice(choices), default=choices[0],
            show_default=True, help="Output format.",
        )(func)
    return decorate


def model_options(func: F) -> F:
    """``--model ID`` / ``--params-b N`` (one of them)."""
    func = click.option(
        "--params-b", type=finite_float(0.001, 5000), default=None, metavar="N",
        help="Model size in billions of parameters (shape from the nearest catalog model).",
    )(func)
    return model_reference_option()(func)


def model_reference_option(name: str = "model_id", *, more_help: str = "",
                           **settings: Any) -> Callable[[F], F]:
    """``--model ID|PATH``: a catalog id, a model's config.json (or its folder) or a Hub id,
    given to the command as ``name``."""
    def decorate(func: F) -> F:
        return click.option("--model", name, default=None, metavar="ID|PATH",
                            help=MODEL_REFERENCE_HELP + more_help, **settings)(func)
    return decorate


MODEL_REFERENCE_HELP = ("A catalog model id, a Hugging Face config.json (or a folder holding "
                        "one), or a Hub id such as meta-llama/Llama-3.1-8B (needs a network; "
                        "HF_TOKEN for a gated model). Its shape is kept in the answers.")


def answers_options(*, required: bool = False, model: bool = False,
                    answers_help: str = "Answers file (YAML or JSON); see examples/.",
                    set_help: str = "Override one answer (repeatable); wins over the file."
                    ) -> Callable[[F], F]:
    """``--answers FILE`` and ``--set KEY=VALUE`` (repeatable); with ``model``, also
    ``--model ID|PATH`` (given to the command as ``model_reference``), which names the model
    in place of the file's (``--set model=`` with it is refused)."""
    def decorate(func: F) -> F:
        if model:
            func = model_reference_option(
                "model_reference", more_help=" Replaces the file's model.", is_eager=True,
                callback=_model_override)(func)
        func = click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
                            help=set_help, callback=_with_model_override)(func)
        return click.option("--answers", "answers_path", type=_path, default=None,
                            required=required, metavar="FILE", help=answers_help)(func)
    return decorate


def _model_override(ctx: click.Context, param: click.Parameter,
                    value: str | None) -> str | None:
    """Noted for ``--set`` (eager: read before it, wherever it stands on the line). Its
    config is read where the answers are (``engine.answers.model.load_answers``)."""
    if value is not None:
        ctx.meta["gpu_advisor.model"] = value
    return value


def _with_model_override(ctx: click.Context, param: click.Parameter,
                         overrides: tuple[str, ...]) -> tuple[str, ...]:
    """``--set model=`` (or ``model_params_b=``, ``model_shape=``) beside ``--model`` is
    refused: one flag names the model."""
    if ctx.meta.get("gpu_advisor.model") is None:
        return overrides
    if any(item.strip().startswith(("model=", "model_params_b=", "model_shape="))
           for item in overrides):
        raise click.BadParameter("--model names the model; do not also give --set model= "
                                 "or --set model_params_b=", ctx, param)
    return overrides


def force_option(help_text: str) -> Callable[[F], F]:
    """``--force``: replace an existing file the command writes. Eager, so that the checks
    of output flags made while the flags are read (``--chart``) know it."""
    def decorate(func: F) -> F:
        return click.option("--force", is_flag=True, is_eager=True, help=help_text)(func)
    return decorate


def html_option(func: F) -> F:
    """``--html FILE``: also write the decision as one self-contained HTML page (checked when
    the flags are read, as ``--chart`` is)."""
    return click.option(
        "--html", "html_path", type=_path, default=None, metavar="FILE",
        callback=_html_target, help="Also write the decision as a self-contained HTML page.",
    )(func)


def _html_target(ctx: click.Context, param: click.Parameter, path: Path | None) -> Path | None:
    if path is not None:
        from engine.files.safe_write import check_target

        check_target(path, force=bool(ctx.params.get("force")), field="--html")
    return path


def chart_option(func: F) -> F:
    """``--chart FILE``, checked when the flags are read: before anything runs or prints."""
    return click.option(
        "--chart", "chart_path", type=_path, default=None, metavar="FILE",
        callback=_chart_target, help="Also write the owning-vs-renting chart (.svg or .png).",
    )(func)


def _chart_target(ctx: click.Context, param: click.Parameter, path: Path | None) -> Path | None:
    """A ``--chart`` target the renderer can write, or an InputError naming why not."""
    if path is not None:
        from engine.output.chart import check_chart_path

        check_chart_path(path, force=bool(ctx.params.get("force")))
    return path
