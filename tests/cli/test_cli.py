"""The ``cuemem`` command line: each command on a real home, through click's runner and one real process."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result

import cuemem
from cuemem import Memory
from cuemem.cli import main

NOW = datetime(2026, 6, 15, tzinfo=timezone.utc)


def run(*args: str, env: dict[str, str] | None = None) -> Result:
    """Invokes ``cuemem ARGS`` in-process; stdout and stderr are kept apart."""
    return CliRunner(env=env).invoke(main, list(args), catch_exceptions=False)


def journal_bytes(home: Path) -> bytes:
    """Every journal segment's bytes, in order."""
    return b"".join(p.read_bytes() for p in sorted((home / "journal").glob("*.jsonl")))


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A home with four episodes written through the API."""
    path = tmp_path / "home"
    with Memory.open(path) as mem:
        mem.remember("Acme signed the renewal.", id="e-deal", actors=["acme"], type="deal", outcome="positive",
                     occurred_at="2026-06-03", importance=0.6, now=NOW)
        mem.remember("Acme hit the invoice bug.", id="e-bug", actors=["acme"], type="bug", outcome="negative",
                     occurred_at="2026-06-09", risk=0.5, now=NOW)
        mem.remember("Lee froze Friday deploys.", id="e-freeze", actors=["lee"], type="decision",
                     occurred_at="2026-06-10", importance=0.3, now=NOW)
        mem.remember("Kickoff with Globex.", id="e-kickoff", actors=["globex"], type="meeting",
                     occurred_at="2026-05-20", importance=0.9, now=NOW)
    return path


def test_version() -> None:
    """``cuemem --version`` prints the package version."""
    result = run("--version")
    assert result.exit_code == 0 and result.stdout.strip() == f"cuemem, version {cuemem.__version__}"


def test_starting_the_command_line_loads_no_engine_nor_rich() -> None:
    """``cuemem``'s command line starts without numpy, rich, YAML, the engine, the entry points or the lab: each command loads what it uses."""
    code = "import sys, json, cuemem.cli; print(json.dumps(sorted(sys.modules)))"
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True).stdout)
    assert "cuemem.cli.trust" in loaded
    heavy = ("numpy", "rich", "yaml", "cuemem.memory", "cuemem.home", "cuemem.schema", "importlib.metadata", "cuemem.lab")
    assert [m for m in heavy if m in loaded] == []


def test_help_loads_the_plugins_but_not_the_engine() -> None:
    """``cuemem --help`` lists the plugins' commands (their entry points read, the lab imported) without numpy, rich or the engine."""
    code = ("import contextlib, io, json, sys\nfrom cuemem.cli import main\nshown = io.StringIO()\n"
            "with contextlib.redirect_stdout(shown):\n    main(['--help'], standalone_mode=False)\n"
            "print(json.dumps([shown.getvalue(), sorted(sys.modules)]))")
    shown, loaded = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True).stdout)
    assert "demo" in shown and "review" in shown and "cuemem.lab.commands" in loaded
    assert [m for m in ("numpy", "rich", "yaml", "cuemem.memory", "cuemem.home") if m in loaded] == []


def test_import_help_names_the_keys_an_item_may_hold() -> None:
    """``cuemem import --help`` lists Memory.remember's keywords (read when the help is shown); the commands' list shows its first line."""
    shown = run("import", "--help").output
    assert "Import FILE into the home, all or nothing" in shown and "occurred_at" in shown and "importance" in shown
    assert "Import FILE into the home, all or nothing" in run("--help").output


def test_init_creates_a_home_and_accepts_an_existing_one(tmp_path: Path) -> None:
    """``init`` creates the home layout; on an existing home it reports its size."""
    path = tmp_path / "new"
    first = run("init", str(path))
    assert first.exit_code == 0 and "holds 0 episodes" in first.stdout
    assert {p.name for p in path.iterdir() if p.is_dir()} == {"journal", "notes", "index", "proposals"}
    with Memory.open(path) as mem:
        mem.remember("one", now=NOW)
    assert "holds 1 episodes" in run("init", str(path)).stdout


