"""Every command that writes a file, onto every kind of target it must not destroy.

Each writer goes through :mod:`engine.files.safe_write`. Here each command runs as a real
``python -m engine`` process onto a FIFO, a unix socket, a link to a character device, an
existing file (without ``--force``), a folder that cannot be written (its parent is a regular
file) and a name too long for the file system; ``rules schema --out DIR`` also onto a link
planted inside DIR. Each must end with one ``error:`` line naming the target (exit 2), print
nothing on stdout, record nothing, leave the target as it was and leave no temporary file.
"""

from __future__ import annotations

import contextlib
import os
import socket
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from engine.answers.answers_file import HEADER, write_answers
from engine.errors import InputError
from engine.files.safe_write import check_target, write_file

ROOT = Path(__file__).resolve().parent.parent
AXOLOTL = ROOT / "tests" / "fixtures" / "training" / "axolotl-llama-3-qlora.yml"
EXAMPLE = ROOT / "examples" / "startup-7b-continuous.yaml"
KEPT = b"hand-written, keep me\n"


def engine_process(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "engine", *args], capture_output=True,
                          text=True, cwd=ROOT, env=env, timeout=120, check=False)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "GPU_ADVISOR_AUDIT_DB": str(tmp_path / "store" / "audit.sqlite3"),
            "PYTHONDONTWRITEBYTECODE": "1"}


@pytest.fixture
def batch_input(tmp_path: Path) -> Path:
    path = tmp_path / "input" / "teams.jsonl"
    path.parent.mkdir()
    path.write_text('{"model": "mistral-7b", "hours_per_year": 800}\n')
    return path


# -- the commands: each takes the target and gives its arguments -------------------------------
def _ask_save(target: Path, _: Path) -> list[str]:
    return ["ask", "--defaults", "--set", "model=mistral-7b", "--set", "hours_per_year=800",
            "--save-answers", str(target)]


def _ask_chart(target: Path, _: Path) -> list[str]:
    return ["ask", "--defaults", "--set", "model=mistral-7b", "--set", "hours_per_year=800",
            "--chart", str(target)]


def _recommend_chart(target: Path, _: Path) -> list[str]:
    return ["recommend", "--answers", str(EXAMPLE), "--chart", str(target)]


def _import_out(target: Path, _: Path) -> list[str]:
    return ["import", "axolotl", str(AXOLOTL), "--out", str(target)]


def _batch_out(target: Path, batch_input: Path) -> list[str]:
    return ["batch", str(batch_input), "--out", str(target)]


def _schema_out(target: Path, _: Path) -> list[str]:
    """``rules schema rules --out DIR`` writes DIR/rules.schema.json: the target."""
    return ["rules", "schema", "rules", "--out", str(target.parent)]


COMMANDS: dict[str, tuple[Callable[[Path, Path], list[str]], str]] = {
    # name → (arguments, the target's file name: charts must end in .svg)
    "ask --save-answers": (_ask_save, "answers.yaml"),
    "ask --chart": (_ask_chart, "chart.svg"),
    "recommend --chart": (_recommend_chart, "chart.svg"),
    "import --out": (_import_out, "answers.yaml"),
    "batch --out": (_batch_out, "out.jsonl"),
    "rules schema --out": (_schema_out, "rules.schema.json"),
}


# -- the targets: each is made in a folder of its own ------------------------------------------
@dataclass
class Planted:
    path: Path
    """What the command is told to write (for schema: the file inside the folder)."""
    shown: Path
    """What the error line must name."""
    kind: str
    state: Callable[[], object]
    """The target's observable state, compared before and after."""


def _state_of(path: Path) -> Callable[[], object]:
    def state() -> object:
        info = os.lstat(path)
        body = path.read_bytes() if stat.S_ISREG(info.st_mode) else None
        link = path.readlink() if stat.S_ISLNK(info.st_mode) else None
        return stat.S_IFMT(info.st_mode), stat.S_IMODE(info.st_mode), info.st_ino, body, link
    return state


def _fifo(folder: Path, name: str) -> Planted:
    os.mkfifo(folder / name)
    return Planted(folder / name, folder / name, "a FIFO (named pipe)", _state_of(folder / name))


@contextlib.contextmanager
def _inside(folder: Path) -> Iterator[None]:
    """Work in ``folder`` (a unix socket's path must be short: bind a relative name)."""
    before = Path.cwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


_SOCKETS: list[socket.socket] = []


def _socket(folder: Path, name: str) -> Planted:
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with _inside(folder):
        server.bind(name)
    _SOCKETS.append(server)
    return Planted(folder / name, folder / name, "a socket", _state_of(folder / name))


