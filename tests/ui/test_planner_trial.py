"""The planner's defects an operator trial found (tmux, `kvtop`): a hub id cut to 'meta-llama/Meta' without a
sign, only the first of several bad fields named, and a layout error worded '--pp:' where the parse says 'PP:'."""

from __future__ import annotations

import pytest
from textual import events
from textual.widgets import Input

from kvtop.ui.plan_fields import FieldError
from kvtop.ui.screens.planner_lines import errors_text
from kvtop.ui.widgets.typed_input import elided
from tests.ui.conftest import wait_for
from tests.ui.helpers import paste, retype, shown

HUB_ID = "meta-llama/Meta-Llama-3-70B-Instruct"  # 36 characters
LOCAL = "/models/hub/models--meta-llama--Meta-Llama-3-70B-Instruct/snapshots/0123456789abcdef0123456789abcdef01234567"


def field_line(screen, selector: str) -> str:
    """What the field draws while another field has the focus."""
    return "".join(segment.text for segment in screen.query_one(selector, Input).render_line(0))


@pytest.mark.parametrize("columns", [100, 200])
async def test_a_hub_id_shows_whole_and_a_longer_path_elided_visibly(planner_on, columns):
    async with planner_on(size=(columns, 40)) as (_, pilot, screen):
        await paste(pilot, "#plan-model", HUB_ID)  # one edit (typed key by key: 36 re-solves of the plan)
        screen.query_one("#plan-tp").focus()
        await pilot.pause()
        assert field_line(screen, "#plan-model").strip() == HUB_ID  # was 'meta-llama/Meta': 15 cells
        model = screen.query_one("#plan-model", Input)
        path = LOCAL * 2 if columns == 200 else LOCAL  # 111 or 222 characters: wider than the field either way
        assert len(path) > model.scrollable_content_region.width
        model.value = path
        await pilot.pause()
        drawn = field_line(screen, "#plan-model").rstrip()
        assert "…" in drawn and drawn.startswith("/models/hub/") and drawn.endswith(path[-12:])
        assert len(drawn) == model.scrollable_content_region.width
        assert model.value == path  # the value is whole; only its drawing is elided


async def test_several_bad_fields_are_each_named_and_marked(planner_on):
    async with planner_on(size=(100, 40)) as (_, pilot, screen):
        for selector, text in (("#plan-tp", "0"), ("#plan-pp", "x"), ("#plan-memory_fraction", "2"),
                               ("#plan-context_length", "32k")):  # fmt: skip
            await retype(pilot, selector, text)
        said = shown(screen, "#plan-error").splitlines()
        # the form's order; each reason by the parse rules (a whole number ≥ 1; a fraction in (0, 1])
        assert said == [
            "✗ TP: must be at least 1 (got 0)",
            "✗ PP: needs a whole number, got 'x'",
            "✗ memory fraction: must be above 0 and at most 1 (got 2)",
            "  and 1 more (the fields marked red)",
        ]
        marked = {widget.id for widget in screen.query(".-invalid")}
        assert marked == {"plan-tp", "plan-pp", "plan-memory_fraction", "plan-context_length"}
        await retype(pilot, "#plan-tp", "8")
        await retype(pilot, "#plan-pp", "1")
        await retype(pilot, "#plan-memory_fraction", "")
        assert shown(screen, "#plan-error") == "✗ context length: needs a whole number, got '32k'"


async def test_a_huge_pp_is_worded_by_its_field_like_every_other_error(planner_on):
    """Llama-3-70B has 80 layers (config.json num_hidden_layers); 64 attention heads (num_attention_heads)."""
    async with planner_on(size=(100, 40)) as (_, pilot, screen):
        await retype(pilot, "#plan-pp", "9999999999")
        assert shown(screen, "#plan-error") == "✗ PP: 9,999,999,999 pipeline stages exceed the model's 80 layers"
        assert screen.query_one("#plan-pp").has_class("-invalid")
        await retype(pilot, "#plan-pp", "1")
        await retype(pilot, "#plan-tp", "3")
        assert shown(screen, "#plan-error").startswith("✗ TP: 64 attention heads do not divide over attention TP 3")


def test_the_elision_keeps_both_ends_and_the_error_list_counts_the_rest():
    assert elided("abcdefghij", 10) == "abcdefghij"
    assert elided("abcdefghijk", 10) == "abcd…ghijk"
    errors = tuple(FieldError(key, f"{key}: bad") for key in ("tp", "pp", "ep", "dp", "page_size"))
    assert errors_text(errors).splitlines()[-1] == "  and 2 more (the fields marked red)"


