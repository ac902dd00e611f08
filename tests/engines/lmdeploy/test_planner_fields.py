"""An LMDeploy error names its own flag, and the planner attaches it to its field (issue 29): the flag→field
map is read from each engine's spellings, where it was a list of SGLang's and vLLM's flags."""

from __future__ import annotations

import json

from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model_config import model_from_config
from kvtop.ui.plan_errors import field_of_flag
from kvtop.ui.planning import plan
from tests.conftest import CONFIGS

H100 = 81559 << 20


def test_an_lmdeploy_block_length_error_attaches_to_the_page_size_field() -> None:
    """DeepSeek-V3's 576-wide MLA latent on an H100 runs FlashMLA, which needs 64-token blocks
    (docs/engines/lmdeploy.md §4.1): the planner's 32 is refused, naming `--cache-block-seq-len`."""
    model = model_from_config(json.loads((CONFIGS / "deepseek-ai--DeepSeek-V3.json").read_text()), source="dsv3")
    live = LaunchSettings(engine="lmdeploy", backend="pytorch", tp=8, engine_version="0.10.0")
    outcome = plan(model, live, {"page_size": "32"}, gpu_total_bytes=H100, gpu_name="H100")
    assert outcome.after is None
    assert outcome.error is not None and "--cache-block-seq-len 64" in outcome.error
    assert outcome.error_field == "page_size"


def test_each_engine_spells_its_planner_fields() -> None:
    assert field_of_flag("--cache-block-seq-len", "lmdeploy") == "page_size"
    assert field_of_flag("--session-len", "lmdeploy") == "context_length"
    assert field_of_flag("--cache-max-entry-count", "lmdeploy") == "memory_fraction"
    assert field_of_flag("--tokens_per_block", "trtllm") == "page_size"
    assert field_of_flag("--kv_cache_free_gpu_memory_fraction", "trtllm") == "memory_fraction"
    assert field_of_flag("--max-model-len", "vllm") == "context_length"
    assert field_of_flag("--mem-fraction-static", "sglang") == "memory_fraction"
    assert field_of_flag("--mem-fraction-static", "vllm") is None  # not vLLM's flag
    assert field_of_flag("--tp") == "tp"  # kvtop's own spelling, every engine's
