"""System design documents: requirements, an ASCII architecture diagram, data model, trade-offs."""

from __future__ import annotations

import re

from nvfp4_tui.sim.tokens import count_tokens
from nvfp4_tui.sim.writer import Writer, clauses, numbered_items, topic_terms

_SUBJECT = re.compile(r"\bdesign\s+(?:an?\s+|the\s+)?([^.,:;\n(]{6,70})", re.IGNORECASE)

# Components a simulated architect reaches for: name, the prompt words that call for it, and
# what it is responsible for.
_COMPONENTS: tuple[tuple[str, frozenset[str], str], ...] = (
    ("Sync Service", frozenset({"collaborative", "real-time", "realtime", "sync", "editing"}),
     "merging concurrent edits"),
    ("Presence Service", frozenset({"cursor", "presence", "selection", "users"}),
     "cursor and selection state"),
    ("Search Indexer", frozenset({"search", "index", "query", "ranking"}), "query-time ranking"),
    ("Stream Processor", frozenset({"events", "stream", "streaming", "analytics", "metrics"}),
     "event aggregation"),
    ("Notification Fanout", frozenset({"notification", "notifications", "push", "chat"}),
     "delivery to subscribers"),
    ("Payment Ledger", frozenset({"payment", "payments", "billing", "ledger"}),
     "balances and transfers"),
    ("Media Pipeline", frozenset({"video", "image", "media", "upload"}),
     "transcoding and thumbnails"),
    ("History Store", frozenset({"version", "history", "branching", "audit"}),
     "snapshots and version branches"),
    ("Offline Queue", frozenset({"offline", "reconnect", "mobile"}),
     "edits made while disconnected"),
    ("Link Resolver", frozenset({"url", "shortener", "redirect", "links"}),
     "resolving short codes"),
)  # fmt: skip
_NOT_TABLES = frozenset({"design", "system", "architecture", "requirements", "resolution"})
_FALLBACK_COMPONENTS = (("Core Service", "the request path"), ("Worker Pool", "background jobs"))
_SPINE = ("Clients", "Load Balancer", "API Gateway")
_STORES = ("Primary Database", "Cache")

_BANK: dict[str, tuple[str, ...]] = {
    "quality": (
        "latency",
        "availability",
        "consistency",
        "operability",
        "cost",
        "durability",
        "throughput",
    ),
    "mechanism": (
        "a write-ahead log",
        "idempotent request ids",
        "consistent hashing",
        "per-tenant rate limits",
        "snapshot plus delta replication",
        "a bounded retry budget",
        "backpressure on the ingest path",
        "read replicas behind the cache",
    ),
    "failure": (
        "a regional outage",
        "a slow dependency",
        "a hot partition",
        "a poisoned message",
        "clock skew between nodes",
        "a cache stampede",
    ),
}

_SENTENCES = (
    "The {component} owns {concern} and exposes it through a narrow, versioned API.",
    "We favour {quality} over {quality} here, because users notice a stall before they notice "
    "a stale read.",
    "{mechanism} keeps the {component} correct when {failure} happens.",
    "Under {failure}, the {component} degrades to read-only mode instead of failing outright.",
    "Capacity planning starts from the peak write rate, with headroom of 2x for {failure}.",
    "The main risk is {failure}; we mitigate it with {mechanism}.",
    "Each {component} instance is stateless, so scaling out is a matter of adding replicas.",
    "Operationally, every hop emits traces, so {quality} regressions show up on dashboards "
    "within minutes.",
    "The alternative, {mechanism} everywhere, would cost more {quality} than it buys.",
    "Data for {concern} is partitioned by tenant, which bounds the blast radius of {failure}.",
)


def _subject(prompt: str) -> str:
    match = _SUBJECT.search(prompt)
    return match.group(1).strip() if match else "the proposed system"


def _components(prompt: str) -> list[tuple[str, str]]:
    """(name, responsibility) of the components the prompt calls for."""
    words = set(re.findall(r"[a-z-]+", prompt.lower()))
    picked = [(name, duty) for name, keys, duty in _COMPONENTS if keys & words]
    return picked or list(_FALLBACK_COMPONENTS)


