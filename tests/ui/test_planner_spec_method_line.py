"""A speculative method vLLM does not take, typed in the planner: the refusal ran to 8 lines at 100 columns (vLLM
0.33.0's 40 method names, 28 of them MTP: `mtp` and one `<model>_mtp` per model, config/speculative.py
SpeculativeMethod, which SpeculativeConfig runs as "mtp"), pushing the result out of view. It now names the field
and writes the names that share a `_suffix` as one group, the release's source left to `kvtop plan`'s line."""

from __future__ import annotations

from kvtop.commands.node_source import DemoSource
from kvtop.domain.spec_methods import compact
from tests.ui.fakes import FakeSource
from tests.ui.helpers import open_planner, retype, shown

SCENARIO = "llama70b-pp2-vllm-node0"  # a vLLM engine (examples/scenarios)


def test_names_sharing_a_suffix_are_one_group_at_the_first_one_s_place() -> None:
    names = ("ngram", "eagle", "deepseek_mtp", "mimo_mtp", "mtp", "qwen3_next_mtp", "dflash")
    assert compact(names) == "ngram, eagle, mtp and 3 *_mtp, dflash"
    # no bare `mtp`, no group: LMDeploy's list reads as it is
    assert compact(("eagle", "deepseek_mtp", "qwen3_5_mtp", "glm_mtp")) == "eagle, deepseek_mtp, qwen3_5_mtp, glm_mtp"


async def test_a_bad_method_is_a_short_line_naming_its_field(make_app):
    node = DemoSource.open(SCENARIO).collect_at(0)
    app = make_app(FakeSource(node, label=f"demo:{SCENARIO}"))
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await open_planner(pilot)
        await retype(pilot, "#plan-engine_version", "0.33.0")
        await retype(pilot, "#plan-spec_method", "bogus")
        said = shown(screen, "#plan-error")
        assert said.startswith("✗ speculative: --speculative-config: must be one of ngram, draft_model, "), said
        assert "mtp and 27 *_mtp" in said and "kimi_k3_mtp" not in said and said.endswith("(got 'bogus'; release 0.33.0)"), said
        assert screen.query_one("#plan-error").size.height <= 3  # 205 characters in 96 columns (was 8 lines)
        assert screen.query_one("#plan-spec_method").has_class("-invalid")
