"""Which tools a simulated model calls for a message, and with what JSON arguments.

Each clause of the message ("..., and ...") picks the tool whose name and description share the
most words with it; a tool is called once per value of an enum parameter the message names
("at Osaka, and at Nagoya" -> two calls). Arguments come from what the message says (emails,
dates and times, quoted titles, currency names, numbers with their units, codes like SKU-1042),
matched to parameters by name, format and description; required parameters the message says
nothing about get plausible defaults, optional ones are left out.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from random import Random
from typing import Any

_WORDS = re.compile(r"[a-z]{3,}")
_CLAUSES = re.compile(r"[.?!;]\s+|,\s+|\s+and\s+", re.IGNORECASE)
_EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")
_CODE = re.compile(r"\b[A-Z]{2,}-\d+\b")
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_MONTHS = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
]
_MONTH = r"(" + "|".join(m[:3] + r"[a-z]*" for m in _MONTHS) + r")"
_DAY_MONTH_YEAR = re.compile(rf"\b(\d{{1,2}})\s+{_MONTH}\s+(\d{{4}})\b", re.IGNORECASE)
_MONTH_DAY_YEAR = re.compile(rf"\b{_MONTH}\s+(\d{{1,2}}),?\s+(\d{{4}})\b", re.IGNORECASE)
_TIME = re.compile(r"\b(\d{1,2}):(\d{2})\s*(am|pm)?\b", re.IGNORECASE)
_NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?:\s*-\s*|\s+)?([A-Za-z]*)")
_QUOTED = re.compile(r"[\"“]([^\"”]{2,80})[\"”]")
_CAPITALISED = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-z]+(?:\s[A-Z][a-z]+)?)")
_CURRENCIES = {
    "USD": ("us dollar", "dollar", "usd"),
    "EUR": ("euro", "eur"),
    "JPY": ("yen", "jpy"),
    "GBP": ("pound", "sterling", "gbp"),
    "CNY": ("yuan", "renminbi", "cny"),
    "CHF": ("swiss franc", "chf"),
}
_TIME_ZONES = {
    "tokyo": "Asia/Tokyo",
    "osaka": "Asia/Tokyo",
    "paris": "Europe/Paris",
    "london": "Europe/London",
    "berlin": "Europe/Berlin",
    "new york": "America/New_York",
    "utc": "UTC",
}
_IGNORED_TEXT = """the and for with from that this what when where which into about please can
    you get set use tool function return returns current given using your will are was has have
    one two how many need"""
_IGNORED = frozenset(_IGNORED_TEXT.split())
_DEFAULT_DATE = "2026-05-01"


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # JSON text


def _function(tool: Any) -> Mapping[str, Any]:
    if isinstance(tool, Mapping) and isinstance(tool.get("function"), Mapping):
        return tool["function"]
    return {}


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _properties(schema: Any) -> Mapping[str, Any]:
    return _mapping(schema.get("properties") if isinstance(schema, Mapping) else None)


def _stems(text: str) -> set[str]:
    return {w[:5] for w in _WORDS.findall(text.lower()) if w not in _IGNORED}


def _tool_words(tool: Any) -> tuple[set[str], set[str]]:
    """Stems of the tool's name and description, and of its parameter names and enum values."""
    fn = _function(tool)
    named = _stems(str(fn.get("name", "")).replace("_", " ") + " " + str(fn.get("description")))
    schema: set[str] = set()
    for name, prop in _properties(fn.get("parameters")).items():
        schema |= _stems(str(name).replace("_", " "))
        if isinstance(prop, Mapping) and isinstance(prop.get("enum"), list):
            schema |= _stems(" ".join(str(v) for v in prop["enum"]))
    return named, schema


def tool_score(tool: Any, text: str) -> tuple[int, int]:
    """(name and description words, parameter words) of the tool that ``text`` uses."""
    named, schema = _tool_words(tool)
    stems = _stems(text)
    return len(named & stems), len(schema & stems)


def _best_tool(tools: list[Any], text: str) -> Any:
    """The tool whose name or description ``text`` uses most (parameters break ties), or None."""
    scored = [(tool_score(t, text), -i) for i, t in enumerate(tools)]
    best = max(scored, default=None)
    return tools[-best[1]] if best is not None and best[0][0] > 0 else None


