"""vLLM's EAGLE-3 head as loaded (engines/vllm/eagle3_head.py), against llama_eagle3.py's arithmetic and a real log.

- With its config (SpecForge's Llama-3.x-70B head, tests/data/configs/drafts): one layer of h8192, 64/8 heads × 128,
  inter 28672, `draft_vocab_size` 32000, float16, sized by hand from Eagle3LlamaForCausalLM (v0.20.0).
- Without (dcstang/eagle3-spec-dec's own Qwen3-8B head, `output/checkpoints/4`, not public; tests/data/calibration/
  vllm.jsonl `dcstang-eagle3-qwen3-8b-h100-v0200-eagle3-k2`): 'Model loading took 15.78 GiB' against 15.27 GiB for
  the same target without it, 0.51 GiB (0.50-0.52 by the two-decimal figures): the head in the target's shape is
  0.501 GiB, the plan's assumed draft weights, and its interval holds the logged 366,480 tokens.
"""

from __future__ import annotations

import json
from pathlib import Path

from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.eagle3_head import head_bytes, target_shaped_bytes
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_config_file
from tests.data_paths import CONFIGS

SPECFORGE_70B = CONFIGS / "drafts" / "sgl-project--SpecForge-llama3-70B-eagle3.json"


def _by_hand(tp: int) -> int:
    """Eagle3LlamaForCausalLM (llama_eagle3.py v0.20.0) for SpecForge's 70B head at `tp`, fp16, embedding shared."""
    hidden, q, kv, inter = 8192, 64 * 128 // tp, 8 * 128 // tp, 28672 // tp
    layer = 2 * hidden * (q + 2 * kv) + q * hidden + 3 * hidden * inter + 3 * hidden  # qkv over 2 × hidden, o, MLP, norms
    fc, norm, lm_head = 3 * 8192 * hidden, hidden, 32000 // tp * hidden  # fc whole; its own 32000-row head
    return (layer + fc + norm + lm_head) * 2 + 32000 * 8  # + draft_id_to_target_id, int64


V0200, V0240 = ResolvedVersion(text="0.20.0"), ResolvedVersion(text="0.24.0")


def test_a_head_of_known_config_is_sized_as_vllm_builds_it() -> None:
    draft = load_config_file(SPECFORGE_70B)
    assert head_bytes(draft, ParallelLayout(tp=1), V0200) == _by_hand(1) == 2_806_310_912
    assert head_bytes(draft, ParallelLayout(tp=4), V0200) == _by_hand(4) == 1_003_808_768
    assert head_bytes(draft, ParallelLayout(tp=4), V0240) == _by_hand(4)  # no num_aux_hidden_states: 3 either way


def test_from_v0_22_0_the_fc_takes_the_configs_aux_states(tmp_path: Path) -> None:
    """llama_eagle3.py v0.21.0:176 builds the fc over target_hidden_size × 3 whatever the config says; v0.22.0
    :179-190 (and v0.24.0 :178-190) over × num_aux_hidden_states, with fc_norm's norm of 8192 per state (:200-207)."""
    config = json.loads(SPECFORGE_70B.read_text()) | {"num_aux_hidden_states": 4, "fc_norm": True}
    path = tmp_path / "four-aux-eagle3.json"
    path.write_text(json.dumps(config))
    draft = load_config_file(path)
    assert head_bytes(draft, ParallelLayout(tp=1), V0200) == _by_hand(1)
    assert head_bytes(draft, ParallelLayout(tp=1), V0240) == _by_hand(1) + (8192 * 8192 + 4 * 8192) * 2


# Eagle3LlamaForCausalLM (llama_eagle3.py v0.20.0) in Qwen3-8B's shape, bf16: layer 0's qkv over 2 × 4096 inputs
# (32 q + 2 × 8 k/v heads × 128), o 4096 × 4096, MLP 3 × 4096 × 12288; input, post-attention and hidden norms (:69);
# fc 4096 × 3 × 4096 (:176); final norm (:195); draft_id_to_target_id, 151,936 int64 rows (:303)
_H = 4096
QWEN3_8B_HEAD = (2 * _H * (4096 + 2 * 1024) + 4096 * _H + 3 * _H * 12288 + 3 * _H + 3 * _H * _H + _H) * 2 + 151_936 * 8


def test_a_plain_decoder_is_no_eagle3_head() -> None:
    assert head_bytes(load_config_file(CONFIGS / "Qwen--Qwen3-8B.json"), ParallelLayout(tp=1), V0200) is None


def test_the_target_shaped_head_is_what_dcstangs_log_grew_by() -> None:
    qwen3_8b: ModelSpec = load_config_file(CONFIGS / "Qwen--Qwen3-8B.json")
    assert target_shaped_bytes(qwen3_8b, 1) == QWEN3_8B_HEAD == 538_119_168
    assert 0.50 * GIB <= QWEN3_8B_HEAD <= 0.52 * GIB  # 15.78 − 15.27 GiB, each to two decimals


def test_without_its_config_the_head_widens_the_interval_around_the_logged_start() -> None:
    spec = {"model": "output/checkpoints/4", "num_speculative_tokens": 2, "method": "eagle3"}
    settings = parse_flags("vllm", ["--engine-version", "0.20.0", "--dtype", "bfloat16", "--trust-remote-code",
                                    "--speculative-config", json.dumps(spec)])  # fmt: skip
    plan = planned_capacity(load_config_file(CONFIGS / "Qwen--Qwen3-8B.json"), settings,
                            gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100")  # fmt: skip
    term = next(t for t in plan.ledger.terms if t.label.startswith("draft weights"))
    # assumed as vLLM builds every EAGLE-3 head (one layer + fc), in the target's shape as its one KV layer is
    assert term.modelled and term.basis.value == "assumed" and term.bytes == QWEN3_8B_HEAD
    assert "target's shape" in term.label and "--draft-model" in term.detail
    weights = next(t for t in plan.estimate.terms if t.term.value == "weights")
    assert "EAGLE-3 draft of unknown config" in weights.basis
    assert plan.token_capacity_min <= 366_480 <= plan.token_capacity_max
