"""--enable-dp-lm-head and DP attention on SGLang classes whose embedding and head split apart (vocab_launch.py,
vocab_split.py), bytes from each config and SGLang's VocabParallelEmbedding arithmetic (rows padded to 64, ÷ the
group's size), never from kvtop.

- Ling-mini-2.0 (BailingMoeV2ForCausalLM; vocab 157,184 = 2,456 × 64, hidden 2,048, bf16, untied), tp 8, dp 2,
  --enable-dp-attention: bailing_moe.py 0.5.3rc0:700-706 builds the embedding with `use_attn_tp_group=
  global_server_args_dict["enable_dp_lm_head"]` and the head (:799-805) alike; 0.5.3rc2:723-729 builds the embedding
  with `enable_tp=not is_dp_attention_enabled()` (whole), the head still by the flag.
- Kimi-K3's text class (KimiK3LinearForCausalLM; vocab 163,840, hidden 7,168): kimi_k3.py 0.5.23:2751
  `**get_embedding_tp_kwargs()` = `use_attn_tp_group=is_dp_attention_enabled()` (vocab_parallel_embedding.py
  0.5.23:166-185): over attention TP 4 = 40,960 rows.
- DeepSeek-V3 (vocab 129,280, hidden 7,168): deepseek_v2.py 0.4.9:1930-1934 `use_attn_tp_group=True` (over attention
  TP 4: 32,320 rows), 0.4.8.post1:1802 and 0.4.9.post1:1938 `enable_tp=not global_server_args_dict[...]` (whole).
- Qwen2.5-7B (vocab 152,064 = 2,376 × 64, hidden 3,584): qwen2.py 0.4.8.post1 VocabParallelEmbedding over TP (19,008
  rows at TP 8), 0.4.9:270 `enable_tp=not global_server_args_dict["enable_dp_attention"]` (whole).
"""

from __future__ import annotations

from kvtop.domain.launch_check import launch_refusals
from tests.data_paths import DATA
from tests.engines.sglang.test_vocab_launch import DEEPSEEK_V3, _ledger, _rows

LING = str(DATA / "configs" / "recon" / "recon--inclusionAI--Ling-mini-2.0.json")
KIMI_K3 = str(DATA / "configs" / "recon" / "recon--moonshotai--Kimi-K3-text.json")
QWEN25 = str(DATA / "configs" / "Qwen--Qwen2.5-7B-Instruct.json")
DP_ATTN = ["--tp", "8", "--dp", "2", "--enable-dp-attention"]
LING_WHOLE, LING_4, LING_8 = 157_184 * 2_048 * 2, 39_296 * 2_048 * 2, 19_648 * 2_048 * 2


def test_bailing_0_5_3rc0_splits_both_tables_by_the_flag() -> None:
    flagged = _ledger([*DP_ATTN, "--enable-dp-lm-head", "--engine-version", "0.5.3rc0"], None, LING)
    assert not [r for r in launch_refusals(flagged) if r.field == "--enable-dp-lm-head"]
    rows = _rows(flagged)
    assert (rows["embedding"], rows["lm_head"]) == ((LING_4, 4), (LING_4, 4)) == ((160_956_416, 4), (160_956_416, 4))
    plain = _rows(_ledger([*DP_ATTN, "--engine-version", "0.5.3rc0"], None, LING))
    assert (plain["embedding"], plain["lm_head"]) == ((LING_8, 8), (LING_8, 8)) == ((80_478_208, 8), (80_478_208, 8))


def test_bailing_0_5_3rc2_builds_the_embedding_whole_and_the_head_by_the_flag() -> None:
    flagged = _rows(_ledger([*DP_ATTN, "--enable-dp-lm-head", "--engine-version", "0.5.3rc2"], None, LING))
    assert (flagged["embedding"], flagged["lm_head"]) == ((LING_WHOLE, 1), (LING_4, 4)) == ((643_825_664, 1), (160_956_416, 4))
    plain = _rows(_ledger([*DP_ATTN, "--engine-version", "0.5.3rc2"], None, LING))
    assert (plain["embedding"], plain["lm_head"]) == ((LING_WHOLE, 1), (LING_8, 8))


def test_kimi_k3_embedding_over_attention_tp_and_its_head_by_the_flag() -> None:
    rows = _rows(_ledger([*DP_ATTN, "--engine-version", "0.5.23"], None, KIMI_K3))
    assert rows["embedding"] == (40_960 * 7_168 * 2, 4) == (587_202_560, 4)
    assert rows["lm_head"] == (20_480 * 7_168 * 2, 8) == (293_601_280, 8)
    flagged = _rows(_ledger([*DP_ATTN, "--enable-dp-lm-head", "--engine-version", "0.5.23"], None, KIMI_K3))
    assert flagged["lm_head"] == (587_202_560, 4)
    replicated = _rows(_ledger([*DP_ATTN, "--engine-version", "0.5.23"], {"SGLANG_ENABLE_EMBED_REPLICATION": "1"}, KIMI_K3))
    assert replicated["embedding"] == (163_840 * 7_168 * 2, 1) == (2_348_810_240, 1)


def test_deepseek_v3_embedding_over_attention_tp_at_0_4_9_alone() -> None:
    def embedding(release: str) -> tuple[int, int]:
        return _rows(_ledger([*DP_ATTN, "--engine-version", release], None, str(DEEPSEEK_V3)))["embedding"]

    assert embedding("0.4.9") == (32_320 * 7_168 * 2, 4) == (463_339_520, 4)
    assert embedding("0.4.8.post1") == embedding("0.4.9.post1") == (129_280 * 7_168 * 2, 1) == (1_853_358_080, 1)


def test_qwen2_embedding_whole_from_0_4_9() -> None:
    def embedding(release: str) -> tuple[int, int]:
        return _rows(_ledger([*DP_ATTN, "--engine-version", release], None, QWEN25))["embedding"]

    assert embedding("0.4.8.post1") == (19_008 * 3_584 * 2, 8) == (136_249_344, 8)
    assert embedding("0.4.9") == (152_064 * 3_584 * 2, 1) == (1_089_994_752, 1)
