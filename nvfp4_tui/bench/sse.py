"""Incremental Server-Sent Events parser: raw byte buffers in, the data of complete events out.

Follows the WHATWG event-stream rules that matter for OpenAI-style streams: lines end in LF, CRLF
or CR (a CRLF may be split across two buffers); ``:`` starts a comment; ``data:`` takes an
optional single space; several ``data`` lines of one event are joined with LF; a blank line ends
the event; other fields (``event``, ``id``, ``retry``) are ignored. Buffers are split with
``bytes.split`` once each, so the cost per event is a few slices, never a per-line read.
"""

from __future__ import annotations

DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024


class SseError(ValueError):
    """The stream broke a limit of the parser (an unterminated line longer than allowed)."""


class SseParser:
    """Feed it buffers as they arrive; it returns each complete event's data payload as bytes."""

    __slots__ = ("_data", "_max_line_bytes", "_skip_lf", "_tail", "_tail_bytes")

    def __init__(self, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        self._max_line_bytes = max_line_bytes
        self._tail: list[bytes] = []  # pieces of the line not yet terminated
        self._tail_bytes = 0
        self._data: list[bytes] = []  # data lines of the event being read
        self._skip_lf = False  # the last buffer ended in CR: a leading LF belongs to that CRLF

    def feed(self, buffer: bytes) -> list[bytes]:
        """The data of every event that ``buffer`` completes, in order (often empty)."""
        if self._skip_lf:
            self._skip_lf = False
            if buffer[:1] == b"\n":
                buffer = buffer[1:]
        if b"\r" in buffer:
            self._skip_lf = buffer.endswith(b"\r")
            buffer = buffer.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        if b"\n" not in buffer:
            if buffer:
                self._hold(buffer)
            return []
        if self._tail:
            self._tail.append(buffer)
            buffer = b"".join(self._tail)
            self._tail = []
            self._tail_bytes = 0
        lines = buffer.split(b"\n")
        last = lines.pop()
        if last:
            self._hold(last)
        return self._take_lines(lines)

    def end(self) -> list[bytes]:
        """At end of stream: the last event even without its closing blank line.

        The standard drops such an event; servers that close right after their final
        ``data:`` line exist, and their last chunk often carries ``finish_reason`` or usage.
        """
        lines = [b"".join(self._tail), b""] if self._tail else [b""]
        self._tail = []
        self._tail_bytes = 0
        return self._take_lines(lines)

    def _hold(self, piece: bytes) -> None:
        self._tail_bytes += len(piece)
        if self._tail_bytes > self._max_line_bytes:
            raise SseError(f"line longer than {self._max_line_bytes} bytes without a line end")
        self._tail.append(piece)

    def _take_lines(self, lines: list[bytes]) -> list[bytes]:
        events: list[bytes] = []
        data = self._data
        for line in lines:
            if not line:
                if data:
                    events.append(data[0] if len(data) == 1 else b"\n".join(data))
                    data.clear()
            elif line.startswith(b"data: "):
                data.append(line[6:])
            elif line.startswith(b"data:"):
                data.append(line[5:])
            elif line == b"data":
                data.append(b"")
        return events
