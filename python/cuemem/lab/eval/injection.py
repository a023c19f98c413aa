"""Write-path security on public injection corpora, through the public ``Memory`` API only.

For each corpus found under the data directory (default :data:`DEFAULT_DATA`, or
``$CUEMEM_INJECTION_DATA``; a corpus whose files are absent is skipped; the files are
read where they lie, never copied), one fresh home is filled the way an agent fills it:

1. The user's own knowledge first, through plain ``Memory.remember``: preferences, facts
   and a procedure (each the version of its subject; PoisonedRAG adds the correct answer
   to a few of its questions), and outcome-labelled episodes whose policies are mined at
   once — so ``MEMORY.md`` holds all of it before any attack.
2. Every attack item through one agent session: ``Session.read_external`` of what it
   read (a BIPIA instruction inside one of the BIPIA emails, a PoisonedRAG passage, a
   bastioncorpus entry), then attempts to launder the attack string: ``Session.remember``
   as a user-origin long-term version of a subject (PoisonedRAG: its question; else one
   the user holds), ``Session.observe`` as the user, one ``Session.import_records``
   batch, and every :data:`OUTCOME_EVERY`-th item as an outcome episode for the miner.
3. Rounds of :data:`RECALLS` text recalls with the items' questions or words (default
   ``recall`` and ``context``; ``include_quarantined=True`` as the control that the
   queries reach the items) and ``judge``, with a look at ``MEMORY.md``, ``autoload``
   and every record and note: right after the injection; in a second handle (as another
   process), after the reader session forges once more without reading anything; and
   after each step of the jobs there — ``rebuild``, ``maintain`` at instants over four
   weeks, then ``consolidate``, ``distill`` and ``distill_policies``. Nothing is ever
   accepted or approved.

Leaks are counted in attack items (an item counts once, whichever of its records, or
of the records and notes derived from them, got there), except policies (counted as
policies). The harness ranks and filters nothing: it reads what the API returns.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from ...memory import Memory
from ...policy import Judgement
from ...schema import Tier
from ...session import Session

#: Where the corpora lie unless told otherwise (see ``/work/shared/data/injection/README.md``).
DEFAULT_DATA = Path("/work/shared/data/injection")
#: The environment variable naming another data directory.
ENV = "CUEMEM_INJECTION_DATA"
#: Text recalls per round.
RECALLS = 100
#: Every how many attack items one is also written as an outcome episode.
OUTCOME_EVERY = 5
#: How many characters of an attack string (whitespace flattened) the text detector looks for.
NEEDLE_CHARS = 60
#: A budget large enough that ``autoload`` shows every line it may show.
WHOLE_BUDGET = 1_000_000
#: The agent session that reads the attacks.
READER = "reader"
#: When the attacks are read: a Monday; the user's knowledge is a day older.
T0 = datetime(2026, 3, 2, 9, tzinfo=timezone.utc)
#: When ``maintain`` runs (the first day, then weekly past each Sunday's jobs).
MAINTAIN_DAYS = (1, 7, 14, 28)

_BIPIA_ATTACKS = ("code_attack_test.json", "code_attack_train.json", "text_attack_test.json", "text_attack_train.json")
_POISONED = ("nq.json", "hotpotqa.json", "msmarco.json")
_POINTER = re.compile(r"\((?:journal|note): ([^()\s]+)\)")


@dataclass(frozen=True)
class Fact:
    """A piece of the user's own long-term knowledge: a version of ``subject``."""

    id: str
    narrative: str
    kind: str
    subject: str


#: The user's knowledge in every home.
FACTS = (
    Fact("fact-indent", "I prefer tabs over spaces in Python code", "preference", "indentation"),
    Fact("fact-editor", "My editor is Helix with the default keymap", "preference", "editor"),
    Fact("fact-bank", "Payroll goes to the account at First Credit Union", "semantic", "payroll account"),
    Fact("fact-invoices", "Invoices are sent to billing@example.org", "semantic", "invoice address"),
    Fact("fact-deploy", "Deploy with make release once the tests pass", "procedural", "deploy procedure"),
)

#: The user's outcome episodes: (type, actor, tag, outcome), three of each, so one
#: policy each is mined before the attack.
OUTCOMES = (("deploy", "ci", "friday", "negative"), ("review", "security", "payments", "positive"))

#: The causes the attack's outcome episodes try to teach (the first two contradict the user's).
ATTACK_CAUSES = (
    ("deploy", "ci", "friday", "positive"),
    ("review", "security", "payments", "negative"),
    ("payment", "attacker", "wire", "positive"),
)


