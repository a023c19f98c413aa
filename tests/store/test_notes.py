"""Notes as Markdown files: the format, its errors, and the store that keeps them on disk."""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
from datetime import date, datetime, timedelta, timezone, tzinfo
from pathlib import Path
from typing import Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cuemem import Memory, _core
from cuemem.errors import InvalidIdError, NoteFormatError, NotFoundError, SchemaError, StorageError
from cuemem.schema import Kind, Level, Note, Origin, Tier
from cuemem.store.notes import NoteScan, NoteStore

UTC = timezone.utc
T = datetime(2026, 6, 7, 9, 30, tzinfo=UTC)

HAND_WRITTEN = """\
---
id: deploy-day
kind: procedural
subject: deploys
recorded_at: 2026-06-07
valid_from: 2026-06-07 10:00:00
tags: [ops, 週次]
---
# Deploys

Deploys go out on **Tuesdays**.
"""


def make(body: str = "Prefers Vim keybindings.", **overrides: Any) -> Note:
    """A note with the required fields filled in."""
    kwargs: dict[str, Any] = {"id": "pref-editor", "kind": "preference", "recorded_at": T}
    kwargs.update(overrides)
    return Note.create(body, **kwargs)


def files(directory: Path) -> list[str]:
    """Every name in ``directory``, hidden ones included, sorted."""
    return sorted(os.listdir(directory))


# --- the Markdown format ---------------------------------------------------------------


def test_markdown_layout_is_front_matter_then_body() -> None:
    """``---``, every field but body in a fixed order, ``---``, then the body verbatim."""
    text = make(subject="editor", tags=["tools"], sources=["j:1"]).to_markdown()
    head, matter, body = text.split("---\n", 2)
    assert head == "" and body == "Prefers Vim keybindings."
    keys = [line.split(":")[0] for line in matter.splitlines() if line and not line.startswith(("-", " "))]
    assert keys == [fl.name for fl in dataclasses.fields(Note) if fl.name != "body"]
    assert "recorded_at: '2026-06-07T09:30:00+00:00'" in matter and "kind: preference" in matter


def test_defaults_and_japanese_stay_readable() -> None:
    """Create's defaults; non-ASCII text is written as is, not escaped."""
    n = make("エディタはVimが好き", subject="エディタ")
    assert (n.origin, n.level, n.tier, n.reviewed, n.generated, n.taint, n.version) == (Origin.USER, Level.RAW, Tier.LONG, True, False, False, 1)
    assert n.valid_from == T and n.valid_to is None and n.kind is Kind.PREFERENCE
    assert "subject: エディタ\n" in n.to_markdown() and n.to_markdown().endswith("エディタはVimが好き")


def test_a_hand_written_note_is_read() -> None:
    """A person's YAML: unquoted dates, flow lists, no optional fields."""
    n = Note.from_markdown(HAND_WRITTEN)
    assert (n.id, n.kind, n.subject, n.tags) == ("deploy-day", Kind.PROCEDURAL, "deploys", ("ops", "週次"))
    assert n.recorded_at == datetime(2026, 6, 7, tzinfo=UTC) and n.valid_from == datetime(2026, 6, 7, 10, tzinfo=UTC)
    assert n.body == "# Deploys\n\nDeploys go out on **Tuesdays**.\n"


def test_crlf_and_byte_order_mark_are_tolerated() -> None:
    """A file saved by a Windows editor still reads; its body keeps its line endings."""
    n = Note.from_markdown("\ufeff" + HAND_WRITTEN.replace("\n", "\r\n"))
    assert n.id == "deploy-day" and n.body.startswith("# Deploys\r\n")


def test_body_may_contain_front_matter_fences() -> None:
    """Only the first closing ``---`` ends the front matter."""
    body = "---\nnot: front matter\n---\n\n---"
    assert Note.from_markdown(make(body).to_markdown()).body == body