def test_remember_prints_the_id_of_what_it_stored(tmp_path: Path) -> None:
    """``remember`` writes every option into the episode and prints its id alone."""
    path = tmp_path / "home"
    assert run("init", str(path)).exit_code == 0
    result = run(
        "remember", "--home", str(path), "Acme asked for 12% off", "--type", "deal", "--outcome", "pending",
        "--actor", "acme", "--actor", "kim", "--occurred-at", "2026-06-03", "--importance", "0.6", "--risk", "0.2",
        "--salience", "urgency=0.9", "--confidence", "0.8", "--subject", "renewal", "--tag", "sales", "--user", "u-1",
        "--now", "2026-06-15",
    )
    assert result.exit_code == 0, result.stderr
    eid = result.stdout.strip()
    assert eid and "\n" not in eid
    with Memory.open(path, read_only=True) as mem:
        e = mem.get(eid)
    assert (e.narrative, e.type, e.outcome and e.outcome.value, e.actors) == ("Acme asked for 12% off", "deal", "pending", ("acme", "kim"))
    assert (e.occurred_at, e.importance, e.risk, e.confidence) == (date(2026, 6, 3), 0.6, 0.2, 0.8)
    assert (e.salience["urgency"], e.subject, e.tags, e.user_id, e.recorded_at) == (0.9, "renewal", ("sales",), "u-1", NOW)


def test_remember_with_a_given_id_uses_the_home_from_the_environment(tmp_path: Path) -> None:
    """``--id`` is kept, and ``$CUEMEM_HOME`` stands in for ``--home``."""
    path = tmp_path / "home"
    assert run("init", str(path)).exit_code == 0
    result = run("remember", "standup moved to 10:00", "--id", "n-1", "--now", "2026-06-15", env={"CUEMEM_HOME": str(path)})
    assert result.exit_code == 0 and result.stdout.strip() == "n-1"
    with Memory.open(path, read_only=True) as mem:
        assert mem.get("n-1").narrative == "standup moved to 10:00"


@pytest.mark.parametrize(
    ("options", "status"),
    [
        (["--importance", "1.5"], 1),
        (["--id", "a/b"], 1),
        (["--occurred-at", "yesterday"], 2),  # read as --now is: a malformed command line
        (["--salience", "fun=0.5"], 1),
        (["--salience", "urgency=high"], 2),
        (["--outcome", "great"], 2),
        (["--now", "not-a-date"], 2),
        (["--id", "e-deal"], 1),
    ],
)
def test_remember_with_bad_input_exits_1_or_2_and_writes_nothing(home: Path, options: list[str], status: int) -> None:
    """A value cuemem refuses is exit status 1, a malformed command line 2; a one-line error, the journal unchanged."""
    before = journal_bytes(home)
    result = run("remember", "--home", str(home), "text", *options)
    assert result.exit_code == status and result.stdout == ""
    assert result.stderr.strip() and "Traceback" not in result.stderr
    assert journal_bytes(home) == before


def recall_json(home: Path, *args: str) -> dict[str, Any]:
    """``recall --json`` parsed, after checking it succeeded."""
    result = run("recall", "--home", str(home), "--now", "2026-06-15", "--json", *args)
    assert result.exit_code == 0, result.stderr
    parsed: dict[str, Any] = json.loads(result.stdout)
    return parsed


def test_recall_json_matches_the_api(home: Path) -> None:
    """``recall --json`` reports total, examined, full_scan, resolved cues and the hits the API returns."""
    out = recall_json(home, "--cue", "actor=acme", "--cue", "actor=lee", "--exclude", "outcome=negative", "--k", "1")
    with Memory.open(home, read_only=True) as mem:
        api = mem.recall({"actor": ["acme", "lee"]}, k=1, now=NOW, exclude={"outcome": ["negative"]})
    assert (out["total"], out["examined"], out["full_scan"]) == (api.total, api.examined, api.full_scan)
    assert (api.total, api.full_scan) == (2, 4)
    assert out["cues"] == {"actor": ["acme", "lee"]}
    assert [h["id"] for h in out["hits"]] == [h.id for h in api.hits] == ["e-deal"]
    hit = out["hits"][0]
    assert hit["score"] == pytest.approx(api.hits[0].score) and sum(hit["breakdown"].values()) == pytest.approx(hit["score"])
    assert hit["record"]["narrative"] == "Acme signed the renewal." and hit["record"]["time_buckets"][1] == "2026-06"


def test_recall_time_phrases_are_read_against_now(home: Path) -> None:
    """``--cue time="last week"`` resolves against ``--now``."""
    out = recall_json(home, "--cue", "time=last week")
    assert out["cues"]["time"] == [f"2026-06-{d:02d}" for d in range(8, 15)]
    assert {h["id"] for h in out["hits"]} == {"e-bug", "e-freeze"}
    assert {h["id"] for h in recall_json(home, "--cue", "time=last month")["hits"]} == {"e-kickoff"}