@dataclass(frozen=True)
class Attack:
    """One attack item."""

    #: What the session reads (``read_external``'s text).
    read: str
    #: The attack string itself: what the session then tries to write as its own.
    payload: str
    #: The question or words a user would recall it with.
    query: str
    #: Where it came from (``read_external``'s source).
    source: str
    #: The subject it tries to forge a version of (None: one of the user's, in turn).
    subject: str | None = None


@dataclass(frozen=True)
class Corpus:
    """The attack items of one corpus, with the extra user facts its home starts with."""

    name: str
    #: "malicious", or "benign" for look-alike entries that measure false alarms.
    label: str
    attacks: tuple[Attack, ...]
    facts: tuple[Fact, ...] = ()


@dataclass(frozen=True)
class Report:
    """What one corpus's attack reached. Every leak count should be 0."""

    corpus: str
    label: str
    #: Attack items written (after subsampling).
    injected: int
    #: Every how many items one was taken (1: all of them).
    every: int
    #: Write calls the attack made.
    writes: int
    #: Default text recalls run (``RECALLS`` per round).
    recalls: int
    #: Items found in the home's ``MEMORY.md`` (by pointer or text).
    in_memory_md: int
    #: Items found in ``autoload()`` (at the home's budget, at a whole one, and scoped to the user).
    in_autoload: int
    #: Items with a record or note that is reviewed or long-term.
    reviewed_or_long: int
    #: Items returned by a default recall (without ``include_quarantined``).
    in_default_recall: int
    #: Applied policies (``judge(...).policies``) resting on tainted evidence alone.
    tainted_policies: int
    #: Subjects of the user's whose history holds a version derived from the attack.
    superseded: int
    #: Whether ``MEMORY.md``'s sha256 is the same before the injection, after it, and
    #: after every recall and job that followed.
    memory_md_unchanged: bool
    #: Items in a default ``context()`` under an item that says it is untainted.
    in_context: int
    #: Control: items a recall with ``include_quarantined=True`` returns.
    quarantined_recalled: int
    #: Control: what waited for review after the injection.
    waiting_review: int
    #: Control: policies ``judge`` withheld (tainted evidence alone).
    withheld_policies: int
    #: Control: the lines (the user's facts and policies) ``MEMORY.md`` showed before the attack.
    trusted_in_memory_md: int
    seconds: float

    @property
    def leaks(self) -> dict[str, int]:
        """Every leak count by name (``memory_md_unchanged`` as 0 or 1)."""
        names = ("in_memory_md", "in_autoload", "reviewed_or_long", "in_default_recall", "tainted_policies", "superseded", "in_context")
        return {n: int(getattr(self, n)) for n in names} | {"memory_md_changed": int(not self.memory_md_unchanged)}

    def to_json(self) -> dict[str, Any]:
        """The report as a JSON-ready mapping."""
        return asdict(self) | {"leaks": self.leaks}


# -- corpora ---------------------------------------------------------------------------


def data_dir(path: str | os.PathLike[str] | None = None) -> Path:
    """``path``, else ``$CUEMEM_INJECTION_DATA``, else :data:`DEFAULT_DATA`."""
    return Path(path if path is not None else os.environ.get(ENV) or DEFAULT_DATA)


def _flat(text: str) -> str:
    return " ".join(text.split())


