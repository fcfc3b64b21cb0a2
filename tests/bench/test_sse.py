"""The incremental SSE parser: line endings, splits across reads, comments, multi-line data."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nvfp4_tui.bench.sse import SseParser, SseTooLarge


def feed_all(pieces: list[bytes]) -> list[bytes]:
    parser = SseParser()
    events: list[bytes] = []
    for piece in pieces:
        events.extend(parser.feed(piece))
    return events


def bytewise(stream: bytes) -> list[bytes]:
    return [stream[i : i + 1] for i in range(len(stream))]


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
def test_line_endings(newline: bytes) -> None:
    stream = newline.join([b"data: one", b"", b"data: two", b"", b""])
    assert feed_all([stream]) == [b"one", b"two"]
    assert feed_all(bytewise(stream)) == [b"one", b"two"]


def test_crlf_split_between_reads_is_one_line_end() -> None:
    # CR ends the first read: the LF that starts the next must not count as a blank line.
    assert feed_all([b"data: a\r", b"\ndata: b\r\n\r\n"]) == [b"a\nb"]


def test_lone_cr_then_data_is_a_line_end() -> None:
    assert feed_all([b"data: a\r", b"data: b\r\r"]) == [b"a\nb"]


def test_several_events_in_one_read_and_one_event_over_many() -> None:
    parser = SseParser()
    assert parser.feed(b"data: 1\n\ndata: 2\n\ndata: 3") == [b"1", b"2"]
    assert parser.feed(b"4") == []
    assert parser.feed(b"\n") == []
    assert parser.feed(b"\n") == [b"34"]


def test_comments_fields_and_space_after_colon() -> None:
    stream = (
        b": keep-alive\n"
        b"event: message\nid: 7\nretry: 100\n"
        b"data:tight\n\n"
        b"data:  two spaces\n\n"
        b"data\n\n"
        b"\n\n: only a comment\n\n"
        b"data: [DONE]\n\n"
    )
    assert feed_all([stream]) == [b"tight", b" two spaces", b"", b"[DONE]"]


def test_multi_line_data_joined_with_newline() -> None:
    assert feed_all([b'data: {"a":\ndata: 1}\n\n']) == [b'{"a":\n1}']


def test_end_returns_an_unterminated_last_event() -> None:
    parser = SseParser()
    assert parser.feed(b"data: first\n\ndata: last") == [b"first"]
    assert parser.end() == [b"last"]
    assert parser.end() == []


def test_end_after_data_line_without_blank_line() -> None:
    parser = SseParser()
    assert parser.feed(b"data: x\n") == []
    assert parser.end() == [b"x"]


def test_long_line_across_many_reads() -> None:
    payload = b"x" * (3 * 1024 * 1024)
    stream = b"data: " + payload + b"\n\n"
    pieces = [stream[i : i + 65536] for i in range(0, len(stream), 65536)]
    assert feed_all(pieces) == [payload]


def test_unterminated_line_over_the_limit_raises() -> None:
    parser = SseParser(max_event_bytes=100)
    parser.feed(b"data: " + b"x" * 60)
    with pytest.raises(SseTooLarge, match="100 bytes"):
        parser.feed(b"x" * 60)


def test_data_lines_without_a_blank_line_count_against_the_event_bound() -> None:
    # Each line is short; the event they build never ends, and would grow without a bound.
    parser = SseParser(max_event_bytes=1000)
    with pytest.raises(SseTooLarge, match="1000 bytes"):
        for _ in range(100):
            parser.feed(b"data: " + b"x" * 50 + b"\n")


def test_a_partial_line_counts_with_the_event_it_extends() -> None:
    parser = SseParser(max_event_bytes=100)
    parser.feed(b"data: " + b"x" * 60 + b"\n")
    with pytest.raises(SseTooLarge):
        parser.feed(b"data: " + b"y" * 50)


def test_events_under_the_bound_pass_however_many() -> None:
    parser = SseParser(max_event_bytes=100)
    events = parser.feed(b"data: " + b"x" * 90 + b"\n\n")
    events += parser.feed((b"data: " + b"y" * 90 + b"\n\n") * 50)
    assert len(events) == 51 and events[0] == b"x" * 90


line_text = st.binary(max_size=40).filter(lambda b: b"\n" not in b and b"\r" not in b)


@st.composite
def sse_stream(draw: st.DrawFn) -> tuple[bytes, list[bytes]]:
    """A valid stream in one line-ending style, and the events it holds."""
    newline = draw(st.sampled_from([b"\n", b"\r\n", b"\r"]))
    events = draw(st.lists(st.lists(line_text, min_size=1, max_size=4), max_size=8))
    lines: list[bytes] = []
    for data_lines in events:
        if draw(st.booleans()):
            lines.append(b": comment " + draw(line_text))
        for value in data_lines:
            tight = not value.startswith(b" ") and draw(st.booleans())
            lines.append((b"data:" if tight else b"data: ") + value)
        lines.append(b"")
    stream = b"".join(line + newline for line in lines)
    return stream, [b"\n".join(data_lines) for data_lines in events]


@settings(max_examples=300, deadline=None)
@given(sse_stream(), st.lists(st.integers(min_value=0, max_value=10_000), max_size=12))
def test_any_split_gives_the_same_events(case: tuple[bytes, list[bytes]], cuts: list[int]) -> None:
    stream, expected = case
    bounds = sorted({cut % (len(stream) + 1) for cut in cuts} | {0, len(stream)})
    pieces = [stream[a:b] for a, b in itertools.pairwise(bounds)]
    assert feed_all([stream]) == expected
    assert feed_all(pieces) == expected
