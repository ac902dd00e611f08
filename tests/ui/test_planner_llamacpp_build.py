"""The planner's engine version on a llama.cpp node takes a build, as llama.cpp names its releases (session 50, #27).

`kvtop --demo llamacpp-llama31-8b`, `p`, "b6980" typed into the engine-version field was refused "not a release:
'b6980'": the field read PEP 440 releases for every engine. llama.cpp tags each release `b<build>`
(github.com/ggml-org/llama.cpp/releases) and prints `build: 6980 (…)`; its rules are keyed by that number
(kvtop/domain/engines/llamacpp/eras.py), so the field takes it, and refuses a PEP 440 release for this engine.

With the context field blank, the build decides llama-server's default context (common/common.h `n_ctx`): 4,096
cells before b6980, then 0 = the context the model was trained with, Llama-3.1-8B's `max_position_embeddings`
131,072 (examples/models/llama-3.1-8b.json).
"""

from __future__ import annotations

from textual.widgets import Input

from kvtop.commands.node_source import DemoSource
from tests.ui.fakes import FakeSource
from tests.ui.helpers import open_planner, retype, shown

OLD_DEFAULT_CTX = 4_096  # common/common.h before b6980: `int32_t n_ctx = 4096`
TRAINED_CTX = 131_072  # llama-3.1-8b.json max_position_embeddings: common.h's `n_ctx = 0` from b6980


async def test_a_llama_cpp_build_is_its_release(make_app):
    node = DemoSource.open("llamacpp-llama31-8b").collect_at(0)
    app = make_app(FakeSource(node, label="demo:llamacpp-llama31-8b"))
    async with app.run_test(size=(200, 50)) as pilot:
        screen = await open_planner(pilot)
        version = screen.query_one("#plan-engine_version", Input)
        assert version.placeholder == "latest build"  # blank: the latest build's rules
        await retype(pilot, "#plan-context_length", "")
        await retype(pilot, "#plan-engine_version", "b5000")
        assert not version.has_class("-invalid")
        assert "engine rules           latest →        b5000" in shown(screen, "#plan-result")
        assert screen.outcome is not None and screen.outcome.after is not None
        assert screen.outcome.after.token_capacity == OLD_DEFAULT_CTX
        await retype(pilot, "#plan-engine_version", "b6980")
        assert screen.outcome.after is not None and screen.outcome.after.token_capacity == TRAINED_CTX


async def test_a_pep_440_release_is_no_llama_cpp_build(make_app):
    node = DemoSource.open("llamacpp-llama31-8b").collect_at(0)
    app = make_app(FakeSource(node, label="demo:llamacpp-llama31-8b"))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_planner(pilot)
        await retype(pilot, "#plan-engine_version", "0.5.9")
        assert shown(screen, "#plan-error") == (
            "✗ engine version: not a build: '0.5.9' (llama.cpp names its releases by build number: write e.g. b6980, "
            "b5400 or latest)"
        )
        assert screen.query_one("#plan-engine_version", Input).has_class("-invalid")
