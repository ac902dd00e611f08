"""V0's profiling batch with chunked prefill on (a context above 32K, no --max-num-batched-tokens): SchedulerConfig's
512 tokens until vllm#10544 (2024-11-21, first released in v0.6.5) made it 2048.

The 512 is a real start's: `LLM(model="meta-llama/Llama-3.1-8B-Instruct")` on vLLM 0.6.4.dev26+g92d86da2
(search-index id 49009726947, a Korean vLLM practice log) printed "Chunked prefill is enabled by default for models with
max_model_len > 32K" and "Chunked prefill is enabled with max_num_batched_tokens=512." at max_seq_len=131072.
"""

from __future__ import annotations

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.profile_run import batch_limits
from kvtop.domain.launch import parse_flags
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.wording import GIB


def _batch(version: str, context: int, *flags: str) -> tuple[int, int]:
    settings = parse_flags("vllm", ["--max-model-len", str(context), *flags], strict=True)
    inputs = CalibrationInputs(
        model=None, settings=settings, layout=ParallelLayout(), gpu_name="A10", gpu_total_bytes=22 * GIB,
        version=ResolvedVersion(text=version), weights_bytes=0, context_length=context,
    )  # fmt: skip
    tokens, seqs, _ = batch_limits(inputs)
    return tokens, seqs


def test_v0_before_vllm_10544_profiles_512_tokens_with_chunked_prefill() -> None:
    assert _batch("0.6.4.dev26+g92d86da2.d20241017", 131072) == (512, 256)


def test_v0_from_v0_6_5_profiles_2048_tokens_with_chunked_prefill() -> None:
    assert _batch("0.7.1", 131072) == (2048, 256)


def test_the_chunk_applies_above_32k_only_and_yields_to_the_flag() -> None:
    assert _batch("0.6.4", 32768) == (32768, 256)  # max(context, 2048): one prompt a batch
    assert _batch("0.6.4", 131072, "--max-num-batched-tokens", "8192") == (8192, 256)


def test_a_stated_chunked_prefill_flag_decides_it_on_v0() -> None:
    """V0's arg_utils decides chunked prefill by the context only while `enable_chunked_prefill is None` (vllm#6666's
    default): `--enable-chunked-prefill` at 8K profiles the release's chunk, `--no-enable-chunked-prefill` above 32K
    the whole context (SchedulerConfig: max(max_model_len, 2048) without chunking)."""
    assert _batch("0.6.4", 8192, "--enable-chunked-prefill") == (512, 256)
    assert _batch("0.7.1", 8192, "--enable-chunked-prefill") == (2048, 256)
    assert _batch("0.6.4", 131072, "--no-enable-chunked-prefill") == (131072, 256)
    assert _batch("0.6.4", 131072, "--enable-chunked-prefill", "false") == (131072, 256)
