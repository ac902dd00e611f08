"""vLLM 0.2.0–0.2.5's sampler un-sorts the masked logits by argsort: its profile peaks at 14.5 copies of seqs × vocab
× 4 B, not the 9.5 of the later sort (`v0_profile.argsort_sampler_copies`, `SAMPLER_ERAS`).

The figures are two starts of `LLM(model="facebook/opt-125m")` on Colab T4s (tests/data/calibration/vllm.jsonl):
- vLLM 0.10.2 (cnubigdata-vllm-test-…) prints total_gpu_memory 14.74 GiB, weights 0.2389 GiB and 'PyTorch activation
  peak memory takes 0.47GiB';
- vLLM 0.2.4 (sameh-zaghloul-… and vedantpople4-…, two users) print '# GPU blocks: 22431' and no terms: at the same
  total, 0.9 × 14.74 − 0.2389 − 22,431 × 589,824 B (a block: 16 tokens × 12 layers × 2 × 768 × 2 B) leaves
  13.266 − 0.2389 − 12.3222 = 0.705 GiB to the profile's torch peak.
By hand from the v0.2.4 wheel's sampler.py `_apply_top_p_top_k` (256 rows, OPT's 50,272 tokens, float16): while
`torch.argsort(logits_idx)` runs, the fp16 logits, logits_sort, probs_sort and probs_sum (4 × ½), the int64 logits_idx
(2) and two bool masks (2 × ¼) are held, and the argsort's int64 values and indices, torch's int64 reverse indices
and cub's alternate keys and values take 5 × 2: 14.5 × 256 × 50,272 × 4 B = 746,438,656 B, beside the forward's
hidden states 2,048 × 768 × 2 B = 3,145,728 B: 749,584,384 B = 0.698 GiB. The 0.10.2 log's 0.47 is the later 9.5
copies (0.455 GiB) and the same hidden states.
"""

from __future__ import annotations

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.release_calendar import V0_RELEASE
from kvtop.domain.engines.vllm.v0_profile import (
    SAMPLER_ERAS,
    argsort_sampler_copies,
    v0_forward_bound,
    v0_sampler_bytes,
)
from kvtop.domain.launch import parse_flags
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_config_file
from tests.data_paths import CONFIGS

OPT = load_config_file(CONFIGS / "families" / "facebook--opt-125m.json")
COLAB_T4_TOTAL = 14.74  # GiB, the v0.10.2 start's total_gpu_memory
V024_PEAK = 0.9 * COLAB_T4_TOTAL - 0.2389 - 22_431 * 589_824 / GIB  # what v0.2.4's 22,431 blocks leave the peak
V0102_PEAK = 0.47  # GiB, printed by the v0.10.2 start


def _inputs(version: str) -> CalibrationInputs:
    settings = parse_flags("vllm", ["--gpu-memory-utilization", "0.9"], strict=True)
    return CalibrationInputs(
        model=OPT, settings=settings, layout=ParallelLayout(), gpu_name="T4",
        gpu_total_bytes=round(COLAB_T4_TOTAL * GIB), version=ResolvedVersion(text=version), weights_bytes=0,
        context_length=2048,
    )  # fmt: skip


def test_the_argsort_releases_hold_fourteen_and_a_half_copies() -> None:
    assert argsort_sampler_copies(256, 2) == 14.5
    assert argsort_sampler_copies(256, 4) == 16.5  # a float32 model's logits, sorted values and probabilities
    for version in ("0.2.0", "0.2.1.post1", "0.2.4", "0.2.5"):
        assert SAMPLER_ERAS.at(ResolvedVersion(text=version)).sort == "argsort"
    assert SAMPLER_ERAS.at(ResolvedVersion(text="0.2.6")).sort == "model-dtype sort"


def test_the_v024_count_meets_the_peak_its_blocks_leave() -> None:
    inputs = _inputs("0.2.4")
    counted = v0_sampler_bytes(inputs)
    assert counted == 746_438_656 + 3_145_728
    assert not v0_forward_bound(inputs)  # OPT-125m's forward at 2,048 tokens is far smaller
    assert abs(counted / GIB - V024_PEAK) < 0.01  # 0.698 counted, 0.705 left by the log


def test_the_later_sort_keeps_its_nine_and_a_half_copies() -> None:
    counted = v0_sampler_bytes(_inputs(V0_RELEASE))  # the corpus reads the 0.10.2 V0 start as V0's last release
    assert counted is not None
    assert abs(counted / GIB - V0102_PEAK) < 0.015  # the log prints two decimals
