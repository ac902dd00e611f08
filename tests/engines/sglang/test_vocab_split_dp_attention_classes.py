"""SGLang's embedding under DP attention for the hybrid / MoE / VLM model code of the DeepSeek pattern
(vocab_split.py GROUP_ERAS): whole to 0.5.8, over attention TP from 0.5.9.

Expected bytes from the config's shapes and SGLang's VocabParallelEmbedding arithmetic, never from kvtop: rows padded
to 64 (`DEFAULT_VOCAB_PADDING_SIZE = 64`, `pad_vocab_size`, layers/vocab_parallel_embedding.py 0.5.9:43, :52), then
÷ the group's size (`num_embeddings_per_partition = divide(...)`, :292), which is 1 under `enable_tp=False` (:229)
and `get_attention_tp_size()` = tp ÷ dp under `use_attn_tp_group=True` (:222). The LM head stays over TP.
"""

from __future__ import annotations

import json

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.launch import check_parallel, parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA


def _rows(relative: str, flags: list[str]) -> dict[str, tuple[int, int]]:
    path = DATA / relative
    model = model_from_config(json.loads(path.read_text()), source=path.name)
    settings = parse_flags("sglang", ["--model", "m", *flags])
    check_parallel(settings)
    ledger = predict(model, settings, gpu_total_bytes=141 << 30, gpu_name="H200", measured=MeasuredInputs())
    return {row.component: (row.bytes, row.shards) for row in ledger.ranks[0].weights.rows}


def test_falcon_h1_pads_its_vocab_to_64_then_divides_by_attention_tp_from_0_5_9() -> None:
    """FalconH1Model: falcon_h1.py 0.5.8:393 `enable_tp=not is_dp_attention_enabled()`, 0.5.9:393
    `use_attn_tp_group=is_dp_attention_enabled()`. Falcon-H1-0.5B's vocab 32,784 (not a multiple of 64) pads to
    32,832 (513 × 64) × hidden 1,024 × 2 B (bf16); --tp 4 --dp 2: attention TP 2, 16,416 rows a rank; LM head ÷ 4."""
    config = "engine_diff/configs/tiiuae--Falcon-H1-0.5B.json"
    flags = ["--tp", "4", "--dp", "2", "--enable-dp-attention", "--engine-version"]
    before, after = _rows(config, [*flags, "0.5.8"]), _rows(config, [*flags, "0.5.9"])
    assert before["embedding"] == (32_832 * 1_024 * 2, 1) == (67_239_936, 1)
    assert after["embedding"] == (16_416 * 1_024 * 2, 2) == (33_619_968, 2)
    assert before["lm_head"] == after["lm_head"] == (8_208 * 1_024 * 2, 4)


def test_step3_vl_pads_its_vocab_to_64_then_divides_by_attention_tp_from_0_5_9() -> None:
    """Step3VLForConditionalGeneration builds Step3TextModel: step3_vl.py 0.5.8:443 `enable_tp=not
    is_dp_attention_enabled()`, 0.5.9:443 `use_attn_tp_group=…`. Step3's vocab 128,815 pads to 128,832 (2,013 × 64)
    × hidden 7,168 × 2 B; --tp 8 --dp 2: attention TP 4, 32,208 rows a rank."""
    config = "engine_diff/registry/configs/Step3VLForConditionalGeneration.json"
    flags = ["--tp", "8", "--dp", "2", "--enable-dp-attention", "--engine-version"]
    assert _rows(config, [*flags, "0.5.8"])["embedding"] == (128_832 * 7_168 * 2, 1) == (1_846_935_552, 1)
    assert _rows(config, [*flags, "0.5.9"])["embedding"] == (32_208 * 7_168 * 2, 4) == (461_733_888, 4)


