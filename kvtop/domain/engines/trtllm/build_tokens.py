"""The max_num_tokens a TensorRT engine is built with (docs/engines/trtllm.md §6, §18): what the launch asks, capped by
trtllm-build's `check_max_num_tokens` (tensorrt_llm/_common.py) as each release wrote it.

Read on NVIDIA/TensorRT-LLM's main history (commits of a fork's copy, dleunji/TensorRT-LLM; the release branches were
cut from it, their tags not read):
* 0.7.1 (c8965302, 2024-01-16): tensorrt_llm/commands/build.py passes `--max_num_tokens` (default None) on unchecked.
* 0.8 (b57221b7 `0.8.0.dev20240123`; e06f537e `0.8.0.dev2024013000` _common.py:197-216, called at commands/build.py:415)
  to 0.10 (035b99e0 `0.9.0.dev2024040900` and 89ba1b1a `0.10.0.dev2024050700`: _common.py:197-222, build.py:389 / :428):
  an unset max_num_tokens becomes max_input_len × max_batch_size (line 206 / 207) and a larger one is lowered to it
  (lines 215-216 / 221-222). The v0.8 Triton engine of guide 69112122406 (max_batch_size 64 × max_input_len 1,024 =
  65,536) keeps its 12,288: the cap does not bind.
* 0.11 on (2a115dae `0.11.0.dev2024061800`, after v0.10.0 of 2024-06-05 and before the 0.11 branch): `--max_seq_len`
  replaces `--max_output_len`, `--max_num_tokens` defaults to 8,192 (commands/build.py:90) and the cap is max_seq_len ×
  max_batch_size (_common.py:237-238, called from builder.py:475); unchanged at 74b324f6 (0.13.0.dev2024081300,
  _common.py:243-244) and 0fccc5b97dd7 (search-index id 36807683978). Issue 625's 0.13 engine (1 × 2,048) prints 196.76
  MiB of execution context, the 2,048-token figure.

A v0.8–0.10 launch that does not give `--max_input_len` keeps the launch's max_num_tokens (8,192 where unset: the two
v0.8 Llama-3-8B Triton logs hold 8,192 and 12,288 tokens' logits), since the build's input length is unknown.
"""

from __future__ import annotations

from typing import Literal

from kvtop.domain.engines.trtllm.budget import launch_max_num_tokens
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.launch import LaunchSettings

BuildTokenCap = Literal["none", "max_input_len", "max_seq_len"]

# what trtllm-build lowers max_num_tokens to, × max_batch_size
BUILD_TOKEN_CAP_ERAS: Eras[BuildTokenCap] = Eras((
    Era("", "none", "0.7.1 tensorrt_llm/commands/build.py (c8965302): --max_num_tokens passed on unchecked"),
    Era("0.8.0", "max_input_len", "tensorrt_llm/_common.py `check_max_num_tokens` (e06f537e 0.8.0.dev2024013000, "
                                  "lines 206, 215-216; 89ba1b1a 0.10.0.dev2024050700, lines 207, 221-222): unset or "
                                  "larger becomes max_input_len × max_batch_size"),
    Era("0.11.0", "max_seq_len", "tensorrt_llm/_common.py `check_max_num_tokens` (2a115dae 0.11.0.dev2024061800, "
                                 "lines 237-238, from builder.py:475; 0fccc5b97dd7, id 36807683978); issue 625's 0.13 "
                                 "engine: 196.76 MiB of execution context at 1 × 2,048 tokens"),
))


def engine_max_num_tokens(settings: LaunchSettings, max_batch_size: int, max_seq_len: int,
                          version: ResolvedVersion) -> int:
    """The engine's max_num_tokens: the launch's (else 8,192) as the release's trtllm-build caps it
    (`BUILD_TOKEN_CAP_ERAS`): at max_batch_size × max_seq_len from 0.11, at max_batch_size × max_input_len in 0.8–0.10
    where the launch gives --max_input_len (an unset max_num_tokens then becomes that product)."""
    tokens = launch_max_num_tokens(settings)
    cap = BUILD_TOKEN_CAP_ERAS.at(version)
    if cap == "max_seq_len" and max_seq_len > 0:
        return min(tokens, max_batch_size * max_seq_len)
    if cap == "max_input_len" and settings.max_input_len:
        product = max_batch_size * settings.max_input_len
        return product if settings.max_num_batched_tokens is None else min(tokens, product)
    return tokens