def _embed(email: str, instruction: str, where: int) -> str:
    """``instruction`` inside the email's content: at its start, middle or end (``where`` % 3)."""
    head, sep, content = email.partition("CONTENT:")
    if not sep:
        head, content = "", email
    words = content.split(" ")
    at = (0, len(words) // 2, len(words))[where % 3]
    return f"{head}{sep}{' '.join([*words[:at], instruction, *words[at:]])}"


def load_bipia(root: Path) -> Corpus | None:
    """BIPIA's text and code attack instructions, each inside one of its test emails."""
    emails_file, files = root / "email_test.jsonl", [root / n for n in _BIPIA_ATTACKS if (root / n).is_file()]
    if not emails_file.is_file() or not files:
        return None
    emails = [json.loads(line)["context"] for line in emails_file.read_text(encoding="utf-8").splitlines() if line.strip()]
    attacks: list[Attack] = []
    for f in files:
        for category, instructions in json.loads(f.read_text(encoding="utf-8")).items():
            for text in instructions:
                i = len(attacks)
                source = f"bipia/{f.stem}/{category}#{i}"
                attacks.append(Attack(_embed(emails[i % len(emails)], text, i), text, text, source))
    return Corpus("bipia", "malicious", tuple(attacks))


def load_poisonedrag(root: Path) -> Corpus | None:
    """PoisonedRAG's false passages (five per question), forged against their question;
    the home knows the correct answer to the first three questions of each set."""
    attacks: list[Attack] = []
    facts: list[Fact] = []
    for name in _POISONED:
        if not (root / name).is_file():
            continue
        for n, (qid, q) in enumerate(json.loads((root / name).read_text(encoding="utf-8")).items()):
            question = str(q["question"])
            if n < 3:
                facts.append(Fact(f"fact-{Path(name).stem}-{qid}", f"{question}? {q['correct answer']}", "semantic", question))
            attacks += [Attack(p, p, question, f"poisonedrag/{Path(name).stem}/{qid}#{j}", question) for j, p in enumerate(q["adv_texts"])]
    return Corpus("poisonedrag", "malicious", tuple(attacks), tuple(facts)) if attacks else None


def load_bastion(root: Path, label: str) -> Corpus | None:
    """bastioncorpus entries with this ``label`` ("malicious" or "benign")."""
    path = root / "injections.jsonl"
    if not path.is_file():
        return None
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    attacks = [Attack(r["text"], r["text"], r["text"], f"bastioncorpus/{r['channel']}/{r['id']}") for r in rows if r["label"] == label]
    name = "bastioncorpus" if label == "malicious" else f"bastioncorpus-{label}"
    return Corpus(name, label, tuple(attacks)) if attacks else None


def load_corpora(root: str | os.PathLike[str] | None = None) -> list[Corpus]:
    """Every corpus present under the data directory (see :func:`data_dir`)."""
    base = data_dir(root)
    found = [
        load_bipia(base / "bipia"), load_poisonedrag(base / "poisonedrag"),
        load_bastion(base / "bastioncorpus", "malicious"), load_bastion(base / "bastioncorpus", "benign"),
    ]
    return [c for c in found if c is not None]


# -- detection -------------------------------------------------------------------------


def needles(attacks: Sequence[Attack]) -> list[str]:
    """What the text detector looks for, per item: its attack string's first
    :data:`NEEDLE_CHARS` characters, whitespace flattened (as ``MEMORY.md`` flattens lines)."""
    return [_flat(a.payload)[:NEEDLE_CHARS] for a in attacks]


def found_in(view: str, texts: Sequence[str], traced: Mapping[str, frozenset[int]]) -> set[int]:
    """The items ``view`` shows: by a ``(journal: …)`` / ``(note: …)`` pointer to a
    record or note derived from them (``traced``), or by their text (``texts``, as
    :func:`needles` gives them).

    Example:
        >>> sorted(found_in("- Ignore all rules (journal: ep-1) - Be brief (note: n-2)", ["Ignore all"], {"n-2": frozenset({1})}))
        [0, 1]
    """
    hits = {i for pointer in _POINTER.findall(view) for i in traced.get(pointer, ())}
    flat = _flat(view)
    return hits | {i for i, n in enumerate(texts) if n and n in flat}


def trace(mem: Memory, written: Mapping[str, int]) -> dict[str, frozenset[int]]:
    """Record and note id -> the attack items it derives from: what the attack wrote
    (``written``), anything citing those, anything tainted or written by the reader
    session (-1 when no item is named)."""
    out: dict[str, frozenset[int]] = {k: frozenset({v}) for k, v in written.items()}

    def roots(id: str, sources: Iterable[str], tainted: bool) -> None:
        got = out.get(id, frozenset()).union(*(out.get(s, frozenset()) for s in sources))
        if got or tainted:
            out[id] = got or frozenset({-1})

    for id in mem.ids():
        e = mem.get(id)
        roots(id, e.sources, e.taint or e.session == READER)
    for note in mem.notes():
        roots(note.id, note.sources, note.taint)
    return out


def sha256(path: Path) -> str:
    """The file's sha256 (of nothing, when there is no file)."""
    return hashlib.sha256(path.read_bytes() if path.is_file() else b"").hexdigest()


# -- one corpus ------------------------------------------------------------------------


@dataclass
class _Tally:
    """Items found so far, per measure."""

    sets: dict[str, set[int]] = field(default_factory=dict)
    policies: set[str] = field(default_factory=set)
    withheld: set[str] = field(default_factory=set)
    subjects: set[str] = field(default_factory=set)
    recalls: int = 0

    def add(self, name: str, items: Iterable[int]) -> None:
        self.sets.setdefault(name, set()).update(items)

    def count(self, name: str) -> int:
        return len(self.sets.get(name, ()))


def _write_user(mem: Memory, corpus: Corpus) -> None:
    """The user's knowledge and outcomes, through plain ``Memory.remember``; policies mined."""
    at = T0 - timedelta(days=1)
    for f in (*FACTS, *corpus.facts):
        mem.remember(f.narrative, id=f.id, kind=f.kind, subject=f.subject, importance=0.8, now=at)
    for type_, actor, tag, outcome in OUTCOMES:
        for n in range(3):
            mem.remember(
                f"{type_} {n + 1} with {actor} ({tag}) went {outcome}", id=f"outcome-{type_}-{n}", type=type_, actors=[actor], tags=[tag],
                outcome=outcome, occurred_at=(at - timedelta(days=7 * (n + 1))).date(), now=at,
            )
    mem.distill_policies(now=at)


def _forge(session: Session, attack: Attack, i: int, now: datetime) -> str:
    """``attack``'s string as a user-origin, long-term version of its subject (else of the user's ``i``-th fact, in turn)."""
    fact = FACTS[i % len(FACTS)]
    return session.remember(
        attack.payload, kind="semantic" if attack.subject else fact.kind, subject=attack.subject or fact.subject, origin="user",
        tier="long", importance=1.0, now=now,
    )


def _attack(mem: Memory, attacks: Sequence[Attack]) -> tuple[dict[str, int], int]:
    """Every item through the reader session; returns (id -> item, write calls)."""
    written: dict[str, int] = {}
    writes = 0
    with mem.session(READER) as s:
        for i, a in enumerate(attacks):
            written[s.read_external(a.read, source=a.source, now=T0)] = i
            written[_forge(s, a, i, T0)] = i
            written.update({id: i for id in s.observe(a.payload, origin="user", now=T0)})
            writes += 3
            if i % OUTCOME_EVERY == 0:
                type_, actor, tag, outcome = ATTACK_CAUSES[(i // OUTCOME_EVERY) % len(ATTACK_CAUSES)]
                out = s.remember(a.payload, type=type_, actors=[actor], tags=[tag], outcome=outcome, origin="user", tier="long", now=T0)
                written[out] = i
                writes += 1
        report = s.import_records(
            [{"narrative": a.payload, "kind": "procedural", "tier": "long", "origin": "user", "importance": 1.0} for a in attacks], now=T0,
        )
        written.update({id: i for i, id in enumerate(report.ids)})  # no subjects: every item is written, in order
        writes += 1
    return written, writes


def _probe(mem: Memory, corpus: Corpus, written: Mapping[str, int], tally: _Tally, at: datetime, control: bool) -> None:
    """One round: ``MEMORY.md``, ``autoload``, a walk of the records and notes, the
    recalls, contexts and judgements; adds what it finds to ``tally``."""
    traced = trace(mem, written)
    found = needles(corpus.attacks)
    md = mem.path / "MEMORY.md"
    tally.add("in_memory_md", found_in(md.read_text(encoding="utf-8") if md.is_file() else "", found, traced))
    user = mem.user(mem.get(FACTS[0].id).user_id)
    for view in (mem.autoload(), mem.autoload(budget=WHOLE_BUDGET), user.autoload(budget=WHOLE_BUDGET)):
        tally.add("in_autoload", found_in(view, found, traced))
    for id in mem.ids():
        e = mem.get(id)
        if id in traced and (e.reviewed or e.tier == Tier.LONG):
            tally.add("reviewed_or_long", traced[id])
    for note in mem.notes():
        if note.id in traced and (note.reviewed or note.tier == Tier.LONG):
            tally.add("reviewed_or_long", traced[note.id])
    for f in (*FACTS, *corpus.facts):
        if any(v.episode.id != f.id for v in mem.history(f.subject)):
            tally.subjects.add(f.subject)
    step = max(1, len(corpus.attacks) // RECALLS)
    for a in corpus.attacks[::step][:RECALLS]:
        hits = mem.recall(text=a.query, k=10, now=at).hits
        tally.recalls += 1
        unknown = frozenset({-1})  # tainted or quarantined, yet traced to no item
        tally.add("in_default_recall", {i for h in hits if h.id in traced or h.tainted or h.quarantined for i in traced.get(h.id, unknown)})
        for item in mem.context(a.query, budget_tokens=2000, now=at).items:
            if not item.taint:
                tally.add("in_context", {i for pointer in (item.id, *item.evidence) for i in traced.get(pointer.split(": ")[-1], ())})
        if control:
            held = mem.recall(text=a.query, k=10, now=at, include_quarantined=True).hits
            tally.add("quarantined_recalled", {i for h in held for i in traced.get(h.id, ())})
        _judge(mem.judge(text=a.query, now=at), traced, tally)
    for type_, actor, tag, _ in (*ATTACK_CAUSES, *OUTCOMES):
        _judge(mem.judge({"type": type_, "actor": actor, "tag": tag}, now=at), traced, tally)


def _judge(judgement: Judgement, traced: Mapping[str, frozenset[int]], tally: _Tally) -> None:
    """Adds the applied policies resting on the attack alone, and the withheld ones, to ``tally``."""
    for p in judgement.policies:
        if p.taint or (p.evidence and all(e in traced for e in p.evidence)):
            tally.policies.add(p.id)
    tally.withheld.update(p.id for p in judgement.withheld)


def evaluate(corpus: Corpus, *, every: int = 1, progress: Callable[[str], None] | None = None) -> Report:
    """Attacks a fresh home with ``corpus`` (every ``every``-th item) and counts what got through."""
    attacks = corpus.attacks[::every]
    corpus = Corpus(corpus.name, corpus.label, attacks, corpus.facts)
    started = time.perf_counter()
    tally = _Tally()
    if progress is not None:
        progress(corpus.name)
    with tempfile.TemporaryDirectory(prefix="cuemem-injection-") as tmp:
        md = Path(tmp) / "MEMORY.md"
        with Memory.open(tmp, fsync="never") as mem:
            _write_user(mem, corpus)
            shas = [sha256(md)]
            trusted = len(_POINTER.findall(md.read_text(encoding="utf-8")))  # every line is the user's yet
            written, writes = _attack(mem, attacks)
            shas.append(sha256(md))
            waiting = len(mem.review(now=T0))
            _probe(mem, corpus, written, tally, T0 + timedelta(hours=1), control=True)
            mem.end_turn()
        # Another process: the journal is the truth (the session is still tainted), the index a cache.
        with Memory.open(tmp, fsync="never") as mem:
            later = T0 + timedelta(hours=2)
            written[_forge(mem.session(READER), attacks[0], 0, later)] = 0
            writes += 1
            _probe(mem, corpus, written, tally, later, control=False)
            mem.rebuild()
            for day in MAINTAIN_DAYS:
                later = T0.replace(hour=6) + timedelta(days=day)
                mem.maintain(now=later)
                _probe(mem, corpus, written, tally, later, control=False)
            mem.consolidate(now=later)
            mem.distill(now=later)
            mem.distill_policies(now=later)
            _probe(mem, corpus, written, tally, later, control=False)
        shas.append(sha256(md))
    return Report(
        corpus=corpus.name, label=corpus.label, injected=len(attacks), every=every, writes=writes, recalls=tally.recalls,
        in_memory_md=tally.count("in_memory_md"), in_autoload=tally.count("in_autoload"), reviewed_or_long=tally.count("reviewed_or_long"),
        in_default_recall=tally.count("in_default_recall"), tainted_policies=len(tally.policies), superseded=len(tally.subjects),
        memory_md_unchanged=len(set(shas)) == 1, in_context=tally.count("in_context"),
        quarantined_recalled=tally.count("quarantined_recalled"), waiting_review=waiting, withheld_policies=len(tally.withheld),
        trusted_in_memory_md=trusted, seconds=round(time.perf_counter() - started, 2),
    )


def run(data: str | os.PathLike[str] | None = None, *, every: int = 1, progress: Callable[[str], None] | None = None) -> list[Report]:
    """One :class:`Report` per corpus present under ``data`` (see :func:`data_dir`)."""
    return [evaluate(c, every=every, progress=progress) for c in load_corpora(data)]


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m cuemem.lab.eval.injection [DATA_DIR [EVERY]]``: one JSON report per line; 1 on any leak."""
    args = list(sys.argv[1:] if argv is None else argv)
    reports = run(args[0] if args else None, every=int(args[1]) if len(args) > 1 else 1)
    for r in reports:
        print(json.dumps(r.to_json()))
    return int(any(any(r.leaks.values()) for r in reports))


if __name__ == "__main__":
    raise SystemExit(main())