def test_ling_2_embedding_whole_at_0_5_3_over_attention_tp_from_0_5_9() -> None:
    """BailingMoeV2ForCausalLM (Ling-mini-2.0; first in bailing_moe.py 0.5.3:1028): 0.5.3:723 `enable_tp=not
    is_dp_attention_enabled()` (whole), 0.5.9:716 `use_attn_tp_group=…` (÷ attention TP 2). Vocab 157,184
    (2,456 × 64) × hidden 2,048 × 2 B (bf16); without DP attention ÷ TP 4."""
    config = "configs/recon/recon--inclusionAI--Ling-mini-2.0.json"
    raw = json.loads((DATA / config).read_text())
    assert (raw["vocab_size"], raw["hidden_size"], raw["torch_dtype"]) == (157_184, 2_048, "bfloat16")
    flags = ["--tp", "4", "--dp", "2", "--enable-dp-attention", "--engine-version"]
    assert _rows(config, [*flags, "0.5.3"])["embedding"] == (157_184 * 2_048 * 2, 1) == (643_825_664, 1)
    assert _rows(config, [*flags, "0.5.9"])["embedding"] == (78_592 * 2_048 * 2, 2) == (321_912_832, 2)
    assert _rows(config, ["--tp", "4", "--engine-version", "0.5.9"])["embedding"] == (39_296 * 2_048 * 2, 4)


def test_qwen2_5_vl_takes_qwen2_models_eras() -> None:
    """Qwen2_5_VLForConditionalGeneration builds `self.model = Qwen2Model(` (qwen2_5_vl.py 0.5.23:720): whole at
    0.5.8 (qwen2.py :280), over attention TP from 0.5.9 (:281). Vocab 152,064 (2,376 × 64) × hidden 3,584 × 2 B
    (--dtype bfloat16: the config says float32)."""
    config = "engine_diff/configs/Qwen--Qwen2.5-VL-7B-Instruct.json"
    flags = ["--tp", "4", "--dp", "2", "--enable-dp-attention", "--dtype", "bfloat16", "--engine-version"]
    assert _rows(config, [*flags, "0.5.8"])["embedding"] == (152_064 * 3_584 * 2, 1)
    assert _rows(config, [*flags, "0.5.9"])["embedding"] == (76_032 * 3_584 * 2, 2)


def test_mimo_v2_flash_embedding_whole_at_0_5_8_over_attention_tp_from_0_5_9() -> None:
    """MiMoV2FlashForCausalLM builds MiMoV2Model: mimo_v2_flash.py 0.5.8:634 `enable_tp=not
    is_dp_attention_enabled()`, 0.5.9:800 `use_attn_tp_group=…`. MiMo-V2-Flash's vocab 152,576 (2,384 × 64) ×
    hidden 4,096 × 2 B (bf16); --tp 8 --dp 2: attention TP 4, 38,144 rows a rank; LM head ÷ 8 (untied)."""
    config = "engine_diff/configs/XiaomiMiMo--MiMo-V2-Flash.json"
    raw = json.loads((DATA / config).read_text())
    assert (raw["vocab_size"], raw["hidden_size"], raw["torch_dtype"]) == (152_576, 4_096, "bfloat16")
    flags = ["--tp", "8", "--dp", "2", "--enable-dp-attention", "--engine-version"]
    before, after = _rows(config, [*flags, "0.5.8"]), _rows(config, [*flags, "0.5.9"])
    assert before["embedding"] == (152_576 * 4_096 * 2, 1) == (1_249_902_592, 1)
    assert after["embedding"] == (38_144 * 4_096 * 2, 4) == (312_475_648, 4)
    assert before["lm_head"] == after["lm_head"] == (19_072 * 4_096 * 2, 8)


def test_internvl_over_qwen2_takes_qwen2_models_eras() -> None:
    """InternVLChatModel builds Qwen2ForCausalLM when `llm_config.architectures[0] == "Qwen2ForCausalLM"`
    (internvl.py 0.5.23:546): qwen2.py 0.5.8:280 whole, 0.5.9:281 over attention TP. InternVL3-1B's text vocab
    151,674 pads to 151,680 (2,370 × 64) × hidden 896 × 2 B (bf16); --tp 4 --dp 2: attention TP 2, 75,840 rows."""
    config = "configs/heldout/OpenGVLab--InternVL3-1B-Pretrained.json"
    raw = json.loads((DATA / config).read_text())["llm_config"]
    assert (raw["architectures"], raw["vocab_size"], raw["hidden_size"]) == (["Qwen2ForCausalLM"], 151_674, 896)
    flags = ["--tp", "4", "--dp", "2", "--enable-dp-attention", "--dtype", "bfloat16", "--engine-version"]
    assert _rows(config, [*flags, "0.5.8"])["embedding"] == (151_680 * 896 * 2, 1) == (271_810_560, 1)
    assert _rows(config, [*flags, "0.5.9"])["embedding"] == (75_840 * 896 * 2, 2) == (135_905_280, 2)
