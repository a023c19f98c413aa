"""Vocabulary of the demo year: the cast, the companies, the projects and the sentences.

Everything here is a fixed table (no randomness), so the same seed always draws from the
same vocabulary. A sentence template names its slots in braces; :mod:`cuemem.lab.demo.year`
fills them. The slots ``person``, ``person2``, ``company`` and ``vendor`` are the actors: an
episode's ``actors`` are exactly the ones its sentence mentions.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass, field

from ...schema.enums import COMMON_TYPES

__all__ = [
    "ACTOR_SLOTS",
    "BUGKINDS",
    "CAUSES",
    "COMPANIES",
    "DEALS",
    "DEPTS",
    "FEATURES",
    "MILESTONES",
    "MONTH_NAMES",
    "PEOPLE",
    "PROJECTS",
    "RISK_ITEMS",
    "ROLES",
    "SERVICES",
    "SKILLS",
    "STANDALONE",
    "STORYLINES",
    "SYMPTOMS",
    "TAGS",
    "TYPES",
    "USER_NAMES",
    "WEEKDAYS",
    "Step",
    "Storyline",
    "Template",
    "slug",
]

TYPES: tuple[str, ...] = COMMON_TYPES
"""Episode types, as in the ``type`` field."""

TAGS: tuple[str, ...] = (
    "legal",
    "pricing",
    "oncall",
    "hiring",
    "security",
    "customer",
    "roadmap",
    "budget",
    "infra",
    "performance",
    "compliance",
    "vendor",
    "onboarding",
    "postmortem",
    "data",
)
"""The tag vocabulary."""

USER_NAMES: tuple[str, ...] = (
    "alice",
    "bob",
    "carol",
    "dave",
    "erin",
    "frank",
    "grace",
    "heidi",
    "ivan",
    "judy",
    "mallory",
    "niaj",
)
"""Owners of the memories; user ids are ``"u-" + name``."""

_FIRST_NAMES: tuple[str, ...] = (
    "Priya", "Caroline", "Marcus", "Haruto", "Yui", "Sofia", "Liam", "Amara", "Kenji", "Elena",
    "Omar", "Grace", "Mateo", "Aisha", "Noah", "Mei", "Lucas", "Fatima", "Daniel", "Sakura",
    "Ravi", "Chloe", "Diego", "Hana", "Ethan", "Zara", "Tomas", "Ingrid", "Kwame", "Nadia",
    "Oliver", "Leila", "Ryo", "Isabel", "Samuel", "Anya", "Felix", "Mariam", "Jonas", "Keiko",
    "Arjun", "Lucia", "Victor", "Emma", "Tariq", "Freya", "Hiroshi", "Camila", "Ben", "Olga",
    "Andre", "Rosa", "Yusuf", "Nora", "Sven", "Aiko", "Paulo", "Divya", "Jamal", "Clara",
)  # fmt: skip

_LAST_NAMES: tuple[str, ...] = (
    "Shah", "Tanaka", "Okafor", "Novak", "Garcia", "Kim", "Nguyen", "Rossi", "Schmidt", "Haddad",
    "Sato", "Johansson", "Mensah", "Kowalski", "Silva", "Chen", "Patel", "Dubois", "Ivanova",
    "Yamamoto", "Fischer", "Costa", "Reyes", "Larsen", "Ahmed", "Moreau", "Suzuki", "Brennan",
    "Osei", "Lindqvist", "Herrera", "Park", "Ferreira", "Nakamura", "Weber", "Ali", "Kovacs",
    "Murphy", "Singh", "Alvarez", "Watanabe", "Berg", "Adeyemi", "Romano", "Cohen", "Das", "Ito",
    "Walsh", "Petrov", "Morales",
)  # fmt: skip

PEOPLE: tuple[str, ...] = tuple(
    f"{_FIRST_NAMES[i % len(_FIRST_NAMES)]} "
    f"{_LAST_NAMES[(3 * (i % len(_FIRST_NAMES)) + 11 * (i // len(_FIRST_NAMES))) % len(_LAST_NAMES)]}"
    for i in range(5 * len(_FIRST_NAMES))
)
"""The cast: 300 distinct people, most frequent first in the global ranking."""

COMPANIES: tuple[str, ...] = (
    "Acme", "Globex", "Initech", "Northwind", "Contoso", "Fabrikam", "Tailspin", "Wingtip",
    "Litware", "Proseware", "Woodgrove", "Lumen Labs", "Vertex Logistics", "Orbital Foods",
    "Harbor Health", "Cobalt Energy", "Brightline", "Pinecrest", "Redwood Analytics",
    "Silverlake Media", "Bluefin Retail", "Quantix", "Nimbus Cloud", "Everpeak", "Solstice Bank",
    "Meridian Insurance", "Polaris Freight", "Kestrel Air", "Aurora Pharma", "Granite Works",
    "Tidewater", "Summit Outdoor", "Cascade Mobility", "Ironclad Security", "Keystone Legal",
    "Lighthouse Education", "Maple Grocers", "Nova Robotics", "Oakridge Capital", "Prism Design",
    "Quarry Games", "Riverbend Hotels", "Sapphire Telecom", "Terra Farms", "Unity Clinics",
    "Vantage Auto", "Willow Homes", "Xenon Chips", "Yellowstone Travel", "Zephyr Wind",
    "Atlas Shipping", "Beacon Media", "Cedar Bank", "Delta Textiles", "Ember Studios",
    "Falcon Drones", "Gemini Biotech", "Horizon Telecom", "Indigo Fashion", "Juniper Foods",
    "Kite Payments", "Lotus Wellness", "Mosaic Publishing", "Nexus Data", "Onyx Mining",
    "Pioneer Seeds", "Quill Software", "Radiant Solar", "Sequoia Partners", "Trident Marine",
    "Upland Dairy", "Velvet Cosmetics", "Westbrook Schools", "Yonder Maps", "Zenith Optics",
    "Apex Charter", "Bramble Coffee", "Copperline", "Driftwood Furniture", "Evergreen Logistics",
)  # fmt: skip
"""Customers, vendors and competitors: 80, most frequent first."""

PROJECTS: tuple[str, ...] = (
    "billing v2", "search migration", "mobile app", "data warehouse", "SSO rollout",
    "onboarding flow", "pricing page", "partner API", "usage dashboard", "audit log", "EU region",
    "offline mode", "notifications revamp", "checkout redesign", "admin console",
    "reporting exports", "fraud scoring", "customer portal", "status page", "design system",
    "CI speedup", "Kubernetes move", "cost dashboard", "self-serve trials", "role-based access",
    "webhooks v2", "analytics SDK", "help center", "invoice engine", "recommendations",
)  # fmt: skip

SERVICES: tuple[str, ...] = (
    "checkout", "auth", "payments API", "search", "notifications", "billing", "ingest pipeline",
    "web app", "mobile API", "reporting service", "webhook relay", "job scheduler", "email sender",
    "file storage", "sync service", "feature flags", "rate limiter", "session store",
    "image resizer", "export worker", "audit service", "cache tier", "message queue", "CDN",
)  # fmt: skip

SYMPTOMS: tuple[str, ...] = (
    "latency", "error spike", "outage", "memory leak", "queue backlog", "certificate expiry",
    "disk pressure", "timeouts", "replication lag", "5xx storm",
)  # fmt: skip

CAUSES: tuple[str, ...] = (
    "a bad config push", "connection pool exhaustion", "a noisy neighbour", "an expired certificate",
    "a slow schema migration", "a retry storm", "a vendor API outage", "a missing index",
    "a runaway cron job", "a DNS change",
)  # fmt: skip

BUGKINDS: tuple[str, ...] = (
    "duplicate emails", "wrong invoice totals", "login loops", "crashes on upload",
    "stale dashboards", "missing webhooks", "timezone errors", "slow exports", "broken links",
)  # fmt: skip

ROLES: tuple[str, ...] = (
    "staff SRE", "backend engineer", "frontend engineer", "product designer", "data engineer",
    "engineering manager", "account executive", "solutions engineer", "support lead",
    "security engineer", "product manager", "data scientist", "recruiter", "technical writer",
    "QA engineer", "mobile engineer",
)  # fmt: skip

SKILLS: tuple[str, ...] = (
    "distributed systems", "Rust", "incident response", "SQL", "design critique", "negotiation",
    "mentoring", "Kubernetes", "TypeScript", "experiment design",
)  # fmt: skip

DEPTS: tuple[str, ...] = ("engineering", "sales", "support", "finance", "marketing", "operations", "data", "security")

DEALS: tuple[str, ...] = (
    "renewal", "expansion", "pilot", "upsell", "enterprise plan", "data add-on", "multi-year deal",
    "partnership",
)  # fmt: skip

MILESTONES: tuple[str, ...] = ("beta", "GA", "migration", "launch", "rollout", "pilot")

FEATURES: tuple[str, ...] = (
    "bulk export", "dark mode", "SAML support", "the audit trail", "custom roles", "CSV import",
    "usage alerts", "saved filters",
)  # fmt: skip

RISK_ITEMS: tuple[str, ...] = (
    "the data migration", "vendor sign-off", "load testing", "the security review",
    "the payments integration", "localization", "app store review",
)  # fmt: skip

WEEKDAYS: tuple[str, ...] = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")

MONTH_NAMES: tuple[str, ...] = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip

ACTOR_SLOTS: tuple[str, ...] = ("person", "person2", "company", "vendor")
"""Slots whose values are actors."""

_SLUG_JUNK = re.compile(r"[^a-z0-9]+")


def slug(value: str) -> str:
    """``"Lumen Labs"`` -> ``"lumen-labs"``: lower case, runs of other characters to one dash."""
    return _SLUG_JUNK.sub("-", value.lower()).strip("-")


def _slots(text: str) -> tuple[str, ...]:
    names = [name for _, name, _, _ in string.Formatter().parse(text) if name]
    return tuple(dict.fromkeys(names))


@dataclass(frozen=True)
class Template:
    """A stand-alone episode: its type, sentence, outcome, natural tags and subject key.

    ``subject`` is itself a template over the sentence's slots (``*_slug`` forms allowed).
    """

    type: str
    text: str
    outcome: str | None
    tags: tuple[str, ...] = ()
    subject: str = ""
    actor_slots: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "actor_slots", tuple(s for s in _slots(self.text) if s in ACTOR_SLOTS))


@dataclass(frozen=True)
class Step:
    """One episode of a storyline; ``neg_bias`` shifts the odds that the story ends badly."""

    type: str
    text: str
    outcome: str
    tags: tuple[str, ...] = ()
    neg_bias: float = 0.0
    actor_slots: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "actor_slots", tuple(s for s in _slots(self.text) if s in ACTOR_SLOTS))


@dataclass(frozen=True)
class Storyline:
    """A recurring subject told over weeks: an opening, some middle steps, then won or lost.

    Attributes:
        name: the kind of story ("deal", "incident", ...).
        subject: the subject key template, shared by every episode of one story.
        pinned: slots that keep their value across the story's episodes.
        opening: one of these starts the story.
        middle: each is included with some probability, in this order.
        won: the positive ending.
        lost: the negative ending.
        gap_days: the range of days between consecutive steps.
        weekend_ok: the chance a step falling on a weekend stays there.
        base_negative: the chance of ``lost`` before the middle steps' ``neg_bias``.
        weight: how often this kind of story starts, relative to the others.
    """

    name: str
    subject: str
    pinned: tuple[str, ...]
    opening: tuple[Step, ...]
    middle: tuple[Step, ...]
    won: Step
    lost: Step
    gap_days: tuple[int, int]
    weekend_ok: float
    base_negative: float
    weight: float


STANDALONE: tuple[Template, ...] = (
    Template("note", "Note to self: {person} prefers short written updates over meetings.", None,
             (), "people-{person_slug}"),
    Template("note", "{person} mentioned that {company} is reorganizing their {dept} team.", None,
             (), "{company_slug}-account"),
    Template("note", "Reminder: {person} is out for {n} days from {month_day}; {person2} covers {project}.",
             None, (), "{project_slug}-coverage"),
    Template("note", "Idea from {person}: bundle {project} with the {deal} for mid-market accounts.", None,
             ("pricing",), "{project_slug}-ideas"),
    Template("note", "{person} at {company} likes to get numbers before the call, not during it.", None,
             ("customer",), "people-{person_slug}"),
    Template("meeting", "Weekly sync with {person} on {project}: agreed to cut scope for the {quarter} milestone.",
             "positive", ("roadmap",), "{project_slug}-sync"),
    Template("meeting", "1:1 with {person}: wants more ownership of {project}; we agreed on a growth plan.",
             "positive", (), "1on1-{person_slug}"),
    Template("meeting", "Sprint planning with {person} and {person2}: {n} stories committed, {project} carry-over is high.",
             "pending", (), "{project_slug}-sprint"),
    Template("meeting", "Meeting with {person} at {company} ran long; no decision on the {deal}, revisit next week.",
             "pending", ("customer",), "{company_slug}-account"),
    Template("meeting", "Quarterly business review with {company}: usage down {pct}% and {person} raised churn risk.",
             "negative", ("customer",), "{company_slug}-account"),
    Template("decision", "Decided with {person} to move {project} to {weekday} releases.",
             "positive", (), "{project_slug}-process"),
    Template("decision", "We decided not to renew {company} as a vendor; {person} will migrate us off by {quarter}.",
             "pending", ("vendor", "budget"), "vendor-{company_slug}"),
    Template("decision", "Decision: freeze non-critical changes to {service} until the {quarter} audit; "
             "{person} signs off exceptions.", "pending", ("compliance",), "{service_slug}-change-freeze"),
    Template("decision", "Decided to raise the priority of {project} after {person}'s feedback from {company}.",
             "positive", ("customer", "roadmap"), "{project_slug}-priority"),
    Template("incident", "{service} returned {err}% errors for {n} minutes; {person} rolled back and it recovered.",
             "positive", ("oncall",), "{service_slug}-errors"),
    Template("incident", "Pager went off at {time}: {service} disk filled up; {person} cleared logs, root cause still open.",
             "pending", ("oncall", "infra"), "{service_slug}-disk"),
    Template("incident", "Outage in {service} for {n} minutes hit {company}; {person} is drafting the customer note.",
             "negative", ("oncall", "customer"), "{service_slug}-outage"),
    Template("deal", "{company} asked {person} for a quote on {n} extra seats; sent a ${amount}k proposal.",
             "pending", ("pricing",), "{company_slug}-seats"),
    Template("deal", "Closed a small {deal} with {company}: ${amount}k, signed by {person}.",
             "positive", ("pricing",), "{company_slug}-account"),
    Template("deal", "{company} put the {deal} on hold; {person} says budget is frozen until {quarter}.",
             "negative", ("budget",), "{company_slug}-account"),
    Template("call", "Call with {person} at {company} about the {deal}: they want a {pct}% discount before {quarter}; "
             "legal review pending.", "pending", ("pricing", "legal"), "{company_slug}-account"),
    Template("call", "Quick call with {person} from {company}: the {project} demo went well and they want a pilot.",
             "positive", ("customer",), "{company_slug}-{project_slug}"),
    Template("call", "Support call with {person} from {company}: {service} exports are too slow for their month-end close.",
             "negative", ("customer", "performance"), "{service_slug}-performance"),
    Template("call", "Call with {person} about staffing {project}; {person2} can join in {n} weeks.",
             "pending", ("hiring",), "{project_slug}-staffing"),
    Template("email", "Email from {person} at {company}: invoice {invoice} is {n} days overdue.",
             "negative", ("budget",), "{company_slug}-billing"),
    Template("email", "{person} sent the {project} weekly update: {pct}% done, on track for {quarter}.",
             "positive", ("roadmap",), "{project_slug}-status"),
    Template("email", "Emailed {person} the revised SOW for the {company} {deal}; waiting on their procurement.",
             "pending", ("legal",), "{company_slug}-account"),
    Template("email", "{person} at {company} asked for our SOC 2 report before their security review.",
             "pending", ("security", "compliance"), "{company_slug}-security-review"),
    Template("review", "Performance review with {person}: exceeded goals on {project}, discussed the promotion timeline.",
             "positive", (), "perf-{person_slug}"),
    Template("review", "Code review of {person}'s {service} change: needs tests for the retry path.",
             "pending", (), "{service_slug}-code-review"),
    Template("review", "Security review of {service} with {person}: {n} findings, {m} of them high severity.",
             "negative", ("security",), "{service_slug}-security"),
    Template("review", "Went through {company}'s contract redlines with {person}: the liability cap is still unacceptable.",
             "negative", ("legal",), "{company_slug}-contract"),
    Template("plan", "Planned the {quarter} roadmap with {person}: {project} first, then {project2}.",
             "pending", ("roadmap",), "roadmap-{quarter_slug}"),
    Template("plan", "Drafted the {quarter} hiring plan with {person}: {n} engineers, {m} of them in {dept}.",
             "pending", ("hiring", "budget"), "hiring-plan-{quarter_slug}"),
    Template("plan", "Agreed the {service} migration plan with {person}: dual-write for {n} weeks, then cut over.",
             "positive", ("infra",), "{service_slug}-migration"),
    Template("bug", "{person} found a race in {service} that double-charges retries; filed {ticket}.",
             "negative", ("data",), "{service_slug}-double-charge"),
    Template("bug", "Bug triage with {person}: {n} new bugs in {project}, {m} marked P1.",
             "pending", (), "{project_slug}-triage"),
    Template("bug", "{ticket} fixed by {person}: {service} no longer drops webhooks on timeout.",
             "positive", (), "{service_slug}-webhooks"),
    Template("release", "Released {service} {version} with {person}: smooth rollout, no alerts.",
             "positive", (), "{service_slug}-releases"),
    Template("release", "Rolled back {service} {version}: {person} saw memory growth after the deploy.",
             "negative", ("infra",), "{service_slug}-releases"),
    Template("release", "Gave {company} early access to {project}; {person} runs the feedback calls.",
             "positive", ("customer",), "{project_slug}-early-access"),
    Template("hire", "Interviewed {person} for the {role} role: great on {skill}; moving to the onsite.",
             "pending", ("hiring",), "hire-{role_slug}"),
    Template("hire", "{person} joined as {role}; {person2} is the onboarding buddy.",
             "positive", ("hiring", "onboarding"), "onboarding-{person_slug}"),
    Template("hire", "{person} withdrew from the {role} process and accepted an offer at {company}.",
             "negative", ("hiring",), "hire-{role_slug}"),
)  # fmt: skip
"""Stand-alone episodes, several per type."""

STORYLINES: tuple[Storyline, ...] = (
    Storyline(
        name="deal",
        subject="{company_slug}-{deal_slug}",
        pinned=("company", "person", "deal"),
        opening=(
            Step("call", "Intro call with {person} at {company} about the {deal}: they asked for a proposal by {weekday}.",
                 "pending", ("customer",)),
            Step("email", "{person} from {company} reached out about the {deal}; set up a discovery call for {weekday}.",
                 "pending"),
        ),
        middle=(
            Step("email", "{person} replied on the {company} {deal}: they want a {pct}% discount before {quarter}.",
                 "pending", ("pricing",), 0.1),
            Step("meeting", "Negotiation with {person} and {person2} on the {company} {deal}: "
                 "procurement wants net-{net} payment terms.", "pending", ("pricing",), 0.05),
            Step("review", "Legal review of the {company} {deal} contract: {n} redlines open on liability and data residency.",
                 "pending", ("legal", "compliance"), 0.2),
            Step("call", "Call with {person} at {company}: the {deal} needs sign-off from their CFO; we sent ROI numbers.",
                 "pending", ("budget",), 0.05),
            Step("decision", "Decided to offer {company} a {pct}% discount on the {deal} for a {years}-year term.",
                 "pending", ("pricing",), -0.15),
        ),
        won=Step("deal", "{company} signed the {deal}: ${amount}k a year over {years} years; "
                 "{person} sent the countersigned order form.", "positive", ("pricing",)),
        lost=Step("deal", "Lost the {company} {deal}: {person} told us they went with a competitor on price.",
                  "negative", ("pricing",)),
        gap_days=(3, 12),
        weekend_ok=0.05,
        base_negative=0.3,
        weight=0.28,
    ),
    Storyline(
        name="incident",
        subject="{service_slug}-{symptom_slug}",
        pinned=("service", "symptom", "person", "company", "cause", "ticket"),
        opening=(
            Step("incident", "Paged at {time} for {service} {symptom}; {person} took incident command.",
                 "negative", ("oncall",)),
            Step("incident", "{company} reported {service} {symptom}; {person} opened an incident and paged on-call.",
                 "negative", ("oncall", "customer")),
        ),
        middle=(
            Step("call", "Bridge call on the {service} {symptom} with {person} and {person2}: rolled back the last deploy, "
                 "errors down to {err}%.", "pending", ("oncall",)),
            Step("bug", "Filed {ticket} for the {service} {symptom}; {person} thinks the root cause is {cause}.",
                 "pending", ("infra",), 0.05),
            Step("email", "Sent {company} an update on the {service} {symptom}; {person} promised a full RCA by {weekday}.",
                 "pending", ("customer",), 0.1),
            Step("release", "Shipped a fix for the {service} {symptom} in {version}; {person} says the graphs are flat again.",
                 "positive", (), -0.15),
        ),
        won=Step("review", "Postmortem for the {service} {symptom} with {person}: {n} action items, every one with an owner.",
                 "positive", ("postmortem",)),
        lost=Step("incident", "The {service} {symptom} came back: {cause} again; {person} escalated to our vendor {vendor}.",
                  "negative", ("oncall", "vendor")),
        gap_days=(1, 4),
        weekend_ok=0.6,
        base_negative=0.25,
        weight=0.18,
    ),
    Storyline(
        name="hiring",
        subject="hire-{role_slug}",
        pinned=("role", "person", "skill"),
        opening=(
            Step("call", "Phone screen with {person} for the {role} opening: strong on {skill}, less so on system design.",
                 "pending", ("hiring",)),
            Step("email", "{person2} referred {person} for the {role} opening; screening call booked for {weekday}.",
                 "pending", ("hiring",)),
        ),
        middle=(
            Step("meeting", "Onsite loop for {person} ({role}): {m} of 5 interviewers inclined to hire.",
                 "pending", ("hiring",), 0.1),
            Step("call", "Reference calls for {person} with {person2}: solid on {skill}, needs support on planning.",
                 "pending", ("hiring",)),
            Step("decision", "Decided to make {person} an offer for {role} at ${salary}k base.",
                 "pending", ("hiring", "budget"), -0.05),
            Step("email", "{person} asked for more equity on the {role} offer; {person2} is checking the budget.",
                 "pending", ("hiring", "budget"), 0.15),
        ),
        won=Step("hire", "{person} accepted the {role} offer and starts on {month_day}.", "positive",
                 ("hiring", "onboarding")),
        lost=Step("hire", "{person} turned down the {role} offer after a counter-offer from {company}.", "negative",
                  ("hiring",)),
        gap_days=(3, 10),
        weekend_ok=0.02,
        base_negative=0.35,
        weight=0.14,
    ),
    Storyline(
        name="project",
        subject="{project_slug}-{milestone_slug}",
        pinned=("project", "milestone", "person", "risk_item", "feature"),
        opening=(
            Step("plan", "Drafted the {project} {milestone} plan with {person}: {n} workstreams, target {quarter}.",
                 "pending", ("roadmap",)),
            Step("meeting", "Kickoff for the {project} {milestone} with {person} and {person2}; {person} owns the timeline.",
                 "pending", ("roadmap",)),
        ),
        middle=(
            Step("meeting", "Status check on the {project} {milestone} with {person}: {pct}% of tickets done, "
                 "{risk_item} is the long pole.", "pending", ("roadmap",), 0.1),
            Step("decision", "Decided with {person} to cut {feature} from the {project} {milestone} to hold the date.",
                 "positive", ("roadmap",), -0.15),
            Step("review", "Design review of the {project} {milestone} with {person}: asked for a load test before sign-off.",
                 "pending", ("performance",)),
            Step("email", "{person} flagged that {risk_item} may delay the {project} {milestone} by {m} weeks.",
                 "pending", ("roadmap",), 0.15),
        ),
        won=Step("release", "Released the {project} {milestone} ({version}); {person} reports {pct}% adoption in week one.",
                 "positive"),
        lost=Step("plan", "The {project} {milestone} slipped to {next_quarter}: {risk_item} blocked it; "
                  "{person} owns the recovery plan.", "negative", ("roadmap",)),
        gap_days=(4, 14),
        weekend_ok=0.03,
        base_negative=0.3,
        weight=0.22,
    ),
    Storyline(
        name="bug",
        subject="{service_slug}-{bugkind_slug}",
        pinned=("service", "bugkind", "person", "company", "ticket"),
        opening=(
            Step("bug", "{person} at {company} reported {bugkind} in {service}; filed {ticket}.", "pending", ("customer",)),
            Step("bug", "{person} found {bugkind} in {service} during QA; filed {ticket}.", "pending"),
        ),
        middle=(
            Step("email", "{person} from {company} chased {ticket} again; they need a fix before {weekday}.",
                 "pending", ("customer",), 0.1),
            Step("meeting", "Triage of {ticket} with {person}: reproduced the {bugkind} in staging, fix estimated at {m} days.",
                 "pending"),
            Step("review", "Code review for the {ticket} fix with {person}: asked for a regression test.",
                 "pending", (), -0.1),
        ),
        won=Step("release", "Hotfix {version} for {ticket} is out; {company} confirmed the {bugkind} are gone.", "positive"),
        lost=Step("bug", "The fix for {ticket} was reverted: the {bugkind} came back under load; {person} reopened it.",
                  "negative"),
        gap_days=(1, 6),
        weekend_ok=0.1,
        base_negative=0.25,
        weight=0.18,
    ),
)  # fmt: skip
"""Storylines: subjects that recur over weeks, pending until they end well or badly."""