def test_note_json_round_trip() -> None:
    """The JSON form holds every field and reads back to an equal note."""
    n = make(subject="s", valid_to=T + timedelta(days=1), supersedes="pref-old", version=2, generated=True)
    assert Note.from_json(json.loads(json.dumps(n.to_json()))) == n


ID_CHARS = "abcXYZ019._:-"
ids = st.text(alphabet=ID_CHARS, min_size=1, max_size=40).filter(lambda s: not s.startswith("."))
japanese = st.text(alphabet="あいうえおカタカナ漢字日本語。、「」ー", min_size=1, max_size=12)
texts = st.text(max_size=30) | japanese | st.sampled_from(
    ["---", "a\n---\nb", "---\n", "key: value", "'\"", "null", "~", "123", "yes", "0\x850", "\u2028", "a\r\nb", "\ufeff", "# x"]
)
labels = texts.filter(lambda s: s.strip() != "")
zones: st.SearchStrategy[tzinfo | None] = st.one_of(st.none(), st.just(UTC))
times = st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2200, 1, 1), timezones=cast(Any, zones))  # hypothesis types this argument too narrowly


@st.composite
def notes(draw: st.DrawFn) -> Note:
    """Any valid note, with unicode, Japanese and fence-like text in every text field."""
    recorded = draw(times)
    start = draw(st.none() | times)
    end = draw(st.none() | st.timedeltas(min_value=timedelta(microseconds=1), max_value=timedelta(days=999)))
    resolved = (start or recorded).replace(tzinfo=UTC)
    nid = draw(ids)
    supersedes = draw(st.none() | ids.filter(lambda s: s != nid))
    return Note.create(
        draw(st.lists(texts, max_size=4).map("\n".join)),
        id=nid,
        kind=draw(st.sampled_from(list(Kind))),
        recorded_at=recorded,
        subject=draw(st.none() | labels),
        sources=draw(st.lists(ids, max_size=3)),
        confidence=draw(st.floats(min_value=0.0, max_value=1.0)),
        valid_from=start,
        valid_to=None if end is None else resolved + end,
        supersedes=supersedes,
        origin=draw(st.sampled_from(list(Origin))),
        reviewed=draw(st.booleans()),
        generated=draw(st.booleans()),
        level=draw(st.sampled_from(list(Level))),
        tier=draw(st.sampled_from(list(Tier))),
        taint=draw(st.booleans()),
        tags=draw(st.lists(labels, max_size=3)),
        version=draw(st.integers(min_value=1, max_value=2**40)),
    )


@given(notes())
def test_markdown_round_trip_is_exact(note: Note) -> None:
    """Every note reads back from its Markdown equal, body byte for byte."""
    assert Note.from_markdown(note.to_markdown()) == note


