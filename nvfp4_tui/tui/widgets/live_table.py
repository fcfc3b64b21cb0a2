"""LiveTable: a DataTable redrawn in place, so that the cursor and the scroll a user set survive
the refreshes of a running table.

``show_rows(columns, rows)`` takes the whole table each time, columns as ``(key, label)`` and
rows as ``(key, cells)``, and changes only what differs: the cells whose values changed, the
rows that went, the rows that came at the end. Columns that changed (their keys or a label) or
rows in a new order lay the table anew, the cursor kept on its row's key and the scroll where
it was.

It has a row cursor while it has focus (tab, a click) and none otherwise: a table read at a
glance has no highlighted row to hide the colours of its cells.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widgets import DataTable

Cell = Text | str
Column = tuple[str, Cell]  # key, label
Row = tuple[str, Sequence[Cell]]  # key, one cell per column


def _same(a: object, b: object) -> bool:
    # Text's own == compares the characters and spans, not the style of the whole text.
    if isinstance(a, Text) and isinstance(b, Text):
        return (a.plain, a.style, a.spans, a.justify) == (b.plain, b.style, b.spans, b.justify)
    return type(a) is type(b) and a == b


def _same_columns(a: Sequence[Column], b: Sequence[Column]) -> bool:
    return len(a) == len(b) and all(
        key_a == key_b and _same(label_a, label_b)
        for (key_a, label_a), (key_b, label_b) in zip(a, b, strict=True)
    )


class LiveTable(DataTable):
    def __init__(
        self,
        *,
        id: str | None = None,
        header_height: int = 1,
        zebra_stripes: bool = False,
        cell_padding: int = 1,
    ) -> None:
        super().__init__(
            id=id,
            header_height=header_height,
            zebra_stripes=zebra_stripes,
            cursor_type="none",
            cell_padding=cell_padding,
        )
        self._columns: tuple[Column, ...] = ()

    def on_focus(self) -> None:
        self.cursor_type = "row"

    def on_blur(self) -> None:
        self.cursor_type = "none"

    def show_rows(self, columns: Sequence[Column], rows: Sequence[Row]) -> None:
        """Show ``columns`` and ``rows``, changing only what differs from what is shown."""
        cursor_key = self._cursor_key()
        if not _same_columns(columns, self._columns):
            self._lay_anew(rows, cursor_key, new_columns=tuple(columns))
            return
        wanted = [key for key, _ in rows]
        for key in self._row_keys():
            if key not in wanted:
                self.remove_row(key)
        kept = self._row_keys()
        if wanted[: len(kept)] != kept:
            self._lay_anew(rows, cursor_key)
            return
        for key, cells in rows[: len(kept)]:
            for (column, _), old, new in zip(columns, self.get_row(key), cells, strict=True):
                if not _same(old, new):
                    self.update_cell(key, column, new, update_width=True)
        for key, cells in rows[len(kept) :]:
            self.add_row(*cells, key=key)
        if cursor_key in kept and kept.index(cursor_key) != self.cursor_row:
            self.move_cursor(row=kept.index(cursor_key), scroll=False)  # rows above it went

    def _row_keys(self) -> list[str]:
        return [str(row.key.value) for row in self.ordered_rows]  # every row is added with one

    def _lay_anew(
        self,
        rows: Sequence[Row],
        cursor_key: str | None,
        *,
        new_columns: tuple[Column, ...] | None = None,
    ) -> None:
        cursor_row = self.cursor_row
        scroll = self.scroll_x, self.scroll_y
        self.clear(columns=new_columns is not None)
        if new_columns is not None:
            for key, label in new_columns:
                self.add_column(label, key=key)
            self._columns = new_columns
        for key, cells in rows:
            self.add_row(*cells, key=key)
        if rows:
            keys = [key for key, _ in rows]
            row = keys.index(cursor_key) if cursor_key in keys else min(cursor_row, len(rows) - 1)
            self.move_cursor(row=row, scroll=False)
        # After the refresh that measures the new rows: a scroll set now is held to the old size.
        self.call_after_refresh(self.scroll_to, *scroll, animate=False)

    def _cursor_key(self) -> str | None:
        if not self.is_valid_coordinate(self.cursor_coordinate):
            return None
        return self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value
