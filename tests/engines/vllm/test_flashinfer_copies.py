"""FlashInfer's top-k/top-p sampler keeps the logits' copies its code makes, by release (flashinfer_copies.py).

Expected values are the code's arithmetic, read in the wheels: `_dummy_sampler_run` keeps the model-dtype logits, the
V1 sampler casts them to float32 (v1/sample/sampler.py:87 at v0.10.2; none for a float32 model); from v0.9.0
`flashinfer_sample` calls `top_k_top_p_sampling_from_logits` (topk_topp_sampler.py:218-254 at v0.10.2), which holds a
masked float32 copy and its softmax (flashinfer 0.3.0 sampling.py:980-981); at v0.8.x FlashInfer's path (below
FlashInfer 0.2.3) softmaxes the float32 logits once (topk_topp_sampler.py:95-109 at v0.8.5.post1). Measured beside it:
vLLM 0.10.1.1 on FlashInfer's path (dennislee22/vLLM-benchmarking, Qwen2-7B, 256 seqs) left 0.50-0.62 GiB beside
weights and KV, where 3.5 × 256 × 152,064 × 4 B = 0.51 GiB and one copy 0.15.
"""

from __future__ import annotations

from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.flashinfer_copies import flashinfer_copies
from kvtop.domain.model import ModelSpec
from kvtop.sources.hub import load_config_file
from tests.data_paths import CONFIGS


def _model(dtype_bytes: int) -> ModelSpec:
    model = load_config_file(CONFIGS / "Qwen--Qwen2.5-7B-Instruct.json")
    return model.model_copy(update={"dtype_bytes": dtype_bytes})


def _version(text: str) -> ResolvedVersion:
    return ResolvedVersion(text=text)


def test_a_16_bit_model_holds_three_and_a_half_copies_from_v0_9_0_to_v0_30_0() -> None:
    for release in ("0.9.0", "0.10.2", "0.11.0", "0.15.1", "0.30.0"):
        assert flashinfer_copies(_version(release), _model(2), v0=False) == 0.5 + 1 + 2


def test_a_float32_model_has_no_cast() -> None:
    assert flashinfer_copies(_version("0.10.2"), _model(4), v0=False) == 1 + 2


def test_v0_8_softmaxes_once() -> None:
    assert flashinfer_copies(_version("0.8.5.post1"), _model(2), v0=False) == 0.5 + 1 + 1


def test_v0s_sampler_is_not_read() -> None:
    assert flashinfer_copies(_version("0.10.2"), _model(2), v0=True) is None
    assert flashinfer_copies(_version("0.7.3"), _model(2), v0=False) is None