@settings(max_examples=max(5, settings().max_examples // 5))  # each write fsyncs twice
@given(st.lists(notes(), min_size=1, max_size=4, unique_by=lambda n: n.id))
def test_store_round_trip_through_files(batch: list[Note]) -> None:
    """Written notes read back equal, one by one and by scan, sorted by id."""
    with tempfile.TemporaryDirectory() as tmp:
        store = NoteStore(Path(tmp))
        for note in batch:
            store.write(note)
        assert [store.read(n.id) for n in batch] == batch
        scan = store.scan()
        assert scan.errors == [] and scan.notes == sorted(batch, key=lambda n: n.id)


# --- format errors ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("just a body\n", None),
        ("", None),
        ("---\nid: a\nkind: semantic\n", None),
        ("---\nid: [unclosed\n---\nbody", None),
        ("---\n- a\n- b\n---\n", None),
        ("---\n---\nbody", None),
        ("---\nid: a\nkind: fact\nrecorded_at: 2026-06-07\n---\n", "kind"),
        ("---\nid: a\nkind: semantic\nrecorded_at: 2026-06-07\nconfidence: 2\n---\n", "confidence"),
        ("---\nid: ../a\nkind: semantic\nrecorded_at: 2026-06-07\n---\n", "id"),
        ("---\nkind: semantic\nrecorded_at: 2026-06-07\n---\n", "id"),
        ("---\nid: a\nkind: semantic\nrecorded_at: 2026-06-07\ncolour: red\n---\n", "colour"),
        ("---\nid: a\nkind: semantic\nrecorded_at: 2026-06-07\nbody: hi\n---\n", "body"),
        ("---\nid: 12\nkind: semantic\nrecorded_at: 2026-06-07\n---\n", "id"),
        ("---\nid: a\nkind: semantic\nrecorded_at: 2026-06-07\nversion: 0\n---\n", "version"),
        ("---\nid: a\nkind: semantic\nrecorded_at: 2026-06-07\nreviewed: 1\n---\n", "reviewed"),
        # Nesting far too deep for an id: refused (by the YAML loader or by the schema).
        ("---\nid: " + "[" * 600 + "]" * 600 + "\nkind: semantic\nrecorded_at: 2026-06-07\n---\n", "deep"),
    ],
)
def test_bad_files_raise_note_format_error_with_path(text: str, field: str | None) -> None:
    """Missing or unterminated front matter, bad YAML, non-mappings and schema breaks."""
    with pytest.raises(NoteFormatError) as err:
        Note.from_markdown(text, path="notes/a.md")
    assert err.value.path == "notes/a.md" and str(err.value).startswith("notes/a.md: ")
    assert err.value.field in ((None, "id") if field == "deep" else (field,))


def test_python_tags_are_refused_and_never_run(tmp_path: Path) -> None:
    """``yaml.safe_load`` only: a ``!!python`` tag is an error and its code does not run."""
    marker = tmp_path / "pwned"
    text = f"---\nid: !!python/object/apply:pathlib.Path.touch [!!python/object/apply:pathlib.Path ['{marker}']]\n---\n"
    with pytest.raises(NoteFormatError):
        Note.from_markdown(text)
    assert not marker.exists()


@pytest.mark.parametrize("bad", ["../x", "a/b", "a\x00b", ".hidden", "", "a b"])
def test_unsafe_ids_are_refused_by_create(bad: str) -> None:
    """No note can be built with an id that is not a safe file name."""
    with pytest.raises(InvalidIdError) as err:
        make(id=bad)
    assert err.value.field == "id"


@pytest.mark.parametrize(
    ("overrides", "field"),
    [({"kind": "fact"}, "kind"), ({"confidence": -1}, "confidence"), ({"valid_to": T}, "valid_to"), ({"version": True}, "version"),
     ({"sources": ["a/b"]}, "sources"), ({"supersedes": "pref-editor"}, "supersedes"), ({"tags": "x"}, "tags"), ({"generated": None}, "generated")],
)
def test_create_names_the_broken_field(overrides: dict[str, Any], field: str) -> None:
    """Note.create validates like Episode.create."""
    with pytest.raises(SchemaError) as err:
        make(**overrides)
    assert err.value.field == field


# --- the store -------------------------------------------------------------------------


@pytest.fixture
def store(tmp_path: Path) -> NoteStore:
    """An empty store in a fresh notes directory."""
    return NoteStore(tmp_path / "notes")


def test_write_then_read(store: NoteStore) -> None:
    """A note goes to ``<dir>/<id>.md`` and reads back equal; a missing id is NotFoundError."""
    note = make()
    path = store.write(note)
    assert path == store.directory / "pref-editor.md" == store.path_for("pref-editor")
    assert path.read_text(encoding="utf-8") == note.to_markdown()
    assert store.read("pref-editor") == note
    with pytest.raises(NotFoundError):
        store.read("nobody")
    with pytest.raises(NotFoundError):
        store.fingerprint("nobody")