def test_recall_k_caps_the_hits_best_first(home: Path) -> None:
    """``--k`` limits the hits, which come best first; without cues every memory matches."""
    out = recall_json(home, "--k", "2")
    assert out["total"] == 4 and len(out["hits"]) == 2
    assert [h["score"] for h in out["hits"]] == sorted((h["score"] for h in out["hits"]), reverse=True)


def test_recall_prints_a_table_with_the_work_done(home: Path) -> None:
    """Without ``--json`` recall prints the memories and how many postings it examined."""
    result = run("recall", "--home", str(home), "--cue", "actor=acme", "--now", "2026-06-15", env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.stderr
    assert "Acme signed the renewal." in result.stdout and "Acme hit the invoice bug." in result.stdout
    assert "2 hits of 2 candidates the cues let through" in result.stdout and "examined 2 postings of a 4-memory scan" in result.stdout


def test_a_text_recall_footer_counts_hits_apart_from_the_candidates_the_cues_let_through(home: Path) -> None:
    """A text recall no memory matches says 0 hits of the 4 candidates (not "4 matched"); --json has both names."""
    result = run("recall", "--home", str(home), "--text", "zebra", "--now", "2026-06-15", env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.stderr
    assert "0 hits of 4 candidates the cues let through" in result.stdout and "matched" not in result.stdout
    out = recall_json(home, "--text", "renewal")
    assert (len(out["hits"]), out["candidates"], out["total"]) == (1, 4, 4)


@pytest.mark.parametrize(
    "args",
    [
        ["--cue", "colour=red"],
        ["--cue", "actor"],
        ["--cue", "time=someday"],
        ["--exclude", "=x"],
        ["--k", "0"],
        ["--text", " "],
    ],
)
def test_recall_with_bad_arguments_exits_1(home: Path, args: list[str]) -> None:
    """An unknown dimension, a malformed cue, a bad time phrase, ``--k 0`` or a blank ``--text``: exit 1 with a message."""
    result = run("recall", "--home", str(home), "--now", "2026-06-15", *args)
    assert result.exit_code == 1 and result.stderr.startswith("error: ") and result.stdout == ""


def test_recall_on_a_missing_home_exits_1(tmp_path: Path) -> None:
    """Recalling from a directory that is not a home is an error, and creates nothing."""
    result = run("recall", "--home", str(tmp_path / "nowhere"), "--cue", "actor=acme")
    assert result.exit_code == 1 and "no cuemem home" in result.stderr
    assert not (tmp_path / "nowhere").exists()


def write_lines(path: Path, lines: list[str]) -> Path:
    """Writes the lines, each ending in a newline."""
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_import_a_clean_file(home: Path, tmp_path: Path) -> None:
    """``import`` reports how many episodes it wrote, and they are recalled."""
    src = write_lines(tmp_path / "in.jsonl", [json.dumps({"narrative": f"line {i}", "actors": ["zeta"]}) for i in range(5)])
    result = run("import", str(src), "--home", str(home), "--now", "2026-06-15")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "imported 5 episodes"
    assert recall_json(home, "--cue", "actor=zeta")["total"] == 5


def test_import_a_bad_file_exits_1_with_line_numbers(home: Path, tmp_path: Path) -> None:
    """A file with bad lines imports nothing, exits 1 and names each bad line on stderr."""
    src = write_lines(tmp_path / "in.jsonl", ['{"narrative": "fine"}', "{oops", '{"narrative": "fine too"}', '{"narrative": ""}'])
    before = journal_bytes(home)
    result = run("import", str(src), "--home", str(home))
    assert result.exit_code == 1 and result.stdout == ""
    assert f"{src}:2: " in result.stderr and f"{src}:4: " in result.stderr and f"{src}:1: " not in result.stderr
    assert "error: " in result.stderr
    assert journal_bytes(home) == before


def test_import_skip_bad_lines_reports_what_it_skipped(home: Path, tmp_path: Path) -> None:
    """``--skip-bad-lines`` imports the good lines and lists the skipped ones on stderr."""
    src = write_lines(tmp_path / "in.jsonl", ['{"narrative": "fine"}', "{oops", '{"narrative": "fine too"}'])
    result = run("import", str(src), "--home", str(home), "--skip-bad-lines", "--now", "2026-06-15")
    assert result.exit_code == 0 and result.stdout.strip() == "imported 2 episodes"
    assert f"skipped {src}:2: " in result.stderr
    with Memory.open(home, read_only=True) as mem:
        assert len(mem) == 6


def test_rebuild_recreates_the_index(home: Path) -> None:
    """``rebuild`` rebuilds the cache from the journal and says how many episodes it indexed."""
    shutil.rmtree(home / "index")
    result = run("rebuild", "--home", str(home))
    assert result.exit_code == 0 and result.stdout.strip() == "rebuilt the indexes of 4 episodes"
    assert {"cue.idx", "salience.tbl", "recipe.json"} <= {p.name for p in (home / "index").iterdir()}
    with Memory.open(home, read_only=True) as mem:
        assert mem.open_report.index == "loaded" and len(mem) == 4


def test_stats_json(home: Path) -> None:
    """``stats --json`` prints the home's counts as JSON."""
    result = run("stats", "--home", str(home), "--json")
    assert result.exit_code == 0, result.stderr
    stats = json.loads(result.stdout)
    assert stats["episodes"] == 4 and stats["notes"] == 0 and stats["journal_segments"] == 1
    assert stats["journal_bytes"] == len(journal_bytes(home)) and stats["journal_problems"] == 0
    table = run("stats", "--home", str(home))
    assert table.exit_code == 0 and "episodes" in table.stdout


def test_demo_fills_a_home_and_shows_recalls(tmp_path: Path) -> None:
    """``demo -n 500`` writes 500 episodes, shows recalls with the work examined, and says where the files are."""
    path = tmp_path / "demo"
    result = run("demo", str(path), "-n", "500", env={"COLUMNS": "240"})
    assert result.exit_code == 0, result.stderr
    assert "examined" in result.stdout
    assert f"{path}/journal/" in result.stdout and f"{path}/index/" in result.stdout
    with Memory.open(path, read_only=True) as mem:
        assert len(mem.cue_values("user")) and mem.stats().episodes >= 500  # 500, then what the jobs add


def test_demo_refuses_too_few_episodes(tmp_path: Path) -> None:
    """``demo -n`` below its minimum is a usage error (exit 2) and writes nothing."""
    result = run("demo", str(tmp_path / "demo"), "-n", "5")
    assert result.exit_code == 2 and not (tmp_path / "demo").exists()


def test_the_module_runs_as_a_real_process(tmp_path: Path) -> None:
    """``python -m cuemem.cli`` remembers, then recalls as JSON, in separate real processes."""
    path = tmp_path / "home"
    command = [sys.executable, "-m", "cuemem.cli"]
    subprocess.run([*command, "init", str(path)], capture_output=True, timeout=120, check=True)
    remembered = subprocess.run(
        [*command, "remember", "--home", str(path), "Acme renewal signed", "--actor", "acme", "--now", "2026-06-15"],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert remembered.returncode == 0, remembered.stderr
    recalled = subprocess.run(
        [*command, "recall", "--home", str(path), "--cue", "actor=acme", "--now", "2026-06-15", "--json"],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert recalled.returncode == 0, recalled.stderr
    out = json.loads(recalled.stdout)
    assert [h["id"] for h in out["hits"]] == [remembered.stdout.strip()] and out["total"] == 1


def test_a_dash_reads_the_text_from_standard_input(home: Path) -> None:
    """``remember -``, ``observe -`` and ``recall -`` take their text from stdin, not a literal dash."""
    runner = CliRunner()
    got = runner.invoke(main, ["remember", "--home", str(home), "-", "--now", "2026-06-15"], input="the piano tuner comes on Tuesday\n")
    assert got.exit_code == 0, got.output
    eid = got.stdout.strip()
    found = runner.invoke(main, ["recall", "--home", str(home), "-", "--now", "2026-06-15", "--json"], input="piano tuner")
    assert found.exit_code == 0 and eid in found.stdout
    seen = runner.invoke(main, ["observe", "--home", str(home), "-", "--now", "2026-06-15"], input="We decided to use Postgres for billing.")
    assert seen.exit_code == 0 and seen.stdout.strip()


def test_exit_statuses_tell_a_failed_operation_from_a_malformed_command_line(home: Path) -> None:
    """0: done; 1: cuemem refused or failed (a typed error); 2: the command line itself is malformed."""
    assert run("stats", "--home", str(home)).exit_code == 0
    assert run("recall", "--home", str(home), "--cue", "colour=red").exit_code == 1
    assert run("recall", "--home", str(home), "--k", "many").exit_code == 2
    assert run("no-such-command").exit_code == 2


def test_every_command_that_prints_data_has_json() -> None:
    """Each command but ``init``, ``demo``, ``mcp`` (a server) and the ``eval`` and ``shared`` groups (whose ``locomo`` and
    ``stats`` have it) takes ``--json`` (the benchmarks' ``--json PATH`` writes the results to a file)."""
    ctx = click.Context(main)
    every = {name: main.get_command(ctx, name) for name in main.list_commands(ctx)}  # the plugins' commands too
    missing = [
        name for name, command in every.items()
        if command is not None and name not in {"init", "demo", "eval", "mcp", "shared"} and not any("--json" in p.opts for p in command.params)
    ]
    assert missing == []
    stats = main.commands["shared"].commands["stats"]  # type: ignore[attr-defined]
    assert any("--json" in p.opts for p in stats.params)


def test_json_outputs_parse(home: Path, tmp_path: Path) -> None:
    """remember, observe, import, expire and rebuild print one JSON document with --json."""
    got = json.loads(run("remember", "--home", str(home), "a json note", "--now", "2026-06-15", "--json").stdout)
    assert set(got) == {"id"}
    seen = json.loads(run("observe", "--home", str(home), "We decided to use Postgres for billing.", "--now", "2026-06-15", "--json").stdout)
    assert seen["ids"]
    src = write_lines(tmp_path / "in.jsonl", ['{"narrative": "fine"}'])
    imported = json.loads(run("import", str(src), "--home", str(home), "--json").stdout)
    assert imported["imported"] == 1 and len(imported["ids"]) == 1
    expired = json.loads(run("expire", "--home", str(home), "--now", "2026-06-15", "--json").stdout)
    assert {"at", "expired", "over_capacity", "approvals_expired"} <= set(expired)
    assert json.loads(run("rebuild", "--home", str(home), "--json").stdout)["episodes"] >= 2


def test_remember_takes_metadata_and_recall_finds_it_by_a_meta_cue(tmp_path: Path) -> None:
    """--meta key=value (JSON values read as JSON) is kept; --cue meta=key=value and a folded actor find it."""
    home = str(tmp_path / "h")
    runner = CliRunner()
    assert runner.invoke(main, ["init", home]).exit_code == 0
    made = runner.invoke(main, ["remember", "--home", home, "--actor", "Acme", "--meta", "crm=sf-1", "--meta", "priority=2", "Acme call",
                                "--now", "2026-01-01"])
    assert made.exit_code == 0, made.output
    found = runner.invoke(main, ["recall", "--home", home, "--cue", "actor=ACME", "--cue", "meta=priority=2", "--json", "--now", "2026-01-02"])
    hits = json.loads(found.output)["hits"]
    assert [h["record"]["metadata"] for h in hits] == [{"crm": "sf-1", "priority": 2}]
    assert runner.invoke(main, ["remember", "--home", home, "--meta", "no-equals", "x"]).exit_code == 2


def test_bench_takes_a_postgresql_dsn_only_for_the_shared_benchmark() -> None:
    """``--pg DSN`` names the server of ``bench --shared``; without ``--shared`` it is a malformed command line."""
    wrong = run("bench", "--pg", "postgresql://nowhere/x")
    assert wrong.exit_code == 2 and "--pg goes with --shared" in wrong.output


def test_time_options_take_the_forms_every_time_argument_takes(tmp_path: Path) -> None:
    """--occurred-at 2026/06/01 (as time cues write it) and --now as ISO date, date-time or YYYY/MM/DD are
    read as the API reads them; another form is a usage error (2) naming the option, and nothing is written."""
    path = str(tmp_path / "h")
    assert run("init", path).exit_code == 0
    made = run("remember", "--home", path, "Acme call", "--occurred-at", "2026/06/01", "--now", "2026/06/02", "--json")
    assert made.exit_code == 0, made.stderr
    eid = json.loads(made.stdout)["id"]
    with Memory.open(path, read_only=True) as mem:
        e = mem.get(eid)
        assert (e.occurred_at, e.recorded_at) == (date(2026, 6, 1), datetime(2026, 6, 2, tzinfo=timezone.utc))
    for now in ("2026-06-20", "2026/06/20", "2026-06-20T08:00:00Z"):
        assert [h["id"] for h in recall_json(Path(path), "--cue", "time=2026/06/01", "--now", now)["hits"]] == [eid], now
    for option in ("--occurred-at", "--now"):
        bad = run("remember", "--home", path, "x", option, "01.06.2026")
        assert bad.exit_code == 2 and option in bad.stderr and "YYYY/MM/DD" in bad.stderr
    with Memory.open(path, read_only=True) as mem:
        assert mem.ids() == [eid]
