"""What session 51's operator trial (tmux at 80 columns and the demo nodes) found the screens saying badly: a bare
'+10k' in the one-line rows' state column, and llama.cpp's slots error headed by a field the operator had not
touched.

The fake node with a co-tenant is SGLang 0.5.9 serving Llama-3-70B at TP 8, pid 4242 holding 6 GiB on GPU 3: every
rank holds 128,660 tokens fewer than its clean prediction (SGLang sizes every rank by the least free GPU), which
`fmt_tokens_brief` writes as '−129k' (tests/ui/fakes.py; the same figure `tests/ui/test_filter_and_sort.py` reads).
"""

from __future__ import annotations

import re

from textual.widgets import Input

from kvtop.commands.node_source import DemoSource
from tests.ui.conftest import wait_for_snapshot
from tests.ui.fakes import FakeSource
from tests.ui.helpers import open_planner, retype, screen_lines, shown


async def test_the_one_line_rows_say_what_the_state_counts_at_80_columns(make_app, co_tenant_snapshot):
    app = make_app(co_tenant_snapshot)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_snapshot(pilot)
        rows = [line for line in screen_lines(app) if re.match(r"^\s*[0-7] sglang TP[0-7] ", line)]
        assert len(rows) == 8
        assert all("−129k tok" in row for row in rows)  # was '−129k': what it counts unsaid
        assert any("−129k tok ★" in row for row in rows)  # the tightest rank's star beside it
        assert all(len(row) <= 80 and " KV " in row for row in rows)  # the KV use still fits the line


async def test_llama_cpp_slots_over_the_context_name_the_field_typed(make_app):
    """llama.cpp divides the context's cells over the slots (llama-context.cpp: n_ctx_seq = n_ctx / n_seq_max) and
    stops at 0 cells a slot; the rule names -c (kvtop/domain/engines/llamacpp/cells.py), but the operator typed the
    max requests (-np): the error is headed by that field, the rule's words kept."""
    node = DemoSource.open("llamacpp-llama31-8b").collect_at(0)
    app = make_app(FakeSource(node, label="demo:llamacpp-llama31-8b"))
    async with app.run_test(size=(200, 50)) as pilot:
        screen = await open_planner(pilot)
        await retype(pilot, "#plan-max_running_requests", "999999999")
        said = shown(screen, "#plan-error")
        assert said.startswith("✗ max requests: -c ") and "over 999999999 slots leaves no cells per slot" in said
        assert screen.query_one("#plan-max_running_requests", Input).has_class("-invalid")
        assert not screen.query_one("#plan-context_length", Input).has_class("-invalid")
