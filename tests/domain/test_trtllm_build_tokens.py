"""trtllm-build's max_num_tokens cap (kvtop/domain/engines/trtllm/build_tokens.py): expected values are
check_max_num_tokens' arithmetic (tensorrt_llm/_common.py at 0fccc5b97dd7): min(max_num_tokens, max_batch_size × max_seq_len)."""

from kvtop.domain.engines.trtllm.build_tokens import engine_max_num_tokens
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.launch import LaunchSettings


def test_glm4_issue625_build_is_capped_at_batch_times_seq() -> None:
    # issue 625 (0.13): max_batch_size 1, max_seq_len 2048, no max_num_tokens -> 1 × 2,048
    assert engine_max_num_tokens(LaunchSettings(engine="trtllm"), 1, 2048, ResolvedVersion(text="0.13.0")) == 2048


def test_cap_leaves_a_smaller_request() -> None:
    # case 4275 (0.19): 1,024 requested, 2,048 × 2,048 allowed
    assert engine_max_num_tokens(LaunchSettings(engine="trtllm", max_num_batched_tokens=1024), 2048, 2048, ResolvedVersion(text="0.19.0")) == 1024


def test_v08_triton_engine_is_under_its_input_cap() -> None:
    # guide 69112122406's v0.8 engine: `trtllm-build --max_batch_size 64 --max_input_len 1024 --max_num_tokens 12288`;
    # check_max_num_tokens of 0.8 (_common.py at e06f537e, lines 215-216) caps at 64 × 1,024 = 65,536: 12,288 stays
    # (the Triton start's execution context holds 12,288 tokens' logits, trtllm.jsonl)
    settings = LaunchSettings(engine="trtllm", max_num_batched_tokens=12288, max_input_len=1024)
    assert engine_max_num_tokens(settings, 64, 8192, ResolvedVersion(text="0.8.0")) == 12288
