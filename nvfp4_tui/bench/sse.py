"""Incremental Server-Sent Events parser: raw byte buffers in, the data of complete events out.

Follows the WHATWG event-stream rules that matter for OpenAI-style streams: lines end in LF, CRLF
or CR (a CRLF may be split across two buffers); ``:`` starts a comment; ``data:`` takes an
optional single space; several ``data`` lines of one event are joined with LF; a blank line ends
the event; other fields (``event``, ``id``, ``retry``) are ignored. Buffers are split with
``bytes.split`` once each, so the cost per event is a few slices, never a per-line read.

What one event may hold is bounded: the data lines of an event without its blank line, or one
line without its end, count against ``max_event_bytes`` as they arrive, so a stream that never
ends an event cannot grow the client's memory past that bound.
"""

from __future__ import annotations

DEFAULT_MAX_EVENT_BYTES = 16 * 1024 * 1024


class SseError(ValueError):
    """The stream broke the event-stream format in a way the parser cannot read past."""


class SseTooLarge(SseError):
    """An event (its data lines so far) or one unterminated line grew past ``max_event_bytes``.

    ``events`` holds the complete events the same buffer delivered before the one that grew.
    """

    def __init__(self, message: str, events: list[bytes] | None = None) -> None:
        super().__init__(message)
        self.events = events or []


class SseParser:
    """Feed it buffers as they arrive; it returns each complete event's data payload as bytes."""

    __slots__ = ("_data", "_data_bytes", "_skip_lf", "_tail", "_tail_bytes", "max_event_bytes")

    def __init__(self, max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES) -> None:
        self.max_event_bytes = max_event_bytes
        self._tail: list[bytes] = []  # pieces of the line not yet terminated
        self._tail_bytes = 0
        self._data: list[bytes] = []  # data lines of the event being read
        self._data_bytes = 0
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
        events = self._take_lines(lines)
        if last:
            try:
                self._hold(last)
            except SseTooLarge as too_large:
                too_large.events = events
                raise
        return events

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
        if self._tail_bytes + self._data_bytes > self.max_event_bytes:
            raise SseTooLarge(f"SSE line over {self.max_event_bytes} bytes without its end")
        self._tail.append(piece)

    def _take_lines(self, lines: list[bytes]) -> list[bytes]:
        events: list[bytes] = []
        data = self._data
        for line in lines:
            if not line:
                if data:
                    events.append(data[0] if len(data) == 1 else b"\n".join(data))
                    data.clear()
                    self._data_bytes = 0
                continue
            if line.startswith(b"data: "):
                value = line[6:]
            elif line.startswith(b"data:"):
                value = line[5:]
            elif line == b"data":
                value = b""
            else:
                continue
            data.append(value)
            self._data_bytes += len(value) + 1  # the LF that joins it to the next line
            if self._data_bytes > self.max_event_bytes:
                message = f"SSE event over {self.max_event_bytes} bytes without the blank line that ends it"
                raise SseTooLarge(message, events)
        return events
