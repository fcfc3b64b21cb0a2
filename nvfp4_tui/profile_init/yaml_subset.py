"""The part of YAML that docker-compose files are written in, read without a YAML library.

Read: block mappings and sequences, one-line flow collections (``[a, "b"]``, ``{k: v}``),
plain, single- and double-quoted scalars, ``|`` / ``>`` block scalars and comments. Every
scalar stays a string: the compose reader converts the few values it needs itself, so
``"0"`` and ``0`` read alike. Anchors, aliases, tags and multi-line flow collections are
refused with the line they are on; ``docker compose config`` prints any compose file with
them expanded, in the subset read here.

Why not PyYAML: ``init --from-compose`` is the only reader of YAML in the package, and the
shape it needs is small; a dependency for it would ship a C extension to every install.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

YamlValue = str | list["YamlValue"] | dict[str, "YamlValue"] | None

_NOT_READ = (
    "anchors, aliases and tags are not read here; pass the output of `docker compose config`"
)
_BLOCK_SCALAR = re.compile(r"^[|>][+-]?$")


class YamlError(Exception):
    """Input outside the subset, or not YAML; ``line`` is 1-based."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line


@dataclass(frozen=True, slots=True)
class _Line:
    number: int  # 1-based, for messages
    indent: int
    text: str  # without indentation or comment


def _strip_comment(text: str, number: int) -> str:
    quote: str | None = None
    for i, char in enumerate(text):
        if quote:
            if char == quote:
                quote = None
        elif char in "\"'" and (i == 0 or text[i - 1] in " [{,:-"):
            quote = char
        elif char == "#" and (i == 0 or text[i - 1] in " \t"):
            return text[:i].rstrip()
    if quote:
        raise YamlError(number, f"unclosed {quote} quote")
    return text.rstrip()


class _Reader:
    def __init__(self, text: str) -> None:
        self.raw = text.splitlines()
        self.lines: dict[int, _Line] = {}  # raw index -> content line
        for index, raw in enumerate(self.raw):
            body = raw.lstrip(" ")
            if body.startswith("\t"):
                raise YamlError(index + 1, "a tab in the indentation (YAML indents with spaces)")
            if not body or body.startswith("#") or (index == 0 and body.rstrip() == "---"):
                continue
            text = _strip_comment(body, index + 1)
            if text:
                self.lines[index] = _Line(index + 1, len(raw) - len(body), text)

    def next_index(self, index: int) -> int | None:
        """The first content line at or after raw index ``index``."""
        return next((i for i in range(index, len(self.raw)) if i in self.lines), None)

    def block(self, index: int, indent: int) -> tuple[YamlValue, int]:
        """The block whose first line is at ``index`` with ``indent``; and where it ends."""
        line = self.lines[index]
        if line.text == "-" or line.text.startswith("- "):
            return self._sequence(index, indent)
        return self._mapping(index, indent)

    def _sequence(self, index: int, indent: int) -> tuple[list[YamlValue], int]:
        items: list[YamlValue] = []
        at: int | None = index
        while at is not None:
            line = self.lines[at]
            if line.indent != indent or not (line.text == "-" or line.text.startswith("- ")):
                break
            rest = line.text[1:].lstrip(" ")
            if not rest:
                value, end = self._nested(at, indent, allow_same_indent=False)
            elif _split_key(rest, line.number) is not None:
                # "- key: value": a mapping whose keys line up with ``key``.
                column = line.indent + len(line.text) - len(rest)
                self.lines[at] = _Line(line.number, column, rest)
                value, end = self._mapping(at, column)
            else:
                value, end = _scalar_or_flow(rest, line.number), at + 1
            items.append(value)
            at = self.next_index(end)
        return items, at if at is not None else len(self.raw)

    def _mapping(self, index: int, indent: int) -> tuple[dict[str, YamlValue], int]:
        mapping: dict[str, YamlValue] = {}
        at: int | None = index
        while at is not None:
            line = self.lines[at]
            if line.indent < indent:
                break
            if line.indent > indent:
                raise YamlError(line.number, "indented deeper than the keys above it")
            split = _split_key(line.text, line.number)
            if split is None:
                if line.text.startswith("- "):
                    break
                raise YamlError(line.number, f"expected 'key: value', got {line.text[:40]!r}")
            key, rest = split
            if key in mapping:
                raise YamlError(line.number, f"key {key!r} appears twice")
            if not rest:
                mapping[key], end = self._nested(at, indent, allow_same_indent=True)
            elif _BLOCK_SCALAR.match(rest):
                mapping[key], end = self._block_scalar(at, indent, folded=rest[0] == ">")
            else:
                mapping[key], end = _scalar_or_flow(rest, line.number), at + 1
            at = self.next_index(end)
        return mapping, at if at is not None else len(self.raw)

    def _nested(self, index: int, indent: int, allow_same_indent: bool) -> tuple[YamlValue, int]:
        """The value under a key or ``-`` that has nothing after it on its line."""
        following = self.next_index(index + 1)
        if following is None:
            return None, len(self.raw)
        line = self.lines[following]
        deeper = line.indent > indent
        # Compose files often write a key's list at the key's own indentation.
        listed = allow_same_indent and line.indent == indent and line.text.startswith("- ")
        if deeper or listed:
            return self.block(following, line.indent)
        return None, following

    def _block_scalar(self, index: int, indent: int, folded: bool) -> tuple[str, int]:
        parts: list[str] = []
        end = index + 1
        while end < len(self.raw):
            raw = self.raw[end]
            if raw.strip() and len(raw) - len(raw.lstrip(" ")) <= indent:
                break
            parts.append(raw.strip())
            end += 1
        return (" " if folded else "\n").join(p for p in parts if p or not folded), end