def _device(folder: Path, name: str) -> Path:
    """A character device of this test's own (the null device's numbers), so that a writer
    that failed to refuse it would replace a node in the temporary folder, never the
    machine's /dev/null."""
    device = folder / f".device-{name}"
    try:
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except (OSError, AttributeError):  # pragma: no cover - not root, or no mknod
        pytest.skip("cannot make a device node here")
    return device


def _device_link(folder: Path, name: str) -> Planted:
    """A link the user names that leads to a character device: followed, and refused."""
    device = _device(folder, name)
    (folder / name).symlink_to(device)
    node, link = _state_of(device), _state_of(folder / name)
    return Planted(folder / name, folder / name, "a character device", lambda: (link(), node()))


def _device_itself(folder: Path, name: str) -> Planted:
    _device(folder, name).rename(folder / name)
    return Planted(folder / name, folder / name, "a character device", _state_of(folder / name))


def _existing(folder: Path, name: str) -> Planted:
    (folder / name).write_bytes(KEPT)
    (folder / name).chmod(0o600)
    return Planted(folder / name, folder / name, "already exists; give --force to replace it",
                   _state_of(folder / name))


def _parent_is_a_file(folder: Path, name: str) -> Planted:
    """A folder that cannot be written, even as root: it is a regular file."""
    (folder / "not-a-folder").write_bytes(KEPT)
    return Planted(folder / "not-a-folder" / name, folder / "not-a-folder", "is not a folder",
                   _state_of(folder / "not-a-folder"))


def _name_too_long(folder: Path, name: str) -> Planted:
    """A path whose folder's name is longer than a file name may be (255 bytes)."""
    # the path is refused where the flag is parsed, shown shortened: the folder it is in shows
    return Planted(folder / ("x" * 300) / name, folder, "File name too long",
                   lambda: sorted(folder.iterdir()))


TARGETS: dict[str, Callable[[Path, str], Planted]] = {
    "fifo": _fifo, "socket": _socket, "device": _device_itself, "device-link": _device_link,
    "existing": _existing,
    "parent-is-a-file": _parent_is_a_file, "name-too-long": _name_too_long,
}


EXPECTED = {("rules schema --out", "device-link"): "is a symbolic link inside"}
"""Where the refusal differs: a link inside a folder the command writes into is not followed
(a link the user named is, to a regular file only)."""


@pytest.fixture(autouse=True)
def _close_sockets() -> Iterator[None]:
    yield
    while _SOCKETS:
        _SOCKETS.pop().close()


def _refused(done: subprocess.CompletedProcess[str], shown: Path) -> str:
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 2, (done.returncode, done.stdout[:300], done.stderr)
    assert done.stdout == "", "printed before the target was refused"
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: ") and str(shown) in lines[0], lines[0]
    return lines[0]


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*.tmp"))


@pytest.mark.parametrize("target_kind", list(TARGETS))
@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_writer_refuses_every_bad_target(command: str, target_kind: str, tmp_path: Path,
                                               env: dict[str, str], batch_input: Path) -> None:
    arguments, name = COMMANDS[command]
    folder = tmp_path / "target"
    folder.mkdir()
    planted = TARGETS[target_kind](folder, name)
    before = planted.state()
    done = engine_process(*arguments(planted.path, batch_input), env=env)
    line = _refused(done, planted.shown)
    assert EXPECTED.get((command, target_kind), planted.kind) in line, line
    assert planted.state() == before
    assert _leftovers(tmp_path) == []
    assert not Path(env["GPU_ADVISOR_AUDIT_DB"]).exists(), "recorded a refused run"


def test_a_link_planted_inside_the_schema_folder_is_not_followed(
        tmp_path: Path, env: dict[str, str]) -> None:
    folder, secret = tmp_path / "schemas", tmp_path / "elsewhere.json"
    folder.mkdir()
    secret.write_bytes(KEPT)
    (folder / "rules.schema.json").symlink_to(secret)
    done = engine_process("rules", "schema", "--out", str(folder), "--force", env=env)
    line = _refused(done, folder / "rules.schema.json")
    assert f"is a symbolic link inside {folder}; links there are not followed" in line
    assert secret.read_bytes() == KEPT
    assert sorted(p.name for p in folder.iterdir()) == ["rules.schema.json"]  # none written


@pytest.mark.parametrize("command", list(COMMANDS))
def test_force_replaces_an_existing_file_and_keeps_its_mode(
        command: str, tmp_path: Path, env: dict[str, str], batch_input: Path) -> None:
    arguments, name = COMMANDS[command]
    target = tmp_path / "target" / name
    target.parent.mkdir()
    target.write_bytes(KEPT)
    target.chmod(0o600)
    done = engine_process(*arguments(target, batch_input), "--force", env=env)
    assert done.returncode == 0, done.stderr
    assert target.read_bytes() != KEPT
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert _leftovers(tmp_path) == []


