"""A vertical box that its children fill, painted blank.

Textual repaints every child of a screen (and the screen) whenever any cell of the screen
changes; a box drawn as blank lines (Textual's `BLANK`) costs next to nothing there, and
shows nothing anyway: its children cover it.
"""

from __future__ import annotations

from textual.containers import Vertical


class Box(Vertical):
    """A `Vertical` with no border and no content of its own (its children fill it)."""

    BLANK = True