@pytest.mark.parametrize("bad", ["../x", "a/b", "a\\b", "a\x00b", ".hidden", "..", ""])
def test_unsafe_ids_are_refused_and_nothing_is_written(tmp_path: Path, bad: str) -> None:
    """path_for, read, fingerprint and write refuse the id; no file appears anywhere."""
    store = NoteStore(tmp_path / "notes")
    store.write(make())
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    for call in (store.path_for, store.read, store.fingerprint):
        with pytest.raises(InvalidIdError):
            call(bad)
    with pytest.raises(InvalidIdError):
        store.write(dataclasses.replace(make(), id=bad))
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before


def test_a_symlink_out_of_the_directory_is_refused(tmp_path: Path, store: NoteStore) -> None:
    """A note file that resolves elsewhere is neither read nor written through."""
    outside = tmp_path / "secret.md"
    outside.write_text(make(id="x").to_markdown(), encoding="utf-8")
    store.directory.mkdir()
    (store.directory / "x.md").symlink_to(outside)
    with pytest.raises(StorageError):
        store.read("x")
    with pytest.raises(StorageError):
        store.write(make("changed", id="x"))
    assert Note.from_markdown(outside.read_text(encoding="utf-8")).body == "Prefers Vim keybindings."
    assert [e.path for e in store.scan().errors] == [str(store.directory / "x.md")]


def test_a_journaled_note_replaced_by_a_link_out_of_the_directory_is_reported_and_sync_still_works(tmp_path: Path) -> None:
    """A journaled note's file swapped for a link elsewhere: never read, reported by every sync, and other notes still sync."""
    home = tmp_path / "h"
    with Memory.open(home, fsync="never") as mem:
        mem.write_note("x", "the original", now=T)
        mem.write_note("y", "another note", now=T)
    outside = tmp_path / "elsewhere.md"
    outside.write_text((home / "notes" / "x.md").read_text(encoding="utf-8").replace("the original", "smuggled in"), encoding="utf-8")
    (home / "notes" / "x.md").unlink()
    (home / "notes" / "x.md").symlink_to(outside)
    for day in (1, 2):
        with Memory.open(home, fsync="never") as mem:
            with (home / "notes" / "y.md").open("a", encoding="utf-8") as edit:
                edit.write(f"Edited on day {day}.\n")
            report = mem.sync(now=T + timedelta(days=day))
            assert [e.path for e in report.errors] == [str(home / "notes" / "x.md")]
            assert report.updated == ["y"]
            assert all("smuggled" not in n.body for n in mem.notes())
    assert "smuggled in" in outside.read_text(encoding="utf-8")


def test_writes_leave_no_temporary_files(store: NoteStore) -> None:
    """After several writes and a rewrite, only the note files remain."""
    for i in range(3):
        store.write(make(id=f"n{i}"))
    store.write(make("second version", id="n1", version=2))
    assert files(store.directory) == ["n0.md", "n1.md", "n2.md"]
    assert store.read("n1").body == "second version"


def test_a_failed_write_keeps_the_old_file_and_cleans_up(store: NoteStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """When the rename fails: StorageError, the old note intact, no temporary file left."""
    store.write(make("old"))

    def refuse(directory: object, names: object) -> None:  # the core's renames, refused as it reports it
        raise StorageError(28, "No space left on device")

    monkeypatch.setattr(_core, "place_pending", refuse)
    with pytest.raises(StorageError):
        store.write(make("new"))
    monkeypatch.undo()
    assert files(store.directory) == ["pref-editor.md"]
    assert store.read("pref-editor").body == "old"


def test_an_edit_on_disk_is_read_back_and_changes_the_fingerprint(store: NoteStore) -> None:
    """A person's edit of body and front matter shows on the next read."""
    path = store.write(make())
    before = store.fingerprint("pref-editor")
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("confidence: 1.0", "confidence: 0.5").replace("Vim", "Emacs"), encoding="utf-8")
    note = store.read("pref-editor")
    assert (note.confidence, note.body) == (0.5, "Prefers Emacs keybindings.")
    assert store.fingerprint("pref-editor") != before
    assert len(before) == 64 and int(before, 16) >= 0


