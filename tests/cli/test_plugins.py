"""The command line's plugins (cli/plugins.py): commands from the ``cuemem.commands`` entry-point group of real distributions."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from cuemem.cli.plugins import GROUP, add_plugin_commands


def _distribution(where: Path, name: str, module: str, source: str, *, points: str | None = None) -> None:
    """Install a distribution ``name`` into ``where`` (a sys.path entry): its module, and its entry points (``GROUP``'s by default)."""
    (where / f"{module}.py").write_text(source, encoding="utf-8")
    info = where / f"{name}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(points if points is not None else f"[{GROUP}]\n{name}={module}:commands\n",
                                           encoding="utf-8")


def _cuemem(where: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m cuemem ARGS`` with ``where`` first on the path (before ``$PYTHONPATH`` and the installed packages)."""
    path = [str(where), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path), "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "cuemem", *args], capture_output=True, text=True, env=env, timeout=120)


def test_a_plugins_commands_join_the_group(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A distribution's function in the group adds its commands, which run as the group's own."""
    _distribution(tmp_path, "cuemem_hello", "cuemem_hello_commands", (
        "import click\n"
        "@click.command()\n@click.argument('who')\ndef hello(who):\n    '''Greet WHO.'''\n    click.echo(f'hello {who}')\n"
        "def commands():\n    return [hello]\n"
    ))
    monkeypatch.syspath_prepend(str(tmp_path))
    group = click.Group("cuemem")
    assert "hello" in add_plugin_commands(group)
    result = CliRunner().invoke(group, ["hello", "world"])
    assert (result.exit_code, result.output) == (0, "hello world\n")


def test_a_broken_plugin_is_reported_and_left_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A plugin that fails to import, one that returns no list of commands and one that reuses a name are each reported and skipped."""
    _distribution(tmp_path, "cuemem_broken", "cuemem_broken_commands", "import cuemem_no_such_module\n")
    _distribution(tmp_path, "cuemem_wrong", "cuemem_wrong_commands", "def commands():\n    return 'recall'\n")
    _distribution(tmp_path, "cuemem_clash", "cuemem_clash_commands", (
        "import click\n@click.command()\ndef recall():\n    '''Not the engine's.'''\n"
        "@click.command()\ndef other():\n    '''Kept.'''\ndef commands():\n    return [recall, other]\n"
    ))
    monkeypatch.syspath_prepend(str(tmp_path))
    group = click.Group("cuemem")
    engine = click.Command("recall", callback=lambda: click.echo("the engine's recall"))
    group.add_command(engine)
    added = add_plugin_commands(group)
    assert "other" in added and "recall" not in added and group.commands["recall"] is engine
    messages = capsys.readouterr().err.splitlines()
    assert any("plugin cuemem_broken" in m and "ModuleNotFoundError" in m for m in messages)
    assert any("plugin cuemem_wrong" in m and "returned str" in m for m in messages)
    assert any("plugin cuemem_clash" in m and "'recall' left out" in m for m in messages)
    assert CliRunner().invoke(group, ["recall"]).output == "the engine's recall\n"


def test_the_engine_commands_work_when_a_plugin_is_broken(tmp_path: Path) -> None:
    """``cuemem`` with a broken plugin installed says so on stderr and still lists and runs the engine's commands."""
    _distribution(tmp_path, "cuemem_broken", "cuemem_broken_commands", "raise RuntimeError('half installed')\n")
    listed = _cuemem(tmp_path, "--help")
    assert listed.returncode == 0 and "recall" in listed.stdout and "init" in listed.stdout
    assert "cuemem: plugin cuemem_broken (cuemem_broken_commands:commands) not loaded: RuntimeError: half installed\n" in listed.stderr
    made = _cuemem(tmp_path, "init", str(tmp_path / "home"))
    assert made.returncode == 0 and (tmp_path / "home" / "journal").is_dir()


def test_an_installation_without_the_group_has_the_engine_commands_only(tmp_path: Path) -> None:
    """cuemem's metadata without the plugin group (a broken install): the engine's commands work, the lab's are unknown."""
    _distribution(tmp_path, "cuemem", "cuemem_unused", "", points="[console_scripts]\ncuemem=cuemem.cli:main\n")
    listed = _cuemem(tmp_path, "--help")
    assert listed.returncode == 0 and "recall" in listed.stdout and "demo" not in listed.stdout and listed.stderr == ""
    missing = _cuemem(tmp_path, "demo", str(tmp_path / "demo"))
    assert missing.returncode == 2 and "No such command 'demo'" in missing.stderr and not (tmp_path / "demo").exists()
    made = _cuemem(tmp_path, "init", str(tmp_path / "home"))
    assert made.returncode == 0 and (tmp_path / "home" / "journal").is_dir()


def test_an_engine_command_loads_no_plugin(tmp_path: Path) -> None:
    """An engine command reads no entry point and imports no plugin; ``--help`` and the plugin's own command load it."""
    marker = tmp_path / "loaded"
    _distribution(tmp_path, "cuemem_marks", "cuemem_marks_commands", (
        "import click, pathlib\n"
        f"pathlib.Path({str(marker)!r}).open('a').write('x')\n"
        "@click.command()\ndef marks():\n    '''Say so.'''\n    click.echo('marked')\n"
        "def commands():\n    return [marks]\n"
    ))
    made = _cuemem(tmp_path, "init", str(tmp_path / "home"))
    assert made.returncode == 0 and not marker.exists()
    listed = _cuemem(tmp_path, "--help")
    assert listed.returncode == 0 and "marks" in listed.stdout and marker.read_text() == "x"
    ran = _cuemem(tmp_path, "marks")
    assert (ran.returncode, ran.stdout, marker.read_text()) == (0, "marked\n", "xx")
