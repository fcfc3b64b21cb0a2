"""Names cut to a width at a word boundary, so a screen never shows half a word: the plain
text as ``core.text_fit`` cuts it (the figures cut it the same way), styled text here."""

from __future__ import annotations

from textual.content import Content

from nvfp4_tui.core.text_fit import ELLIPSIS, fit_words

__all__ = ["ELLIPSIS", "fit_content", "fit_words"]


def fit_content(content: Content, width: int) -> Content:
    """``content`` (styled text) cut as ``fit_words`` cuts its plain text, styles kept."""
    if content.cell_length <= width:
        return content
    fitted = fit_words(content.plain, width)
    return content[: len(fitted) - 1] + Content(ELLIPSIS) if fitted else Content("")
