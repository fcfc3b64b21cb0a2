"""English essays and the reasoning ("thinking") text of the simulated models."""

from __future__ import annotations

import re

from nvfp4_tui.sim.writer import (
    Writer,
    clauses,
    decapitalise,
    first_line,
    numbered_items,
    topic_terms,
)

_SUBJECT = re.compile(
    r"\b(?:essay|article|piece|critique)\s+(?:on|about|analy[sz]ing|exploring|examining)\s+"
    r"(?:the\s+)?([^.:;\n]{6,80})",
    re.IGNORECASE,
)

_SMALL_WORDS = frozenset({"a", "an", "and", "as", "at", "for", "in", "of", "on", "or", "the", "to"})
_DEFAULT_TOPICS = ("technology", "institutions", "knowledge", "labor", "trust", "progress")

_BANK: dict[str, tuple[str, ...]] = {
    "conn": (
        "",
        "",
        "",
        "moreover, ",
        "yet ",
        "in practice, ",
        "at the same time, ",
        "historically, ",
        "crucially, ",
        "still, ",
        "for this reason, ",
        "on closer inspection, ",
    ),
    "thinker": (
        "a careful observer",
        "the skeptic",
        "a historian of technology",
        "the pragmatist",
        "an economist",
        "a moral philosopher",
        "the working engineer",
        "a cautious regulator",
    ),
    "force": (
        "incentives",
        "institutions",
        "habits",
        "markets",
        "social norms",
        "legal frameworks",
        "professional standards",
        "public expectations",
    ),
    "adj": (
        "fragile",
        "contested",
        "underappreciated",
        "durable",
        "ambiguous",
        "decisive",
        "uneven",
        "subtle",
    ),
    "verb": (
        "reshapes",
        "complicates",
        "clarifies",
        "unsettles",
        "reinforces",
        "exposes",
        "redistributes",
        "accelerates",
    ),
    "era": (
        "the printing press",
        "the steam engine",
        "electrification",
        "the telegraph",
        "the spreadsheet",
        "the assembly line",
        "the early internet",
        "double-entry bookkeeping",
    ),
    "group": (
        "workers",
        "citizens",
        "researchers",
        "small firms",
        "teachers",
        "regulators",
        "ordinary users",
        "local communities",
    ),
    "value": (
        "autonomy",
        "fairness",
        "accountability",
        "dignity",
        "security",
        "shared prosperity",
        "privacy",
        "competence",
    ),
}

_SENTENCES = (
    "{conn}the question of {topic} {verb} the way {group} think about {value}.",
    "{conn}{thinker} would point out that {topic} is rarely a purely technical matter; it is "
    "bound up with {force} and with {value}.",
    "when {era} arrived, few predicted how thoroughly it would reorganize {force}, and the same "
    "humility is warranted about {topic}.",
    "{conn}the strongest version of the argument holds that {topic} {verb} the balance between "
    "{group} and the institutions meant to serve them.",
    "critics reply that this account is too tidy, because {force} adapt more slowly than the "
    "technology itself.",
    "{conn}it is tempting to treat {value} as a fixed target, but {topic} shows how {adj} that "
    "target can be.",
    "a more {adj} reading suggests that {topic} does not replace human judgment so much as "
    "relocate it.",
    "{conn}the evidence so far is {adj}: some {group} gain leverage, while others watch their "
    "{value} erode.",
    "consider how {era} changed the meaning of expertise; {topic} may do something similar to "
    "{value}.",
    "{conn}the counterargument deserves a fair hearing, since {thinker} can cite cases where "
    "{force} absorbed the shock.",
    "what matters is not whether {topic} is good or bad in the abstract, but who bears its costs "
    "and who captures its benefits.",
    "{conn}any honest account has to admit uncertainty about {topic}, because the relevant "
    "{force} are still being written.",
    "the analogy with {era} is instructive but imperfect: the pace is faster now, and the "
    "feedback loops are tighter.",
    "{conn}{group} rarely meet {topic} as an abstraction; they meet it in contracts, schedules "
    "and the small print of everyday tools.",
    "if {value} survives this transition, it will be because {group} insisted on it, not "
    "because the technology guaranteed it.",
    "{conn}this is where the debate over {topic} turns {adj}, since reasonable people weigh "
    "{value} against {value} in different ways.",
    "one useful test is to ask what would count as evidence against the optimistic view of "
    "{topic}.",
    "{conn}the history of {era} suggests that the first winners are seldom the lasting ones.",
    "the difficulty is not a lack of ideas but a lack of institutions able to act on them at the "
    "speed {topic} demands.",
    "{conn}a narrow focus on capability hides the quieter ways in which {topic} {verb} {force}.",
    "{conn}{thinker} might object that {value} was never as secure as the nostalgic view implies.",
    "the burden of proof, then, falls on those who claim that {topic} leaves {force} untouched.",
)