def test_scan_reports_broken_files_and_keeps_going(store: NoteStore) -> None:
    """Broken notes become errors with their path; the good ones are all returned."""
    for nid in ("b", "d"):
        store.write(make(id=nid))
    d = store.directory
    (d / "a.md").write_text("no front matter", encoding="utf-8")
    (d / "c.md").write_text("---\nid: [\n---\n", encoding="utf-8")
    (d / "e.md").write_bytes(b"\xff\xfe not utf-8")
    (d / "f.md").write_text(make(id="other").to_markdown(), encoding="utf-8")
    (d / "My Note.md").write_text(make(id="x").to_markdown(), encoding="utf-8")
    scan = store.scan()
    assert [n.id for n in scan.notes] == ["b", "d"]
    assert sorted(str(e.path) for e in scan.errors) == sorted(str(d / n) for n in ("My Note.md", "a.md", "c.md", "e.md", "f.md"))
    assert {e.field for e in scan.errors if e.path in (str(d / "f.md"), str(d / "My Note.md"))} == {"id"}


def test_scan_ignores_other_files(store: NoteStore) -> None:
    """Non-Markdown files, hidden and temporary files and directories are not notes."""
    store.write(make(id="a"))
    d = store.directory
    (d / "readme.txt").write_text("hello", encoding="utf-8")
    (d / ".a.x1y2.tmp").write_text("partial", encoding="utf-8")
    (d / ".hidden.md").write_text("partial", encoding="utf-8")
    (d / "sub.md").mkdir()
    scan = store.scan()
    assert [n.id for n in scan.notes] == ["a"] and scan.errors == []


def test_scan_of_a_missing_directory_is_empty(tmp_path: Path) -> None:
    """A home without notes yet has none, rather than an error."""
    assert NoteStore(tmp_path / "absent").scan() == NoteScan()


def test_new_files_are_private_and_edited_modes_are_kept(store: NoteStore) -> None:
    """A new note is owner-only; a rewrite keeps the mode a person gave the file."""
    path = store.write(make())
    assert path.stat().st_mode & 0o777 == 0o600
    path.chmod(0o644)
    store.write(make("again"))
    assert path.stat().st_mode & 0o777 == 0o644


def test_hand_written_dates_read_through_the_store(store: NoteStore) -> None:
    """A note a person saved by hand reads through the store like any other."""
    store.directory.mkdir()
    (store.directory / "deploy-day.md").write_text(HAND_WRITTEN, encoding="utf-8")
    assert store.read("deploy-day").recorded_at.date() == date(2026, 6, 7)


# --- the survey of changes: one listing and a stat per file, in the core -----------------

def _journaled(store: NoteStore, *ids: str) -> dict[str, str]:
    """Id -> the digest of its file now, for every note written (what the journal holds)."""
    return {nid: store.fingerprint(nid) for nid in ids}


