"""The planner reads a count as `kvtop plan` reads the engine's flag: vLLM's human-readable context length (session 54).

An operator trial: on `kvtop --demo dsv3-dp-attention-vllm`, `p`, context length `32K` said "✗ context length: needs a
whole number, got '32K'", while `kvtop plan --engine vllm --max-model-len 32K` plans 32,768 tokens. vLLM types
--max-model-len with `human_readable_int` from v0.8.4 (vllm/engine/arg_utils.py:394 and :1749-1785 at v0.8.4): an
upper-case suffix is a power of 2 (16K = 16 × 2¹⁰ = 16,384), a lower-case one a power of 10 (16k = 16,000); before
v0.8.4 it is `type=int`, so '16K' is refused (kvtop/domain/engines/vllm/human_ints.py). The demo node is vLLM with
TP8 PP2 at --max-model-len 32768 (examples/scenarios/llama70b-pp2-vllm-node0.json).
"""

from __future__ import annotations

from textual.widgets import Input

from kvtop.commands.node_source import DemoSource
from tests.ui.fakes import FakeSource
from tests.ui.helpers import open_planner, retype, shown

SCENARIO = "llama70b-pp2-vllm-node0"


async def test_a_suffixed_context_length_is_read_as_vllm_reads_it(make_app):
    node = DemoSource.open(SCENARIO).collect_at(0)
    app = make_app(FakeSource(node, label=f"demo:{SCENARIO}"))
    async with app.run_test(size=(140, 50)) as pilot:
        screen = await open_planner(pilot)
        await retype(pilot, "#plan-context_length", "16384")
        plain = screen.outcome.after
        await retype(pilot, "#plan-context_length", "16K")
        binary = screen.outcome
        assert binary.error is None and binary.settings is not None
        assert binary.settings.context_length == 16 * 2**10 == 16_384
        assert binary.after is not None and plain is not None
        assert binary.after.token_capacity == plain.token_capacity  # the same plan as the whole number typed
        assert "--max-model-len 16384" in shown(screen, "#plan-flags")
        await retype(pilot, "#plan-context_length", "16k")
        assert screen.outcome.settings is not None and screen.outcome.settings.context_length == 16_000


async def test_a_release_before_the_suffixes_refuses_them_naming_the_field(make_app):
    node = DemoSource.open(SCENARIO).collect_at(0)
    app = make_app(FakeSource(node, label=f"demo:{SCENARIO}"))
    async with app.run_test(size=(140, 50)) as pilot:
        screen = await open_planner(pilot)
        await retype(pilot, "#plan-engine_version", "0.8.3")
        await retype(pilot, "#plan-context_length", "16K")
        assert shown(screen, "#plan-error") == (
            "✗ context length: expected a whole number, got '16K' (vLLM reads suffixes like K on it from v0.8.4, "
            "not at 0.8.3)"
        )


async def test_auto_is_refused_as_plan_refuses_it(make_app):
    """vLLM reads --max-model-len 'auto' as -1 (auto-fit to memory) from v0.14.0 (human_ints.py AUTO_ERAS): kvtop
    does not model it, and the planner says so in `kvtop plan --max-model-len auto`'s words, not a plan of -1."""
    node = DemoSource.open(SCENARIO).collect_at(0)
    app = make_app(FakeSource(node, label=f"demo:{SCENARIO}"))
    async with app.run_test(size=(140, 50)) as pilot:
        screen = await open_planner(pilot)
        await retype(pilot, "#plan-context_length", "auto")
        assert screen.outcome.after is None
        assert shown(screen, "#plan-error") == (
            "✗ context length: -1 (vLLM's auto-fit to memory) is not modelled by kvtop: give a length in tokens"
        )


async def test_the_blank_context_field_offers_no_auto_that_vllm_reads_its_own_way(make_app):
    """The placeholder read 'auto: 32768' on vLLM, and 'auto' typed there was then refused (above): vLLM reads
    --max-model-len auto as its auto-fit, which kvtop does not model. The blank field's placeholder says 'default: …'
    there; the share's 'auto: …' still reads as the blank it names (test_planner_auto_typed.py)."""
    node = DemoSource.open(SCENARIO).collect_at(0)
    app = make_app(FakeSource(node, label=f"demo:{SCENARIO}"))
    async with app.run_test(size=(140, 50)) as pilot:
        screen = await open_planner(pilot)
        await retype(pilot, "#plan-context_length", "")
        # the demo's Llama-3-70B (examples/models/llama-3-70b.json): max_position_embeddings 8192, vLLM's length
        # where none is given
        assert screen.query_one("#plan-context_length", Input).placeholder == "default: 8192"
        assert screen.query_one("#plan-memory_fraction", Input).placeholder.startswith("auto: ")