def test_a_named_link_to_a_regular_file_is_followed_and_kept(tmp_path: Path,
                                                              env: dict[str, str]) -> None:
    real, link = tmp_path / "real.yaml", tmp_path / "link.yaml"
    real.write_bytes(KEPT)
    link.symlink_to(real)
    done = engine_process(*_import_out(link, tmp_path), "--force", env=env)
    assert done.returncode == 0, done.stderr
    assert link.is_symlink() and yaml.safe_load(real.read_text())["model"] == "llama-3-8b"


def test_ask_replaces_its_own_answers_file_without_force(tmp_path: Path,
                                                         env: dict[str, str]) -> None:
    own = tmp_path / "answers.yaml"
    write_answers(own, {"workload": "pretrain"})
    assert own.read_text().startswith(HEADER)
    done = engine_process(*_ask_save(own, tmp_path), "--no-audit", env=env)
    assert done.returncode == 0, done.stderr
    assert yaml.safe_load(own.read_text())["model"] == "mistral-7b"


def test_an_unwritable_import_folder_is_refused_before_any_report_line(
        tmp_path: Path, env: dict[str, str]) -> None:
    (tmp_path / "file").write_bytes(KEPT)
    out = tmp_path / "file" / "answers.yaml"
    line = _refused(engine_process(*_import_out(out, tmp_path), env=env), out)
    assert line == f"error: {out}: --out: folder {out.parent} is not a folder"


# -- the writer itself ------------------------------------------------------------------------
def test_dev_null_itself_is_refused_and_stays_a_device(tmp_path: Path) -> None:
    """The check every write passes refuses /dev/null (only the check runs on the real one:
    the write is tried on a device node of the test's own)."""
    null = Path("/dev/null")
    if not null.exists() or not stat.S_ISCHR(os.lstat(null).st_mode):  # pragma: no cover
        pytest.skip("no /dev/null character device here")
    with pytest.raises(InputError) as caught:
        check_target(null, force=True, field="--save-answers")
    assert str(caught.value) == ("/dev/null: --save-answers: is a character device, not a "
                                 "regular file")
    assert stat.S_ISCHR(os.lstat(null).st_mode)
    own = _device_itself(tmp_path, "null")
    before = own.state()
    with pytest.raises(InputError, match="is a character device, not a regular file"):
        write_file(own.path, b"replaced\n", force=True)
    assert own.state() == before


def test_a_fifo_is_refused_without_being_opened(tmp_path: Path) -> None:
    """The check never opens the FIFO (an open for writing would block without a reader)."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="is a FIFO"):
        check_target(fifo, force=True)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_a_failed_write_removes_its_temporary_file(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "a.yaml"
    path.write_bytes(KEPT)

    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(InputError) as caught:
        write_file(path, b"new\n", force=True)
    assert str(caught.value) == f"{path}: cannot write (No space left on device)"
    assert path.read_bytes() == KEPT
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.yaml"]


def test_an_interrupted_write_removes_its_temporary_file(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupt(fd: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupt)
    with pytest.raises(KeyboardInterrupt):
        write_file(tmp_path / "a.yaml", b"new\n", force=False)
    assert list(tmp_path.iterdir()) == []


def test_a_target_that_becomes_a_fifo_before_the_rename_is_kept(tmp_path: Path) -> None:
    """Checked again just before the rename: what appeared meanwhile is not replaced."""
    from engine.files.safe_write import AtomicFile

    path = tmp_path / "out.jsonl"
    target = check_target(path, force=True)
    with AtomicFile(target) as out, pytest.raises(InputError, match="is a FIFO"):
        out.write(b"data\n")
        os.mkfifo(path)
        out.commit()
    assert stat.S_ISFIFO(os.lstat(path).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]


def test_where_files_cannot_be_named_relative_to_a_folder_paths_are_used(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same checks and the same atomic write where ``dir_fd`` is not supported
    (Windows): files are named by their paths."""
    from engine.files import safe_write

    monkeypatch.setattr(safe_write, "_RELATIVE", False)
    path = tmp_path / "a.yaml"
    path.write_bytes(KEPT)
    path.chmod(0o600)
    write_file(path, b"new\n", force=True)
    assert path.read_bytes() == b"new\n" and stat.S_IMODE(path.stat().st_mode) == 0o600
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(InputError, match="is a FIFO"):
        write_file(tmp_path / "pipe", b"x", force=True)
    with pytest.raises(InputError, match="is not a folder"):
        write_file(path / "inside.yaml", b"x", force=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.yaml", "pipe"]
