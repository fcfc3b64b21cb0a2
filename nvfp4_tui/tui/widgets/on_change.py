"""OnChange: paint a value once, then again only when a new one differs from it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class OnChange(Generic[T]):
    """Hands ``show``'s value to ``paint`` the first time and whenever it differs from the last.

    A pane is shown its read-out several times a second and most of its lines hold still:
    comparing a line's plain values first spares building the Content of those that did not move.
    """

    __slots__ = ("_paint", "_shown")

    def __init__(self, paint: Callable[[T], None]) -> None:
        self._paint = paint
        self._shown: tuple[T] | None = None  # a 1-tuple, so that None is a value like any other

    def show(self, value: T) -> None:
        shown = (value,)
        if shown != self._shown:
            self._shown = shown
            self._paint(value)
