"""The demo's tour: stages shown while they run, and next commands that work as printed."""

from __future__ import annotations

import io
import json
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rich.console import Console

from cuemem.lab.demo.stages import Stages
from cuemem.lab.demo.tour import run_tour
from cuemem.memory import Memory

#: The stages of the tour that grow with the home (seconds each at 100,000 episodes).
HEAVY = {
    "writing a year of work life", "indexing the year's narratives for text recall", "consolidating the short-term items",
    "distilling faded memories (the weekly pass)", "mining policies from the year's outcomes", "saving the indexes",
}


@pytest.fixture(scope="module")
def tour(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, list[str]]:
    """A demo home of 2,000 episodes, the tour's output and the commands it returned."""
    home = tmp_path_factory.mktemp("demo") / "home with space"
    out = io.StringIO()
    commands = run_tour(home, episodes=2_000, console=Console(file=out, width=120))
    return home, out.getvalue(), commands


def printed_commands(output: str) -> list[str]:
    """The commands under "try next", as a person would copy them off the screen."""
    tail = output[output.index("try next") :].splitlines()[1:]
    return [line.strip() for line in tail if line.strip().startswith("cuemem ")]


def run_printed(command: str) -> subprocess.CompletedProcess[str]:
    """Runs a printed ``cuemem ...`` command (split as a POSIX shell splits it) with this interpreter."""
    argv = shlex.split(command)
    assert argv[0] == "cuemem"
    return subprocess.run([sys.executable, "-m", "cuemem", *argv[1:]], capture_output=True, text=True, timeout=120, check=False)


def test_the_tour_ends_with_a_cue_recall_a_text_recall_and_an_observe(tour: tuple[Path, str, list[str]]) -> None:
    """Three commands are printed, one line each, exactly as returned: cue recall, text recall, observe."""
    home, output, commands = tour
    assert printed_commands(output) == commands
    cue, text, observe = (shlex.split(c) for c in commands)
    assert cue[cue.index("--home") + 1] == str(home) and "--cue" in cue and "..." not in " ".join(cue)
    assert text[:4] == ["cuemem", "--user", "*", "recall"] and "--cue" not in text and "--text" not in text
    assert observe[3] == "observe" and observe[observe.index("--home") + 1] == str(home)


def test_the_printed_commands_return_results(tour: tuple[Path, str, list[str]]) -> None:
    """Each printed command exits 0 and finds or writes something; with --json the recalls have hits."""
    home, output, _ = tour
    cue, text, observe = printed_commands(output)
    for command in (cue, text):
        shown = run_printed(command)
        assert shown.returncode == 0, shown.stderr
        assert "ep-" in shown.stdout
        found = json.loads(run_printed(command + " --json").stdout)
        assert found["hits"] and found["total"] >= len(found["hits"])
    text_hits = json.loads(run_printed(text + " --json").stdout)["hits"]
    assert set(text_hits[0]["breakdown"]) == {"text", "salience", "freshness", "boost"}  # a text recall's parts
    written = run_printed(observe + " --json")
    assert written.returncode == 0, written.stderr
    ids = json.loads(written.stdout)["ids"]
    assert ids and ids[0].startswith("ep-")
    user = shlex.split(observe)[2]
    with Memory.open(home, read_only=True, user=user) as mem:
        assert mem.get(ids[0]).kind.value == "preference"


def test_every_heavy_stage_runs_under_a_named_progress_line(tour: tuple[Path, str, list[str]]) -> None:
    """Import, text indexing, consolidation, distillation, policy mining and saving each report as a stage."""
    _, output, _ = tour
    done = {line.split("✓ ", 1)[1].rsplit(" (", 1)[0] for line in output.splitlines() if "✓ " in line}
    assert HEAVY <= done, HEAVY - done
    assert output.index("✓ mining policies") < output.index("try next")


def test_a_stage_shows_its_name_while_it_runs_and_its_time_after() -> None:
    """On a terminal the stage's name is drawn while the body runs; then one line gives its time."""
    out = io.StringIO()
    stages = Stages(Console(file=out, force_terminal=True, width=100))
    with stages.stage("mining policies", total=None):
        time.sleep(0.4)
        live = out.getvalue()
    assert "mining policies" in live  # drawn before the stage finished
    (name, took), = stages.timings
    assert name == "mining policies" and took >= 0.4
    assert re.search(r"✓ mining policies \(\d+\.\d s\)", out.getvalue())
