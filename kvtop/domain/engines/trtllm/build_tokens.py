"""The max_num_tokens a TensorRT engine is built with (docs/engines/trtllm.md §6, §18): what the launch asks, else
8,192, capped by trtllm-build at max_batch_size × max_seq_len.

trtllm-build's `check_max_num_tokens` (tensorrt_llm/_common.py, read at NVIDIA/TensorRT-LLM 0fccc5b97dd7, search-index
id 36807683978) lowers a max_num_tokens above max_seq_len × max_batch_size to that product ("max_num_tokens (…)
shouldn't be greater than max_seq_len * max_batch_size (…), specifying to max_seq_len * max_batch_size"). The engine's
execution context and the buffers sized by max_num_tokens follow the capped figure: the 0.13 GLM-4-9B engine of
tensorrtllm_backend issue 625, built at max_batch_size 1 and max_seq_len 2,048, prints 196.76 MiB of execution context,
the 2,048-token figure (0.25 GiB by `EXECUTION_CONTEXT_TOKENS_PER_GIB`), not the 0.76–1.11 GiB of 8,192-token builds.

Releases: v0.8's trtllm-build did not cap this way (its two Llama-3-8B Triton engines at max_batch_size 1 and 32 grow
by 12,288 tokens' logits, above 1 × its max_seq_len); v0.9–v0.12 were not read (their trtllm-build took max_input_len
and max_output_len, and the versions of `check_max_num_tokens` in the search index without a max_seq_len argument are
not dated): kvtop leaves them uncapped. The PyTorch backend's model engine caps the same way
(`PyTorchModelEngine._init_max_num_tokens`, "modified from check_max_num_tokens", search-index id 69471950776), but
which of its figures the profiling run reads is not read per release: not modelled here.
"""

from __future__ import annotations

from kvtop.domain.engines.trtllm.budget import launch_max_num_tokens
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.launch import LaunchSettings

# whether trtllm-build lowers max_num_tokens to max_batch_size × max_seq_len
BUILD_TOKEN_CAP_ERAS: Eras[bool] = Eras((
    Era("", False, "v0.8 trtllm-build: no max_seq_len cap (two v0.8 Triton logs hold 12,288 tokens' logits at "
                   "max_batch_size 1 and 32); v0.9–v0.12 not read, left uncapped"),
    Era("0.13.0", True, "tensorrt_llm/_common.py `check_max_num_tokens` (read at 0fccc5b97dd7, id 36807683978); "
                        "issue 625's 0.13 engine: 196.76 MiB of execution context at 1 × 2,048 tokens"),
))


def engine_max_num_tokens(settings: LaunchSettings, max_batch_size: int, max_seq_len: int,
                          version: ResolvedVersion) -> int:
    """The engine's max_num_tokens: the launch's, else 8,192, no more than max_batch_size × max_seq_len where the
    release's trtllm-build caps it (`BUILD_TOKEN_CAP_ERAS`)."""
    tokens = launch_max_num_tokens(settings)
    if BUILD_TOKEN_CAP_ERAS.at(version) and max_seq_len > 0:
        return min(tokens, max_batch_size * max_seq_len)
    return tokens