def _split_key(text: str, number: int) -> tuple[str, str] | None:
    """``key: rest`` split in two, the key unquoted; None when ``text`` is no mapping entry."""
    if text[0] in "\"'":
        close = text.find(text[0], 1)
        if close < 0:
            raise YamlError(number, f"unclosed {text[0]} quote")
        after = text[close + 1 :].lstrip(" ")
        if not after.startswith(":") or (len(after) > 1 and after[1] != " "):
            return None
        return _quoted(text[: close + 1], number), after[1:].strip()
    if text[0] in "[{":
        return None
    match = re.search(r":( |$)", text)
    if match is None:
        return None
    return text[: match.start()].rstrip(), text[match.end() :].strip()


def _quoted(text: str, number: int) -> str:
    if text[0] == "'":
        return text[1:-1].replace("''", "'")
    try:
        # YAML's double-quoted escapes are JSON's plus a few rare ones, refused below.
        value = json.loads(text)
    except ValueError:
        raise YamlError(
            number, f"a double-quoted string this reader cannot decode: {text[:40]}"
        ) from None
    return str(value)


def _scalar_or_flow(text: str, number: int) -> YamlValue:
    if text[0] in "&*!":
        raise YamlError(number, _NOT_READ)
    if text[0] in "[{":
        value, end = _flow(text, 0, number)
        if text[end:].strip():
            raise YamlError(number, f"unexpected text after the closing bracket: {text[end:]!r}")
        return value
    if text[0] in "\"'":
        if text[-1] != text[0] or len(text) < 2:
            raise YamlError(number, "text after a quoted string")
        return _quoted(text, number)
    return None if text in ("~", "null", "Null", "NULL") else text


def _flow(text: str, at: int, number: int) -> tuple[YamlValue, int]:
    """A flow collection starting at ``text[at]``; and the index after it."""
    closing = "]" if text[at] == "[" else "}"
    items: list[YamlValue] = []
    mapping: dict[str, YamlValue] = {}
    at += 1
    while True:
        while at < len(text) and text[at] in " ,":
            at += 1
        if at >= len(text):
            raise YamlError(number, f"no closing {closing!r} on this line (one-line flow only)")
        if text[at] == closing:
            return (items if closing == "]" else mapping), at + 1
        value, at = _flow_item(text, at, number)
        if closing == "]":
            items.append(value)
            continue
        rest = text[at:].lstrip(" ")
        if not rest.startswith(":") or not isinstance(value, str):
            raise YamlError(number, "expected 'key: value' inside { }")
        at = len(text) - len(rest) + 1
        while at < len(text) and text[at] == " ":
            at += 1
        mapping[value], at = _flow_item(text, at, number)


def _flow_item(text: str, at: int, number: int) -> tuple[YamlValue, int]:
    char = text[at]
    if char in "[{":
        return _flow(text, at, number)
    if char in "&*!":
        raise YamlError(number, _NOT_READ)
    if char in "\"'":
        close = at + 1
        while True:
            close = text.find(char, close)
            if close < 0:
                raise YamlError(number, f"unclosed {char} quote")
            if char == "'" and text[close + 1 : close + 2] == "'":
                close += 2
            elif char == '"' and text[close - 1] == "\\" and text[close - 2] != "\\":
                close += 1
            else:
                break
        return _quoted(text[at : close + 1], number), close + 1
    match = re.compile(r"[^,\]}]*?(?=\s*(?:,|\]|\}|: |:$))").match(text, at)
    end = match.end() if match else len(text)
    if not text[at:end].strip():
        raise YamlError(number, "an empty item inside [ ] or { }")
    return _scalar_or_flow(text[at:end].strip(), number), end


def parse(text: str) -> YamlValue:
    """The document in ``text``; raises YamlError naming the line outside the subset."""
    reader = _Reader(text)
    first = reader.next_index(0)
    if first is None:
        return None
    line = reader.lines[first]
    if _split_key(line.text, line.number) is None and not line.text.startswith("- "):
        return _scalar_or_flow(line.text, line.number)
    value, end = reader.block(first, line.indent)
    leftover = reader.next_index(end)
    if leftover is not None:
        stray = reader.lines[leftover]
        raise YamlError(stray.number, "indentation does not match any block above it")
    return value