def pick_tools(tools: list[Any], message: str) -> list[Any]:
    """The tools the message calls for: the best one for each of its clauses."""
    named = [t for t in tools if _function(t).get("name")]
    chosen: list[Any] = []
    for clause in _CLAUSES.split(message):
        tool = _best_tool(named, clause)
        if tool is not None and tool not in chosen:
            chosen.append(tool)
    if not chosen and (tool := _best_tool(named, message)) is not None:
        chosen.append(tool)
    return chosen[:3]


class _Message:
    """What a message offers as argument values; each value is handed out once."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lower = text.lower()
        self.emails = _EMAIL.findall(text)
        self.codes = _CODE.findall(text)
        self.quoted = _QUOTED.findall(text)
        self.date = _find_date(text)
        self.time = _find_time(text)
        self.currencies = _find_currencies(self.lower)
        self.places = [m for m in _CAPITALISED.findall(text) if m not in ("I", "Please")]
        rest = text
        for pattern in (_EMAIL, _CODE, _ISO_DATE, _DAY_MONTH_YEAR, _MONTH_DAY_YEAR, _TIME):
            rest = pattern.sub(" ", rest)
        # Each number with the word after it ("45-minute", "250 US"), to match it by unit.
        self.numbers = [(float(n), unit.lower()) for n, unit in _NUMBER.findall(rest)]

    def number_for(self, name: str) -> float | None:
        stem = name.lower().split("_")[-1][:3]
        for i, (_, unit) in enumerate(self.numbers):
            if stem and unit.startswith(stem):
                return self.numbers.pop(i)[0]
        return self.numbers.pop(0)[0] if self.numbers else None


def _find_date(text: str) -> str | None:
    if found := _ISO_DATE.search(text):
        return found.group(0)
    if found := _DAY_MONTH_YEAR.search(text):
        day, month, year = found.groups()
    elif found := _MONTH_DAY_YEAR.search(text):
        month, day, year = found.groups()
    else:
        return None
    number = next(i for i, m in enumerate(_MONTHS) if m.startswith(month[:3].lower())) + 1
    return f"{year}-{number:02d}-{int(day):02d}"


def _find_time(text: str) -> str | None:
    found = _TIME.search(text)
    if not found:
        return None
    hour, minute, half = int(found.group(1)), found.group(2), (found.group(3) or "").lower()
    hour += 12 if half == "pm" and hour < 12 else 0
    hour -= 12 if half == "am" and hour == 12 else 0
    return f"{hour:02d}:{minute}"


def _find_currencies(lower: str) -> list[str]:
    """ISO codes of the currencies a message names, in the order it names them."""
    hits: list[tuple[int, str]] = []
    for code, names in _CURRENCIES.items():
        positions = [m.start() for n in names for m in re.finditer(rf"\b{n}", lower)]
        if positions:
            hits.append((min(positions), code))
    return [code for _, code in sorted(hits)]


def _said(name: str, schema: Mapping[str, Any], msg: _Message) -> Any:
    """A string the message gives for this parameter, or None."""
    key = name.lower()
    fmt = str(schema.get("format", ""))
    about = str(schema.get("description", "")).lower()
    if fmt == "email" or "email" in key:
        return msg.emails.pop(0) if msg.emails else None
    if "zone" in key or "iana" in about:
        return next((tz for city, tz in _TIME_ZONES.items() if city in msg.lower), None)
    if fmt == "date-time" or "iso 8601" in about or key in ("start", "end", "datetime", "when"):
        return f"{msg.date}T{msg.time or '09:00'}" if msg.date else None
    if fmt == "date" or "date" in key:
        return msg.date
    if "currency" in key or "iso 4217" in about:
        if not msg.currencies:
            return None
        return msg.currencies.pop(-1 if key.startswith(("to", "target")) else 0)
    if key in ("sku", "id", "code") or key.endswith("_id") or _CODE.search(about.upper()):
        return msg.codes.pop(0) if msg.codes else None
    if fmt in ("uri", "url") or key in ("url", "uri", "link"):
        return None
    if any(k in key for k in ("city", "location", "place", "destination", "origin", "country")):
        return msg.places.pop(0) if msg.places else None
    if any(k in key for k in ("lang", "locale")):
        return "ja" if re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", msg.text) else "en"
    if msg.quoted and key in ("title", "name", "subject", "summary", "label", "topic"):
        return msg.quoted.pop(0)
    if any(k in key for k in ("query", "text", "prompt", "question", "message", "content")):
        return msg.text.strip()[:120]
    return None


def _default_string(name: str, schema: Mapping[str, Any]) -> str:
    key = name.lower()
    fmt = str(schema.get("format", ""))
    if fmt == "email" or "email" in key:
        return "user@example.com"
    if fmt in ("uri", "url") or key in ("url", "uri", "link"):
        return "https://example.com"
    if fmt == "date" or "date" in key:
        return _DEFAULT_DATE
    return key.replace("_", " ")


def _value(name: str, schema: Mapping[str, Any], msg: _Message, required: bool) -> Any:
    """The argument for one parameter; None leaves an optional parameter out."""
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        mentioned = [v for v in enum if str(v).lower() in msg.lower]
        return mentioned[0] if mentioned else (enum[0] if required else None)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind in ("number", "integer"):
        number = msg.number_for(name)
        if number is None and not required:
            return None
        low, high = schema.get("minimum"), schema.get("maximum")
        number = number if number is not None else (low if isinstance(low, int | float) else 1)
        number = max(number, low) if isinstance(low, int | float) else number
        number = min(number, high) if isinstance(high, int | float) else number
        return int(number) if kind == "integer" else number
    if kind == "boolean":
        return True if required else None
    if kind == "array":
        items = _mapping(schema.get("items"))
        values: list[Any] = []
        while (value := _value(name, items, msg, required=False)) is not None and len(values) < 8:
            values.append(value)
            if items.get("format") != "email" and "email" not in name.lower():
                break
        if not values and required:
            values = [_value(name, items, msg, required=True)]
        return values or None
    if kind == "object":
        return arguments_for(schema, msg) if required else None
    said = _said(name, schema, msg)
    return said if said is not None or not required else _default_string(name, schema)


def arguments_for(schema: Mapping[str, Any], msg: _Message) -> dict[str, Any]:
    required = [r for r in schema.get("required") or () if isinstance(r, str)]
    args: dict[str, Any] = {}
    for name, prop in _properties(schema).items():
        value = _value(name, prop if isinstance(prop, Mapping) else {}, msg, name in required)
        if value is not None:
            args[name] = value
    for name in required:  # required but not described under properties
        args.setdefault(name, _default_string(name, {}))
    return args


def _fan_out(tool: Any, message: str) -> list[dict[str, Any]]:
    """One {enum parameter: value} per value the message names of a required enum parameter;
    several values mean several independent calls."""
    params = _function(tool).get("parameters")
    required = (params.get("required") or ()) if isinstance(params, Mapping) else ()
    lower = message.lower()
    for name, prop in _properties(params).items():
        if name in required and isinstance(prop, Mapping) and isinstance(prop.get("enum"), list):
            named = [v for v in prop["enum"] if str(v).lower() in lower]
            if len(named) > 1:
                return [{name: v} for v in named[:4]]
    return []


def make_calls(tools: list[Any], message: str, rng: Random, quality: float = 1.0) -> list[ToolCall]:
    """The calls of ``tools`` for ``message``; of several, a weaker model may miss one."""
    calls = []
    for tool in tools:
        fn = _function(tool)
        params = _mapping(fn.get("parameters"))
        for variant in _fan_out(tool, message) or [{}]:
            args = arguments_for(params, _Message(message)) | variant
            call_id = "chatcmpl-tool-" + "".join(rng.choice("0123456789abcdef") for _ in range(32))
            calls.append(ToolCall(call_id, str(fn["name"]), json.dumps(args, ensure_ascii=False)))
    if len(calls) > 1 and rng.random() < (1.0 - quality):
        calls.pop(rng.randrange(len(calls)))
    return calls
