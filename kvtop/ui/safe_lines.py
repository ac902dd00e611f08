"""The TUI's last guard: every line it draws passes the one sanitiser before the terminal sees it.

Values reach the widgets already terminal-safe (`RedactedStr`, the Prometheus door), and text
from outside is handed to widgets as plain content, never as markup. This filter is the
backstop for whatever a future widget forgets: a text segment holding a control character (ESC,
a C1 character, a bidi override) is shown escaped by `safe_line`, and the line keeps its width.
"""

from __future__ import annotations

from rich.segment import Segment
from textual.color import Color
from textual.filter import LineFilter

from kvtop.domain.terminal import safe_line


class TerminalSafe(LineFilter):
    """Escapes every control character in a drawn line's text (`kvtop.domain.terminal.safe_line`)."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        if all(segment.control or segment.text.isprintable() for segment in segments):
            return segments
        width = Segment.get_line_length(segments)
        cleaned = [
            segment
            if segment.control or segment.text.isprintable()
            else Segment(safe_line(segment.text), segment.style)
            for segment in segments
        ]
        return Segment.adjust_line_length(cleaned, width)
