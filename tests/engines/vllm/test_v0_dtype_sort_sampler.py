"""vLLM 0.2.6–0.4.0's sampler sorts the model-dtype logits and un-sorts them by a scattered inverse permutation: its
profile peaks at 7.5 copies of seqs × vocab × 4 B for a 16-bit model (`v0_profile.dtype_sort_sampler_copies`,
`SAMPLER_ERAS`), not the argsort's 14.5 before nor the float32 sort's 9.5 read at 0.6.4.

By hand from the wheels' sampler.py (v0.2.6/0.2.7 `_apply_top_p_top_k`, v0.3.0–v0.4.0 `_apply_top_k_top_p`), in
copies of rows × vocab × 4 B for fp16 logits (½ a copy each):
- the sort, beside the logits it sorts (½): its values (½) and int64 indices (2), torch's int64 reverse indices (2)
  and cub's alternate keys (½) and values (2) from 128 rows: 7.5;
- the final gather: the logits, logits_sort, probs_sort, probs_sum and the gathered result (5 × ½), logits_idx and
  logits_idx_inv (2 × 2), three bool masks at v0.2.6–v0.2.7 (top-p, top-k, their union: 0.75), two from v0.3.0 (0.5):
  7.25 and 7.0; for a float32 model the gather is the larger: 5 + 4 + 0.75 = 9.75 and 9.5 against the sort's 9.
The corpus's two starts in this range (tests/data/calibration/vllm.jsonl) are forward-bound by the code's counts, so
their logs bound the forward, not the sampler:
- qwen-issue16 (v0.3.0, Qwen1.5-7B-Chat-GPTQ, 256 seqs, 32,768 tokens): sampler 7.5 × 256 × 151,936 × 4 B +
  32,768 × 4,096 × 2 B = 1,166,868,480 + 268,435,456 = 1,435,303,936 B; forward 32,768 × (3 × 11,008 + 3 × 4,096) ×
  2 B = 2,969,567,232 B;
- file9907432117 (v0.3.3, Mistral-7B on a 40,192 MiB MIG slice): sampler 7.5 × 256 × 32,000 × 4 B + 268,435,456 B =
  514,195,456 B; forward 32,768 × (3 × 14,336 + 3 × 4,096) × 2 B = 3,623,878,656 B. Its 144,160 tokens (131,072 B
  each: 32 layers × 2 × 8 heads × 128 × 2 B) at 0.9 × 40,192 MiB less 14,483,464,192 B of weights (7,241,732,096
  bf16 parameters) leave 4.24 GiB to the peak and the non-torch memory: the forward's 3.38 fits, the sampler's 0.48
  could not fill it.
"""

from __future__ import annotations

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.v0_profile import (
    SAMPLER_ERAS,
    dtype_sort_sampler_copies,
    v0_forward_bound,
    v0_forward_bytes,
    v0_sampler_bytes,
)
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_config_file
from tests.data_paths import CONFIGS, DATA

QWEN = load_config_file(DATA / "calibration" / "configs" / "Qwen--Qwen1.5-7B-Chat-GPTQ-Int4.RECONSTRUCTED.json")
MISTRAL = load_config_file(CONFIGS / "mistralai--Mistral-7B-v0.1.json")
MIG_TOTAL = 40_192 * 2**20  # B, the slice's nvidia-smi total
MISTRAL_WEIGHTS = 14_483_464_192  # B, 7,241,732,096 bf16 parameters
MISTRAL_KV = 144_160 * 131_072  # B, the logged tokens at 131,072 B each


def _inputs(model: ModelSpec, version: str, gpu: str, total: int, flags: list[str]) -> CalibrationInputs:
    settings = parse_flags("vllm", [*flags, "--gpu-memory-utilization", "0.9"], strict=True)
    return CalibrationInputs(
        model=model, settings=settings, layout=ParallelLayout(), gpu_name=gpu, gpu_total_bytes=total,
        version=ResolvedVersion(text=version), weights_bytes=0, context_length=32_768,
    )  # fmt: skip


def test_each_release_names_its_sampler() -> None:
    forms = {v: SAMPLER_ERAS.at(ResolvedVersion(text=v)) for v in ("0.2.5", "0.2.6", "0.2.7", "0.3.0", "0.3.3", "0.4.0")}
    assert forms["0.2.5"].sort == "argsort"
    assert {forms[v].sort for v in ("0.2.6", "0.2.7", "0.3.0", "0.3.3", "0.4.0")} == {"model-dtype sort"}
    assert (forms["0.2.7"].masks, forms["0.3.0"].masks) == (3, 2)
    assert "not read" in SAMPLER_ERAS.era(ResolvedVersion(text="0.5.0")).source


def test_the_model_dtype_sort_holds_seven_and_a_half_copies() -> None:
    assert dtype_sort_sampler_copies(256, 2, 3) == 7.5
    assert dtype_sort_sampler_copies(256, 2, 2) == 7.5
    assert dtype_sort_sampler_copies(256, 4, 3) == 9.75
    assert dtype_sort_sampler_copies(256, 4, 2) == 9.5
    assert dtype_sort_sampler_copies(64, 2, 2) == 7.0  # below 128 rows the gather: the sort's temporaries not read


def test_the_qwen_issue16_start_counts_its_forward_above_its_sampler() -> None:
    inputs = _inputs(QWEN, "0.3.0", "RTX3090", gpu_total_bytes("RTX3090"), ["--quantization", "gptq"])
    assert v0_sampler_bytes(inputs) == 1_166_868_480 + 268_435_456
    assert v0_forward_bytes(inputs) == 2_969_567_232
    assert v0_forward_bound(inputs)


def test_the_mig_start_leaves_room_for_its_forward_not_only_its_sampler() -> None:
    inputs = _inputs(MISTRAL, "0.3.3", "A100-80GB", MIG_TOTAL, [])
    sampler, forward = v0_sampler_bytes(inputs), v0_forward_bytes(inputs)
    assert (sampler, forward) == (245_760_000 + 268_435_456, 3_623_878_656)
    assert forward is not None
    left = 0.9 * MIG_TOTAL - MISTRAL_WEIGHTS - MISTRAL_KV
    assert abs(left / GIB - 4.24) < 0.005
    assert forward < left < forward + GIB  # the non-torch memory is what remains beside the forward
    assert v0_forward_bound(inputs)