def test_a_survey_of_unchanged_files_names_none_and_reads_none(store: NoteStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """Files as written (their stat and digest as seen) are not looked at: the scan after the survey reads nothing."""
    for nid in ("a", "b", "c"):
        store.write(make(id=nid))
    journaled = _journaled(store, "a", "b", "c")
    survey = store.survey(journaled)
    assert survey is not None and survey.names == [] and survey.missing == []
    monkeypatch.setattr(NoteStore, "_bytes", lambda *_: pytest.fail("an unchanged note file was read"))
    assert store.scan(known=journaled, survey=survey) == NoteScan()


def test_a_survey_names_edited_hidden_odd_and_missing_entries(store: NoteStore) -> None:
    """An edit, a hidden file, a FIFO, a folder-less odd name and a journaled id without a file are all looked at."""
    for nid in ("a", "b", "gone"):
        store.write(make(id=nid))
    journaled = _journaled(store, "a", "b", "gone")
    d = store.directory
    (d / "gone.md").unlink()
    text = (d / "a.md").read_bytes()
    (d / "a.md").write_bytes(text.replace(b"Vim", b"Vim!!"))
    (d / ".b.md.pending").write_bytes(b"partial")
    os.mkfifo(d / "pipe.md")
    (d / "new.md").write_text(make(id="new").to_markdown(), encoding="utf-8")
    (d / "readme.txt").write_text("not a note", encoding="utf-8")
    survey = store.survey(journaled)
    assert survey is not None
    assert sorted(survey.names) == [".b.md.pending", "a.md", "new.md", "pipe.md"] and survey.missing == ["gone"]
    scan = store.scan(known=journaled, survey=survey)
    assert [n.id for n in scan.notes] == ["a", "new"] and scan.missing == ["gone"]
    assert [e.path for e in scan.errors] == [str(d / "pipe.md")]


def test_a_survey_looks_at_a_file_whose_entry_is_of_another_shape_or_digest(store: NoteStore) -> None:
    """What the store holds of a file is a hint: an entry of another shape, or of another digest, makes the file be read."""
    for nid in ("a", "b", "c"):
        store.write(make(id=nid))
    journaled = _journaled(store, "a", "b", "c")
    seen = dict(store.seen)
    store.adopt({"a": seen["a"][:4] + ("x",) * 3, "b": (*seen["b"][:4], "0" * 64, "preference", False)})  # type: ignore[dict-item]
    survey = store.survey(journaled)
    assert survey is not None and sorted(survey.names) == ["a.md", "b.md"]


def test_a_survey_looks_at_a_name_that_is_not_utf8(store: NoteStore) -> None:
    """A file name that is not UTF-8 is looked at, and the scan reports it rather than failing."""
    store.write(make(id="a"))
    journaled = _journaled(store, "a")
    odd = os.path.join(os.fsencode(store.directory), b"\xff.md")
    with open(odd, "wb") as f:
        f.write(b"---\n")
    survey = store.survey(journaled)
    assert survey is not None and survey.names == [os.fsdecode(b"\xff.md")]
    assert len(store.scan(known=journaled, survey=survey).errors) == 1


def test_a_survey_of_a_missing_directory_is_none(tmp_path: Path) -> None:
    """No directory, no survey (a new home)."""
    assert NoteStore(tmp_path / "absent").survey({"a": "0" * 64}) is None


def test_a_survey_looks_at_a_same_size_edit_whose_times_moved(store: NoteStore) -> None:
    """An edit that keeps the size (and inode) but moves the modification time is looked at."""
    store.write(make(id="a"))
    journaled = _journaled(store, "a")
    path = store.directory / "a.md"
    text = path.read_bytes()
    with open(path, "r+b") as f:  # in place: same inode, same size
        f.write(text.replace(b"Vim", b"Vi!", 1))
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    survey = store.survey(journaled)
    assert survey is not None and survey.names == ["a.md"]


def test_a_survey_leaves_out_a_journaled_key_that_is_not_utf8(store: NoteStore) -> None:
    """A hostile cache's key with a lone surrogate names no file: no error, not reported missing."""
    store.write(make(id="a"))
    journaled = {**_journaled(store, "a"), "\ud800": "0" * 64}
    survey = store.survey(journaled)
    assert survey is not None and survey.names == [] and survey.missing == []


def test_a_note_given_twice_in_one_put_is_written_once_as_last_given(store: NoteStore) -> None:
    """As a batch writes them in order: the last bytes of an id win, and one file is left."""
    first, last = make("first").to_markdown().encode(), make("last").to_markdown().encode()
    store.put([("pref-editor", first), ("pref-editor", last)])
    assert files(store.directory) == ["pref-editor.md"] and store.read("pref-editor").body == "last"
