"""What an operator trial in tmux (`kvtop`, the demo node at 100×30) found cut off or unnamed: the planner's
'redundant experts' label drawn as 'redundant', its per-rank rows cut off below a drafting edit's notes with no
sign and no way to reach them, the help's long lines wrapping back under the keys, and a speculative method
SGLang refuses named by its flag alone, its field left unmarked."""

from __future__ import annotations

from textual.containers import VerticalScroll
from textual.widgets import Label

from kvtop.ui.keys import KEYS
from kvtop.ui.screens.help import help_text
from tests.ui.helpers import retype, shown


async def test_every_planner_label_is_drawn_whole_at_100_columns(planner_on):
    async with planner_on(size=(100, 30)) as (_, pilot, screen):
        for label in screen.query(".plan-label").results(Label):
            rows = ("".join(segment.text for segment in label.render_line(y)) for y in range(label.size.height))
            assert " ".join(row.strip() for row in rows) == str(label.render())
        longest = next(label for label in screen.query(".plan-label").results(Label)
                       if str(label.render()) == "redundant experts")  # fmt: skip
        # 17 characters in an 18-cell column: one row (session 64: at 16 cells 'experts' wrapped beside the result's
        # 'fresh start'; before, at one row, it was cut off)
        assert longest.size.height == 1 and longest.size.width == 18


async def test_the_per_rank_rows_below_a_drafting_edit_scroll_into_view(planner_on):
    """EAGLE3 on the Llama-3-70B TP8 node adds three notes (its reserve; the draft's weights and its KV not
    modelled: no draft named) above the per-rank rows; at 30 lines they no longer fit the pane."""
    async with planner_on(size=(100, 30)) as (_, pilot, screen):
        await retype(pilot, "#plan-spec_method", "EAGLE3")
        box = screen.query_one("#plan-result-box", VerticalScroll)
        assert "per rank (after)" in shown(screen, "#plan-result")
        assert box.max_scroll_y > 0  # taller than the pane: it scrolls (was a Static cut off at its height)
        await pilot.press("pagedown")  # the focus stays in the field; the pane pages
        await pilot.pause()
        assert box.scroll_y == box.max_scroll_y
        await pilot.press("pageup")
        await pilot.pause()
        assert box.scroll_y == 0


def test_a_long_help_line_wraps_under_its_own_text():
    """The key column is the widest key ('pageup / pagedown', 17 cells) and two spaces, after two of indent: a
    continuation starts at cell 21, never at the box's edge under the keys."""
    widest = max(len(" / ".join(entry.keys.split(","))) for entry in KEYS)
    assert widest == 17
    hang = 2 + widest + 2
    lines = help_text(False).wrapped(60).plain.splitlines()
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith("q ") and "quit (not while" in line)
    assert lines[start + 1].startswith(" " * hang) and lines[start + 1][hang] != " "


async def test_a_refused_speculative_method_names_and_marks_its_field(planner_on):
    """SGLang's --speculative-algorithm takes one of its release's SpeculativeAlgorithm names (0.5.6.post2's
    server_args.py choices, 0.5.23's from_string); 'FOO' is none of them. The error is the field's, worded by its label like every other field's."""
    async with planner_on(size=(100, 40)) as (_, pilot, screen):
        await retype(pilot, "#plan-spec_method", "FOO")
        said = shown(screen, "#plan-error")
        assert said.startswith("✗ speculative: --speculative-algorithm: must be one of "), said
        # the demo node's SGLang is 0.5.9, between the two wheels read (sglang/spec_methods.py): either one's names
        assert "(got 'FOO'; release 0.5.9)" in said and "DFLASH" in said
        assert screen.query_one("#plan-spec_method").has_class("-invalid")
        await retype(pilot, "#plan-spec_method", "EAGLE3")
        assert not screen.query_one("#plan-spec_method").has_class("-invalid")
