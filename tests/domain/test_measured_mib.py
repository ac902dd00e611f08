"""`Measured.from_mib`, the one MiB reader of LMDeploy's, llama.cpp's and TensorRT-LLM's log lines, on those logs' own
figures. Expected bytes are hand arithmetic on the printed text (figure × 2**20, ± half its last place), not the
function's: e.g. 1134.01 MiB = 113,401 × 1,048,576 / 100 = 1,189,095,669.76 B."""

from __future__ import annotations

import pytest

from kvtop.domain.engine_log_records import Measured
from kvtop.domain.engines.llamacpp.log_records import LlamacppRankLog
from kvtop.domain.engines.lmdeploy.log_records import LmdeployRankLog
from kvtop.domain.engines.trtllm.log_records import TrtllmRankLog
from kvtop.sources.engine_logs import parse_engine_log
from tests.data_paths import CASES


def _bytes(figure: Measured) -> tuple[int, int, int]:
    return figure.low_bytes, figure.value_bytes, figure.high_bytes


def test_trtllm_execution_context_is_the_nearest_byte() -> None:
    """TensorRT's `Allocated 1134.01 MiB for execution context memory` (docs memory.md, RTX 4060 case): 1,189,095,669.76 B,
    kept as the nearest byte; the interval 1134.005–1134.015 MiB is 1,189,090,426.88–1,189,100,912.64 B."""
    log = parse_engine_log(
        (CASES / "trtllm" / "trtllm-docs-memory-md-4060-blocks" / "engine.log").read_text()
    )
    context = log.ranks(TrtllmRankLog)[0].execution_context[0]
    assert (context.text, context.unit, context.decimals) == ("1134.01", "MiB", 2)
    assert _bytes(context) == (1_189_090_426, 1_189_095_670, 1_189_100_913)


def test_the_point_is_the_only_difference_between_nearest_and_down() -> None:
    """The same 1134.01 read as LMDeploy and llama.cpp keep their figures: the byte below, the interval unchanged."""
    nearest, down = Measured.from_mib("1134.01"), Measured.from_mib("1134.01", point="down")
    assert (nearest.value_bytes, down.value_bytes) == (1_189_095_670, 1_189_095_669)
    assert (nearest.low_bytes, nearest.high_bytes) == (down.low_bytes, down.high_bytes)


def test_llamacpp_q8_cache_is_the_byte_below() -> None:
    """`K (q8_0):    1.59 MiB` (gpt-oss-20b hexagon case): 159 × 1,048,576 / 100 = 1,667,235.84 B, kept as 1,667,235;
    1.585–1.595 MiB is 1,661,992.96–1,672,478.72 B. `(5738 MiB, 5141 MiB free)` (`%zu`, floored): [N, N + 1) MiB."""
    hexagon = parse_engine_log(
        (CASES / "llamacpp" / "gpt-oss-20b-q8_0-kv-hexagon" / "engine.log").read_text()
    )
    cache = next(c for c in hexagon.ranks(LlamacppRankLog)[0].kv_caches if c.k_size.text == "1.59")
    assert cache.k_size.unit == "MiB"
    assert _bytes(cache.k_size) == (1_661_992, 1_667_235, 1_672_479)
    rtx2060 = parse_engine_log(
        (CASES / "llamacpp" / "ollama-hermes3-llama31-8b-q4_0-rtx2060" / "engine.log").read_text()
    )
    cuda0 = next(d for d in rtx2060.ranks(LlamacppRankLog)[0].devices if d.device == "CUDA0")
    assert _bytes(cuda0.total) == (5738 << 20, 5738 << 20, (5739 << 20) - 1)
    assert _bytes(cuda0.free) == (5141 << 20, 5141 << 20, (5142 << 20) - 1)


@pytest.mark.parametrize(
    ("case", "text", "expected"),
    [
        # v0.7-: `block_size_ >> 20` printed as an integer: 75 MiB up to one byte short of 76
        ("lmdeploy-1703-internlm-chat-20b-w4-3090-v042", "75", (75 << 20, 75 << 20, (76 << 20) - 1)),
        # v0.8+: `%.3f`: 0.844 MiB = 884,998.144 B; 0.8435–0.8445 MiB = 884,473.856–885,522.432 B
        ("lmdeploy-3950-gptoss20b-int4kv-2080maxq", "0.844", (884_473, 884_998, 885_523)),
    ],
)
def test_lmdeploy_block_size(case: str, text: str, expected: tuple[int, int, int]) -> None:
    log = parse_engine_log((CASES / "lmdeploy" / case / "engine.log").read_text())
    block = log.ranks(LmdeployRankLog)[0].block_sizes[0]
    assert (block.text, block.unit, _bytes(block)) == (text, "MiB", expected)


@pytest.mark.parametrize(
    ("text", "printed"), [("75.5", "floored"), ("-3", "floored"), ("1e3", "rounded"), ("", "rounded")]
)
def test_a_text_the_print_cannot_make_is_refused(text: str, printed: str) -> None:
    with pytest.raises(ValueError):
        Measured.from_mib(text, printed="floored" if printed == "floored" else "rounded")