_OPENINGS = (
    "Every generation suspects that its own tools are unprecedented, and every generation is "
    "partly right.",
    "Few subjects attract as much confident prediction, and as little careful argument, as "
    "{topic}.",
    "It is easy to write about {topic} as if the outcome were already settled.",
)

_CLOSINGS = (
    "In the end, the case for cautious optimism about {topic} rests less on the technology than "
    "on the willingness of {group} to shape it.",
    "The argument of this essay has been that {topic} is best understood as a contest over "
    "{value}, not as a force of nature.",
    "What remains open is not whether {topic} will change {force}, but whether we will notice "
    "the change in time to steer it.",
)

_SECTION_TITLES = (
    "The Shape of the Problem",
    "Objections and Replies",
    "Lessons from History",
    "Who Gains, Who Pays",
    "The Limits of Prediction",
    "What Follows",
)


def _slots(prompt: str) -> dict[str, tuple[str, ...]]:
    topics = tuple(topic_terms(prompt)) or _DEFAULT_TOPICS
    return {**_BANK, "topic": topics}


def write_essay(w: Writer, prompt: str) -> None:
    """An essay with a title, sections (the prompt's list items when it has them), a conclusion."""
    slots = _slots(prompt)
    topics = slots["topic"]
    headings = w.chance(0.2 + w.quality * 0.8)
    subject = _SUBJECT.search(prompt)
    if subject:
        words = subject.group(1).split()
        title = "The " + " ".join(x if x in _SMALL_WORDS else x[:1].upper() + x[1:] for x in words)
    else:
        title = f"{topics[0].title()} and the Limits of Foresight"
    w.add(f"# {title}")
    closing_reserve = 120
    opening = w.fill(w.rng.choice(_OPENINGS), slots)
    w.add(opening + " " + w.paragraph(_SENTENCES, slots, reserve=closing_reserve))
    # Without list items, the parts the prompt asks for (after its first clause, the task);
    # a weaker model drops some of them.
    asked = [c for c in clauses(prompt, limit=12)[1:] if w.chance(0.3 + 0.7 * w.quality)]
    sections = numbered_items(prompt) or asked or list(_SECTION_TITLES)
    index = 0
    while w.tokens + closing_reserve < w.target_tokens:
        if headings and index % 2 == 0:
            w.add(f"## {sections[(index // 2) % len(sections)]}")
        w.add(w.paragraph(_SENTENCES, slots, reserve=closing_reserve))
        index += 1
    if headings and index:
        w.add("## Conclusion")
    closing = w.fill(w.rng.choice(_CLOSINGS), slots)
    if w.room() > closing_reserve // 2:
        closing += " " + w.paragraph(_SENTENCES[:6], slots)
    w.add(closing)


def write_direct_reply(w: Writer, prompt: str) -> None:
    """The reply of a model that finds no tool fitting the request."""
    w.add("None of the available tools fits this request, so I will answer it directly.")
    w.add(w.paragraph(_SENTENCES, _slots(prompt)))


_THINKING = (
    "I should keep {aim}.",
    "Let me make sure to keep {aim}.",
    "The key point is {point}.",
    "I need to cover {point} before anything else.",
    "Maybe start with {point}, then move on.",
    "Wait, {point} also matters here.",
    "That fits with {point}.",
    "Hmm, {point} could be misread, so I should say it plainly.",
)
_THINKING_BANK = {
    "aim": (
        "the structure easy to follow",
        "the answer within the length limit",
        "the examples concrete",
        "the tone consistent",
        "every requirement addressed",
        "the claims checkable",
    ),
}


def write_reasoning(w: Writer, prompt: str, plan: list[str]) -> None:
    """A model's visible thinking: what was asked, a plan, second thoughts."""
    items = numbered_items(prompt) or clauses(prompt) or ["what was asked"]
    slots = {**_THINKING_BANK, "point": tuple(decapitalise(item) for item in items)}
    w.add(f'The user asks: "{first_line(prompt)}"')
    w.add("Requirements:\n" + "\n".join(f"- {item}" for item in items[:6]))
    steps = plan or ["outline the answer", "write it", "check it against the request"]
    w.add("Plan: " + "; ".join(steps) + ".")
    while not w.full():
        w.add(w.paragraph(_THINKING, slots))
    w.add("Okay, I have what I need. Let me write the answer.")
