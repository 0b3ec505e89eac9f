"""Bad input that is not a bad file body: special files, links inside policy folders, the
``--chart`` target, float flags, a leading BOM, escaped control characters in printed errors
and answers that name no model. Every refusal is one ``error:`` line, exit 2, nothing on
stdout and nothing recorded.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from click.types import FloatParamType

from engine.cli import cli
from engine.cli.options import FiniteFloatRange
from engine.resources import bundled_dir

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "startup-7b-continuous.yaml"
LINK_REFUSED = "is a symbolic link; links inside a rule or catalog folder are not followed"


def one_error_line(result: click.testing.Result) -> str:
    """The single stderr line of a refused run (exit 2, nothing on stdout)."""
    assert result.exit_code == 2, (result.exit_code, result.stdout[:300], result.stderr)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


@pytest.fixture
def rules_copy(tmp_path: Path) -> Path:
    target = tmp_path / "rules"
    shutil.copytree(bundled_dir("rules"), target)
    return target


# -- special files: refused before anything can block --------------------------------------
def _role_args(role: str, path: Path, rules: Path, catalog: Path) -> tuple[list[str], Path]:
    """The recommend arguments that make ``path`` (or a copy placed in a folder) be read."""
    if role == "answers":
        return ["--answers", str(path)], path
    if role == "prices":
        return ["--answers", str(EXAMPLE), "--prices", str(path)], path
    if role == "rules":
        target = rules / "zz-special.yaml"
        return ["--answers", str(EXAMPLE), "--rules", str(rules)], target
    target = catalog / "gpus.yaml"
    return ["--answers", str(EXAMPLE), "--catalog", str(catalog)], target


@pytest.mark.slow
@pytest.mark.parametrize("role", ["answers", "prices", "rules", "catalog"])
def test_a_fifo_without_writer_is_refused_not_waited_for(
        role: str, tmp_path: Path, rules_copy: Path, catalog_copy: Path) -> None:
    """In a real process: before the fix, open() blocked forever on a FIFO with no writer."""
    fifo = tmp_path / "answers.yaml"
    args, named = _role_args(role, fifo, rules_copy, catalog_copy)
    if named != fifo:
        named.unlink(missing_ok=True)
        fifo = named
    os.mkfifo(fifo)
    env = {**os.environ, "GPU_ADVISOR_AUDIT_DB": str(tmp_path / "audit.sqlite3")}
    done = subprocess.run([sys.executable, "-m", "engine", "recommend", *args],
                          capture_output=True, text=True, timeout=60, env=env, check=False)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"error: {fifo}: is a FIFO (named pipe), expected a regular file\n"
    assert not (tmp_path / "audit.sqlite3").exists()


@pytest.mark.slow
def test_a_fifo_added_after_a_cached_build_is_refused(tmp_path: Path, rules_copy: Path) -> None:
    """The cache key counts links and special files in a folder by kind: adding one after
    the policy was cached misses the cache, so the loader refuses it as on a cold run."""
    env = {**os.environ, "GPU_ADVISOR_CACHE_DIR": str(tmp_path / "cache"),
           "GPU_ADVISOR_NO_CACHE": ""}
    args = [sys.executable, "-m", "engine", "recommend", "--no-audit", "--answers",
            str(EXAMPLE), "--rules", str(rules_copy), "--format", "json"]
    warm = subprocess.run(args, capture_output=True, text=True, timeout=120, env=env,
                          check=False)
    assert warm.returncode == 0, warm.stderr
    fifo = rules_copy / "zz-special.yaml"
    os.mkfifo(fifo)
    done = subprocess.run(args, capture_output=True, text=True, timeout=60, env=env,
                          check=False)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"error: {fifo}: is a FIFO (named pipe), expected a regular file\n"


def test_a_socket_is_refused(runner: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        line = one_error_line(runner.invoke(cli, ["recommend", "--answers", str(path)]))
    assert line == f"error: {path}: is a socket, expected a regular file"


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_a_device_is_refused_unread(runner: CliRunner) -> None:
    line = one_error_line(runner.invoke(cli, ["recommend", "--answers", "/dev/zero"]))
    assert line == "error: /dev/zero: is a character device, expected a regular file"


def test_a_directory_is_refused(runner: CliRunner, tmp_path: Path) -> None:
    line = one_error_line(runner.invoke(cli, ["recommend", "--answers", str(tmp_path)]))
    assert line == f"error: {tmp_path}: is a directory, expected a file"


# -- links inside rule and catalog folders ---------------------------------------------------
@pytest.fixture
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "secret.txt"
    path.write_text("password: hunter2\n", encoding="utf-8")
    return path


@pytest.mark.slow
def test_a_link_inside_a_rule_folder_is_refused_unread(
        runner: CliRunner, rules_copy: Path, secret: Path, isolated_audit_store: Path) -> None:
    link = rules_copy / "zz-secret.yaml"
    link.symlink_to(secret)
    result = runner.invoke(cli, ["recommend", "--answers", str(EXAMPLE), "--rules",
                                 str(rules_copy)])
    assert one_error_line(result) == f"error: {link}: {LINK_REFUSED}"
    assert "hunter2" not in result.stderr and "password" not in result.stderr
    assert not isolated_audit_store.exists()


def test_a_dangling_link_inside_a_rule_folder_is_refused(runner: CliRunner,
                                                         rules_copy: Path) -> None:
    link = rules_copy / "zz-gone.yaml"
    link.symlink_to(rules_copy / "nowhere.yaml")
    result = runner.invoke(cli, ["rules", "check", "--rules", str(rules_copy)])
    assert result.exit_code == 2
    assert f"{link}: {LINK_REFUSED}" in result.stdout + result.stderr


def test_a_link_inside_a_catalog_folder_is_refused_unread(
        runner: CliRunner, catalog_copy: Path, secret: Path) -> None:
    link = catalog_copy / "gpus.yaml"
    link.unlink()
    link.symlink_to(secret)
    result = runner.invoke(cli, ["recommend", "--answers", str(EXAMPLE), "--catalog",
                                 str(catalog_copy)])
    assert one_error_line(result) == f"error: {link}: {LINK_REFUSED}"


@pytest.mark.slow
def test_links_named_on_the_command_line_are_the_users_choice(
        runner: CliRunner, tmp_path: Path, rules_copy: Path, catalog_copy: Path) -> None:
    answers = tmp_path / "answers-link.yaml"
    answers.symlink_to(EXAMPLE)
    rules = tmp_path / "rules-link"
    rules.symlink_to(rules_copy, target_is_directory=True)
    catalog = tmp_path / "catalog-link"
    catalog.symlink_to(catalog_copy, target_is_directory=True)
    rule_file = tmp_path / "usage-link.yaml"
    rule_file.symlink_to(rules_copy / "usage.yaml")
    result = runner.invoke(cli, ["recommend", "--no-audit", "--answers", str(answers),
                                 "--rules", str(rules), "--catalog", str(catalog)])
    assert result.exit_code == 0, result.stderr
    result = runner.invoke(cli, ["rules", "check", "--rules", str(rule_file)])
    assert result.exit_code == 0, result.output


# -- --chart: checked with the flags, before anything runs -----------------------------------
def _chart_targets(tmp_path: Path) -> Iterator[tuple[str, str]]:
    (tmp_path / "folder.svg").mkdir()
    (tmp_path / "file").write_text("x", encoding="utf-8")
    os.mkfifo(tmp_path / "fifo.svg")
    yield "out.txt", "expected a .svg or .png file name"
    yield "missing/out.svg", f"folder {tmp_path / 'missing'} does not exist"
    yield "file/out.png", f"folder {tmp_path / 'file'} is not a folder"
    yield "folder.svg", "is a directory, not a regular file"
    yield "fifo.svg", "is a FIFO (named pipe), not a regular file"


@pytest.mark.parametrize("command", ["recommend", "ask"])
def test_a_bad_chart_target_is_refused_before_anything_is_printed_or_recorded(
        runner: CliRunner, tmp_path: Path, command: str, isolated_audit_store: Path) -> None:
    for name, problem in _chart_targets(tmp_path):
        target = tmp_path / name
        args = [command, "--answers", str(EXAMPLE), "--chart", str(target)]
        line = one_error_line(runner.invoke(cli, args))
        assert line == f"error: {target}: --chart: {problem}", line
    assert not isolated_audit_store.exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_an_unwritable_chart_folder_is_refused_first(runner: CliRunner, tmp_path: Path,
                                                     isolated_audit_store: Path) -> None:
    folder = tmp_path / "locked"
    folder.mkdir(mode=0o500)
    target = folder / "out.svg"
    line = one_error_line(runner.invoke(cli, ["recommend", "--answers", str(EXAMPLE),
                                              "--chart", str(target)]))
    assert line == f"error: {target}: --chart: cannot write in folder {folder} (Permission denied)"
    assert not isolated_audit_store.exists()


def test_an_unwritable_chart_folder_as_root_is_refused_first(
        runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        isolated_audit_store: Path) -> None:
    """The same check where the OS would let root write: the folder is proved writable by
    making a temporary file there, and here that is refused as the OS would refuse it."""
    from engine.files import safe_write

    folder = tmp_path / "locked"
    folder.mkdir()

    def refuse(*args: object) -> tuple[int, str]:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(safe_write, "_temporary", refuse)  # every temporary file is made here
    target = folder / "out.svg"
    line = one_error_line(runner.invoke(cli, ["recommend", "--answers", str(EXAMPLE),
                                              "--chart", str(target)]))
    assert line == f"error: {target}: --chart: cannot write in folder {folder} (Permission denied)"
    assert not isolated_audit_store.exists()


def test_a_chart_without_matplotlib_is_refused_first(runner: CliRunner, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "matplotlib" else real(name, *a))
    target = tmp_path / "out.png"
    line = one_error_line(runner.invoke(cli, ["recommend", "--answers", str(EXAMPLE),
                                              "--chart", str(target)]))
    assert line == f"error: {target}: --chart: needs matplotlib: pip install 'gpu-advisor[chart]'"


# -- float flags: nan and inf pass a plain click.FloatRange ----------------------------------
def _float_options() -> Iterator[tuple[str, click.Option]]:
    """(command path, option) for every float-typed option of every command."""
    ctx = click.Context(cli)
    stack: list[tuple[str, click.Command]] = [
        (name, command) for name in cli.list_commands(ctx)
        if (command := cli.get_command(ctx, name)) is not None]
    while stack:
        path, command = stack.pop()
        if isinstance(command, click.Group):
            stack.extend((f"{path} {name}", sub) for name, sub in command.commands.items())
        for param in command.params:
            if isinstance(param, click.Option) and isinstance(param.type, FloatParamType):
                yield path, param


def test_every_float_flag_is_finite() -> None:
    found = {f"{path} {option.opts[0]}": option for path, option in _float_options()}
    assert {"estimate memory --params-b", "estimate training --tokens-b",
            "estimate cost --hours-per-year", "estimate cost --electricity"} <= set(found)
    for name, option in found.items():
        assert isinstance(option.type, FiniteFloatRange), name


ESTIMATES = {
    "--params-b": ["estimate", "memory", "--method", "qlora"],
    "--tokens-b": ["estimate", "training", "--model", "llama-2-7b", "--gpu", "a100-80gb"],
    "--hours-per-year": ["estimate", "cost", "--gpu", "rtx-4090"],
    "--electricity": ["estimate", "cost", "--gpu", "rtx-4090", "--hours-per-year", "100"],
}


@pytest.mark.parametrize("flag", list(ESTIMATES))
@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "1e400"])
def test_nan_and_inf_flags_are_refused(runner: CliRunner, flag: str, value: str) -> None:
    line = one_error_line(runner.invoke(cli, [*ESTIMATES[flag], flag, value],
                                       prog_name="gpu-advisor"))
    command = " ".join(ESTIMATES[flag][:2])
    assert line == (f"error: Invalid value for '{flag}': '{value}' is not a finite number "
                    f"(see gpu-advisor {command} --help)")


def test_a_finite_flag_still_works(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["estimate", "memory", "--method", "qlora", "--params-b", "7",
                                 "--format", "json"])
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["gpus"] == 1


# -- one BOM rule: a leading UTF-8 BOM is accepted in YAML and JSON alike ----------------------
BOM = "\ufeff"


@pytest.mark.parametrize(("name", "text"), [
    ("answers.yaml", "model: llama-2-7b\nbudget_usd: 9000\nhours_per_year: 900\n"),
    ("answers.json", '{"model": "llama-2-7b", "budget_usd": 9000, "hours_per_year": 900}'),
])
def test_a_leading_bom_is_accepted_in_yaml_and_json(runner: CliRunner, tmp_path: Path,
                                                    name: str, text: str) -> None:
    plain, with_bom = tmp_path / f"plain-{name}", tmp_path / f"bom-{name}"
    plain.write_text(text, encoding="utf-8")
    with_bom.write_text(BOM + text, encoding="utf-8")
    outputs = []
    for path in (plain, with_bom):
        result = runner.invoke(cli, ["recommend", "--no-audit", "--answers", str(path),
                                     "--format", "json"])
        assert result.exit_code == 0, result.stderr
        outputs.append(json.loads(result.stdout)["answers"])
    assert outputs[0] == outputs[1]


def test_a_bom_elsewhere_in_json_is_an_error(runner: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "answers.json"
    path.write_text('{"model": "llama-2-7b",\n' + BOM + '"budget_usd": 1}', encoding="utf-8")
    line = one_error_line(runner.invoke(cli, ["recommend", "--answers", str(path)]))
    assert line.startswith(f"error: {path}:2: JSON error: "), line


@pytest.mark.slow
def test_a_bom_in_a_rule_and_a_catalog_file_is_accepted(runner: CliRunner, rules_copy: Path,
                                                        catalog_copy: Path) -> None:
    for path in (rules_copy / "usage.yaml", catalog_copy / "gpus.yaml"):
        path.write_text(BOM + path.read_text(encoding="utf-8"), encoding="utf-8")
    result = runner.invoke(cli, ["recommend", "--no-audit", "--answers", str(EXAMPLE),
                                 "--rules", str(rules_copy), "--catalog", str(catalog_copy)])
    assert result.exit_code == 0, result.stderr


# -- printed errors never carry a raw control character --------------------------------------
def test_control_characters_in_an_error_are_printed_escaped(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["recommend", "--set", "mo\x1b[2Jdel=x", "--set", "a=1"])
    line = one_error_line(result)
    assert line == ("error: --set: mo\\x1b[2Jdel: unknown answer; did you mean 'model'?")
    result = runner.invoke(cli, ["recommend", "--set", "model=\x1b]0;title\x07"])
    assert one_error_line(result) == "error: --set: model: control character U+001B is not allowed"


def test_rules_check_refuses_a_because_with_an_escaped_terminal_sequence(
        runner: CliRunner, rules_copy: Path) -> None:
    source = ROOT / "tests" / "bad_inputs" / "rule-escaped-control-because.yaml"
    target = rules_copy / "zz-because.yaml"
    shutil.copyfile(source, target)
    result = runner.invoke(cli, ["rules", "check", "--rules", str(rules_copy)])
    assert result.exit_code == 2
    assert (f"{target}:7: rules[zz.bad].because: control character U+001B is not allowed in "
            "a string (tab and line feed are)") in result.output
    assert "\x1b" not in result.output + result.stderr


# -- answers must name the model -------------------------------------------------------------
NO_MODEL = ("error: the answers name no model: give --set model=ID or --set model_params_b=N, "
            "or --answers FILE")


@pytest.mark.parametrize("args", [[], ["--set", "budget_usd=9000"]])
def test_recommend_without_a_model_is_refused(runner: CliRunner, args: list[str],
                                              isolated_audit_store: Path) -> None:
    assert one_error_line(runner.invoke(cli, ["recommend", *args])) == NO_MODEL
    assert not isolated_audit_store.exists()


@pytest.mark.slow
def test_an_empty_answers_file_is_refused_in_a_real_process(tmp_path: Path) -> None:
    path = tmp_path / "empty.yaml"
    path.write_text("", encoding="utf-8")
    env = {**os.environ, "GPU_ADVISOR_AUDIT_DB": str(tmp_path / "audit.sqlite3")}
    for command in ("recommend", "whatif"):
        done = subprocess.run([sys.executable, "-m", "engine", command, "--answers", str(path)],
                              capture_output=True, text=True, timeout=60, env=env, check=False)
        assert (done.returncode, done.stdout) == (2, "")
        assert done.stderr == f"error: {path}: names no model: give model or model_params_b\n"
    assert not (tmp_path / "audit.sqlite3").exists()


def test_ask_still_takes_defaults_when_asked_to(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["ask", "--defaults", "--set", "work_unknown=yes", "--no-audit",
                                 "--format", "json"])
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["answers"]["model"] == "llama-3.1-8b"
