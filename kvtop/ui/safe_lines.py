"""The TUI's last guard: every line it draws passes the one sanitiser before the terminal sees it.

Values reach the widgets already terminal-safe (`RedactedStr`, the Prometheus door), and text
from outside is handed to widgets as plain content, never as markup. This filter is the
backstop for whatever a future widget forgets: a text segment holding a control character (ESC,
a C1 character, a bidi override) is shown escaped by `safe_line`, a token of a known secret shape
(`hf_…`, `sk-…`, a JWT) is masked, and the line keeps its width.
"""

from __future__ import annotations

from rich.segment import Segment
from textual.color import Color
from textual.filter import LineFilter

from kvtop.domain.secret_shapes import has_secret_shape, mask_secret_shapes
from kvtop.domain.terminal import safe_line


class TerminalSafe(LineFilter):
    """Escapes every control character in a drawn line's text and masks every shaped secret."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        if all(segment.control or _clean(segment.text) for segment in segments):
            return segments
        width = Segment.get_line_length(segments)
        cleaned = [
            segment
            if segment.control or _clean(segment.text)
            else Segment(safe_line(mask_secret_shapes(segment.text)), segment.style)
            for segment in segments
        ]
        return Segment.adjust_line_length(cleaned, width)


def _clean(text: str) -> bool:
    """No control character and no token of a known secret shape."""
    return text.isprintable() and not has_secret_shape(text)