async def test_keys_typed_right_behind_tab_land_in_the_next_field(planner_on):
    """tmux `send-keys Tab` then at once `-l 2`: both keys queued before either is handled. The app moves the
    focus as Tab arrives, so the 2 goes to the field after TP (PP, its 1 selected on focus), and TP keeps its 8."""
    async with planner_on(size=(100, 40)) as (app, pilot, screen):
        tp, pp = screen.query_one("#plan-tp", Input), screen.query_one("#plan-pp", Input)
        assert screen.focused is tp and (tp.value, pp.value) == ("8", "1")
        app.post_message(events.Key("tab", "\t"))
        app.post_message(events.Key("2", "2"))
        await wait_for(pilot, lambda: pp.value != "1" or tp.value != "8")
        for _ in range(3):
            await pilot.pause()
        assert (tp.value, pp.value) == ("8", "2")  # was ('82', '1'): the 2 went into TP
        assert screen.focused is pp
        app.post_message(events.Key("shift+tab", None))
        app.post_message(events.Key("4", "4"))
        await wait_for(pilot, lambda: tp.value != "8")
        for _ in range(3):
            await pilot.pause()
        assert (tp.value, pp.value) == ("4", "2")


async def test_an_eagle3_draft_no_config_names_is_not_modelled_as_plan_says(planner_on):
    """`kvtop plan --model llama-3-70b --tp 8 --speculative-algorithm EAGLE3 --engine-version 0.5.9` prints `draft
    weights  not modelled` with "the config states no MTP layers and no draft model was named
    (--speculative-draft-model-path)" and the reserve for the draft and its CUDA graphs, 2048 MiB (2.00 GiB) in
    the engine's reserve; the planner showed '—' beside the model (none) for the same edit. It shows the priced
    reserve as a lower bound beside the unpriced weights, and each term as plan lists it."""
    async with planner_on(size=(120, 45)) as (_, pilot, screen):
        await retype(pilot, "#plan-spec_method", "EAGLE3")
        result = shown(screen, "#plan-result")
        (beside,) = [line for line in result.splitlines() if line.startswith("beside the model")]
        assert beside.split("→")[1].strip() == "≥ 2.00 GiB"
        assert "reserve for the draft and its CUDA graphs: 2.00 GiB, engine's reserve (computed)" in result
        assert (
            "draft weights: not modelled (the config states no MTP layers and no draft model was named "
            "(--speculative-draft-model-path))"
        ) in " ".join(result.split())


async def test_an_eagle3_draft_no_config_names_leaves_the_cell_as_a_lower_bound_as_plan_says(planner_on):
    """`kvtop plan --model llama-3-70b --tp 8 --speculative-algorithm EAGLE3` prints `KV per token per rank — ranks
    0–7: 40,960 B (40.00 KiB)` and `draft KV  not modelled` (the draft's layers unknown); Llama-3-70B TP8's cell by
    hand: 80 layers × (8 KV heads ÷ 8) × 128 × 2 (K, V) × 2 B = 40,960 B. The planner showed '40.00 KiB → 40.00 KiB'
    and no word of the draft KV; it shows the same cell, a lower bound, and the term with its reason."""
    async with planner_on(size=(120, 45)) as (_, pilot, screen):
        await retype(pilot, "#plan-spec_method", "EAGLE3")
        result = shown(screen, "#plan-result")
        (cell,) = [line for line in result.splitlines() if line.startswith("KV B/token/rank")]
        before, after = (side.strip() for side in cell.removeprefix("KV B/token/rank").split("→"))
        assert (before, after) == ("40.00 KiB", "≥ 40.00 KiB")
        assert "draft KV: not modelled (the draft's layers are not known" in " ".join(result.split())


async def test_sglangs_full_context_requests_are_not_called_concurrency(planner_on):
    """SGLang states no max concurrency: the row is the pool's tokens ÷ the context (`plan`'s 'Full-context reqs'),
    which the planner named 'concurrency @ctx' and showed above a max running requests of 64."""
    async with planner_on(size=(120, 45)) as (_, pilot, screen):
        await retype(pilot, "#plan-max_running_requests", "64")
        rows = {line[:17].strip(): line[17:] for line in shown(screen, "#plan-result").splitlines()}
        assert "concurrency @ctx" not in rows
        tokens = int(rows["tokens per rank"].split("→")[1].split()[0].replace(",", ""))
        context = int(rows["context length"].split("→")[1].strip().replace(",", ""))
        assert rows["reqs fit @ctx"].split("→")[1].strip() == f"{tokens / context:,.2f}"  # 1,221,939 ÷ 8,192
        assert rows["max running reqs"].split("→")[1].strip() == "64"