def ascii_diagram(components: list[str]) -> str:
    """Rows of boxes, top to bottom, with arrows fanning out and back in between rows."""
    rows = [[name] for name in _SPINE] + [components, list(_STORES)]
    gap = 3
    # Odd widths everywhere put every single-box row on the same centre column.
    widths = [[len(name) + 4 + (len(name) % 2) for name in row] for row in rows]
    total = max(sum(w) + gap * (len(w) - 1) for w in widths)
    total += 1 - total % 2
    layout: list[tuple[list[str], list[int], list[int]]] = []
    for row, row_widths in zip(rows, widths, strict=True):
        left = (total - (sum(row_widths) + gap * (len(row) - 1))) // 2
        starts, centres = [], []
        for width in row_widths:
            starts.append(left)
            centres.append(left + width // 2)
            left += width + gap
        layout.append((row, starts, centres))

    def line(marks: dict[int, str]) -> str:
        chars = [" "] * total
        for column, mark in marks.items():
            chars[column] = mark
        return "".join(chars).rstrip()

    lines: list[str] = []
    for index, (row, starts, centres) in enumerate(layout):
        if index > 0:
            above = layout[index - 1][2]
            lines.append(line(dict.fromkeys(above, "|")))
            if sorted(above) != sorted(centres):
                low, high = min(above + centres), max(above + centres)
                bar = {c: "-" for c in range(low, high + 1)}
                bar.update(dict.fromkeys(above + centres, "+"))
                lines.append(line(bar))
            lines.append(line(dict.fromkeys(centres, "v")))
        for part in ("border", "name", "border"):
            marks: dict[int, str] = {}
            for name, start, width in zip(row, starts, widths[index], strict=True):
                inner = width - 2
                text = "+" + "-" * inner + "+" if part == "border" else f"|{name.center(inner)}|"
                marks.update({start + i: ch for i, ch in enumerate(text)})
            lines.append(line(marks))
    return "\n".join(lines)


def _data_model(terms: list[str]) -> str:
    """An entity table named for the prompt's main noun and the change log beside it."""
    names = [t.replace("-", "_") for t in terms if t not in _NOT_TABLES]
    entity = names[0] if names else "documents"
    return (
        "```sql\n"
        f"CREATE TABLE {entity} (\n"
        "    id          UUID PRIMARY KEY,\n"
        "    tenant_id   UUID NOT NULL,\n"
        "    version     BIGINT NOT NULL,\n"
        "    body        JSONB NOT NULL,\n"
        "    updated_at  TIMESTAMPTZ NOT NULL DEFAULT now()\n"
        ");\n"
        f"CREATE TABLE {entity}_changes (\n"
        f"    {entity}_id UUID REFERENCES {entity} (id),\n"
        "    seq         BIGINT NOT NULL,\n"
        "    payload     JSONB NOT NULL,\n"
        f"    PRIMARY KEY ({entity}_id, seq)\n"
        ");\n"
        "```"
    )


def write_design(w: Writer, prompt: str) -> None:
    """A design document; a weaker model skips the diagram more often and repeats itself."""
    subject = _subject(prompt)
    picked = _components(prompt)
    components = [name for name, _ in picked]
    terms = topic_terms(prompt)
    slots = {**_BANK, "component": tuple(components), "concern": tuple(d for _, d in picked)}
    w.add(f"# Design: {subject[:1].upper()}{subject[1:]}")
    # Without list items, the parts the prompt asks for (after its first clause, the task);
    # a weaker model drops some of them.
    asked = [c for c in clauses(prompt, limit=12)[1:] if w.chance(0.3 + 0.7 * w.quality)]
    requirements = numbered_items(prompt) or asked or [f"{q} targets" for q in _BANK["quality"][:4]]
    w.add("## 1. Requirements\n\n" + "\n".join(f"- {r}" for r in requirements))
    if w.chance(0.4 + w.quality * 0.6):
        w.add("## 2. High-Level Architecture\n\n```text\n" + ascii_diagram(components) + "\n```")
    w.add(
        "Components:\n"
        + "\n".join(
            f"- **{name}**: owns {duty} and relies on {w.fill('{mechanism}', slots)}."
            for name, duty in picked
        )
    )
    w.add("## 3. Data Model\n\n" + _data_model(terms))
    titles = [*requirements, "Scaling Strategy", "Failure Handling", "Trade-offs"]
    index = 0
    while not w.full():
        title = titles[index % len(titles)]
        w.add(f"## {index + 4}. {title[:1].upper()}{title[1:]}")
        bullets = w.chance(0.5)
        if bullets:
            lines = [f"- {w.sentence(_SENTENCES, slots)}"]
            while len(lines) < 4 and count_tokens("\n".join(lines)) < w.room():
                lines.append(f"- {w.sentence(_SENTENCES, slots)}")
            w.add("\n".join(lines))
        else:
            w.add(w.paragraph(_SENTENCES, slots))
        index += 1
