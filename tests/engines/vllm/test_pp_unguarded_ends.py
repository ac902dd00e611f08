"""vLLM's Qwen3MoeForCausalLM builds its embedding, final norm and LM head on every pipeline stage before 0.33.0 too
(`pp_parts.EVERY_STAGE_ERAS`, read from the source of every wheel 0.6.3.post1-0.32.0: qwen3_moe.py at 0.27.1,
`Qwen3MoeModel.__init__` line 466 `self.embed_tokens = VocabParallelEmbedding(...)` and `Qwen3MoeForCausalLM.__init__`
line 578 `self.lm_head = ParallelLMHead(...)`, no `get_pp_group()` branch around either).

The engine's figures (tests/data/calibration/vllm.jsonl, kubesimplify-qwen3-235b-a22b-2507-fp8-4xrtxpro6000-pp4-v0271:
Qwen3-235B-A22B-Instruct-2507-FP8, vLLM 0.27.1, TP 1 × PP 4 on RTX PRO 6000, --gpu-memory-utilization 0.90,
--max-model-len 32768, --max-num-seqs 32):
- "Model loading took 55.70 GiB": `logger.info_once` with scope "local" (vllm/logger.py:96-106 and
  v1/worker/gpu_model_runner.py:5405 at 0.27.1), so printed by rank 0 alone, PP stage 0. 94 layers split 23, 24,
  24, 23 (get_pp_indices): stage 0 is 23 layers + embedding + LM head (151,936 × 4,096 × 2 B = 1.16 GiB each).
  A guarded stage 0 (embedding only) is 54.53 GiB, 1.16 GiB short of the log.
- nvidia-smi 84,283 / 87,899 / 87,899 / 84,507 MiB: a middle stage holds 3,616 MiB = 3.53 GiB more than stage 0.
  Every stage's ends equal, that is one more layer (2.32 GiB) and one more layer's KV in the shared 34,730 blocks
  (34,730 × 16 × 2,048 B = 1.06 GiB): 3.38 GiB. Guarded, the middle stage would hold the embedding less: 2.22 GiB.
- GPU KV cache size 555,680 tokens (34,730 blocks of 16, the least over the stages: kv_cache_utils.py:2210-2222),
  bound by a 24-layer middle stage: 34,730 × 786,432 B = 25.44 GiB of its 85.51 − 58.01 GiB beside the weights.
"""

from __future__ import annotations

from kvtop.domain.calibration.estimate import CapacityPlan, planned_capacity
from kvtop.domain.launch import parse_flags
from kvtop.domain.wording import GIB, MIB
from kvtop.sources.hub import load_config_file
from tests.data_paths import CONFIGS
from tests.engines.vllm.test_pp_logged_weights import UNREAD_SHARE

QWEN3_235B_FP8 = load_config_file(CONFIGS / "heldout" / "wave5" / "Qwen--Qwen3-235B-A22B-Instruct-2507-FP8.json")
FLAGS = ["--engine-version", "0.27.1", "--pipeline-parallel-size", "4", "--gpu-memory-utilization", "0.90",
         "--max-model-len", "32768", "--max-num-seqs", "32"]  # fmt: skip


def _plan() -> CapacityPlan:
    settings = parse_flags("vllm", FLAGS)
    return planned_capacity(QWEN3_235B_FP8, settings, gpu_total_bytes=97887 * MIB, gpu_name="RTXPRO6000")


def test_stage_zero_holds_the_head_as_the_engines_log_says() -> None:
    """The log's 55.70 GiB (two decimals) against kvtop's book, 55.694 GiB: within 0.02 GiB (guarded: 1.16 short)."""
    stages = sorted(_plan().ledger.ranks, key=lambda r: r.pp_rank)
    assert abs(stages[0].weights.total_bytes / GIB - 55.70) < 0.02  # "Model loading took 55.70 GiB"
    assert stages[0].weights.total_bytes == stages[3].weights.total_bytes  # 23 layers and both ends each


def test_a_middle_stage_holds_what_nvidia_smi_shows_beside_stage_zero() -> None:
    """(87,899 − 84,283) MiB = 3.53 GiB; kvtop's weights and KV pool differ by 3.38 GiB (the rest: the middle stage's
    received intermediate tensors and the allocator's own)."""
    stages = sorted(_plan().ledger.ranks, key=lambda r: r.pp_rank)
    held = [r.weights.total_bytes + r.kv_pool_bytes for r in stages]
    assert abs((held[1] - held[0]) - (87899 - 84283) * MIB) < 0.2 * GIB


def test_the_pool_is_within_one_percent_of_the_logged_tokens() -> None:
    """Fully blind (kvtop's stage 0 book, 55.69 GiB, against the logged 55.70): over the logged 555,680 tokens by what
    is not read beside the binding stage's weights, as with the logged load (test_pp_logged_weights.UNREAD_SHARE:
    +1.6 % since session 54's CUDA-graph form charges the stage's 24 layers 0.10 GiB where the former fit gave 0.35)."""
    assert 0 < _plan().ledger.engine.token_capacity / 555_680 - 1 < UNREAD_SHARE
