"""The breakable prefill graphs' switch-offs SGLang 0.5.15 and 0.5.16 add beside MLA / LoRA / A2A / DP attention
(prefill_graphs_off.py LAUNCH_ERAS), read in the wheels: 0.5.15.post1 server_args.py
`_disable_breakable_cudagraph_if_incompatible` :3355-3358 turns them off for DeepSeek-V4 (`is_deepseek_v4`,
configs/model_config.py:118-122; 0.5.15's server_args.py is the same but for :4807); 0.5.16 adds DCP > 1 (:3787-3790).
Expected fractions by the reserve's own arithmetic (`_handle_gpu_memory_settings`), done by hand on one H200
(143,771 MiB), context 8,192, as in test_prefill_graphs_off_0517.py:
- Qwen3-30B-A3B at TP 2 DCP 2: 512 + 1.5 × 8,192 + 2 × 256 + 1/8 × 1,024 + 256 for the ranks = 13,568 MiB →
  round(0.90563, 3) = 0.906; with the 58 prefill sizes × 8 MiB = 464: 14,032 → round(0.90240, 3) = 0.902;
- DeepSeek-V4-Flash at TP 8 (not an MLA model to kvtop, so only the DeepSeek-V4 rule drops them): 512 + 12,288 +
  1,024 + 1,024 = 14,848 → round(0.89672, 3) = 0.897; with the sizes 15,312 → round(0.89350, 3) = 0.893.
"""

from __future__ import annotations

import pytest

from tests.engines.sglang.automatic_fraction import automatic_fraction

QWEN3_30B = "Qwen--Qwen3-30B-A3B.json"
DSV4_FLASH = "heldout/sgl-project--DeepSeek-V4-Flash-FP8.json"  # DeepseekV4ForCausalLM




@pytest.mark.parametrize(("version", "expected"), [("0.5.15.post1", 0.902), ("0.5.16", 0.906), ("0.5.17", 0.906)])
def test_dcp_drops_the_breakable_graphs_from_0_5_16(version: str, expected: float) -> None:
    fraction, source = automatic_fraction(QWEN3_30B, version, ["--tp", "2", "--dcp-size", "2"])
    assert fraction == expected
    assert ("off for decode context parallel" in source) == (version != "0.5.15.post1")
    assert ("464 MiB of it prefill graphs" in source) == (version == "0.5.15.post1")


@pytest.mark.parametrize("version", ["0.5.15", "0.5.15.post1", "0.5.16"])
def test_deepseek_v4_drops_the_breakable_graphs_from_0_5_15(version: str) -> None:
    fraction, source = automatic_fraction(DSV4_FLASH, version, ["--tp", "8"])
    assert fraction == 0.897
    assert "no prefill graphs (off for DeepSeek-V4)" in source


QWEN3_NEXT = "Qwen--Qwen3-Next-80B-A3B-Thinking.json"  # Qwen3NextForCausalLM
DEEPSEEK_V32 = "deepseek-ai--DeepSeek-V3.2.json"  # DeepseekV32ForCausalLM with index_topk: DSA


@pytest.mark.parametrize(
    ("config", "tp", "version", "expected"),
    [
        (DSV4_FLASH, "8", "0.5.11", 0.893),  # not on 0.5.11's list (configs/model_config.py:1446-1452)
        (DSV4_FLASH, "8", "0.5.12", 0.897),  # 0.5.12:1560-1561
        (DSV4_FLASH, "8", "0.5.13", 0.897),  # 0.5.13:1580-1581
        (DEEPSEEK_V32, "8", "0.5.10.post1", 0.897),  # on the list and is_deepseek_nsa
        (DEEPSEEK_V32, "8", "0.5.12", 0.897),
        (DEEPSEEK_V32, "8", "0.5.13", 0.886),  # off the list, no is_deepseek_nsa: the MLA graphs' 1,536 MiB stay
        (QWEN3_NEXT, "4", "0.5.10.post1", 0.900),
        (QWEN3_NEXT, "4", "0.5.13", 0.900),
        (QWEN3_NEXT, "4", "0.5.15.post1", 0.897),  # the breakable rules have no such list
    ],
)
def test_the_piecewise_graphs_refuse_listed_classes_to_0_5_13(config: str, tp: str, version: str, expected: float) -> None:
    """`_handle_piecewise_cuda_graph`'s first rule (0.5.10 server_args.py:1086 … 0.5.13:1350) on/off only: Qwen3-Next
    at TP 4 reserves 14,336 MiB without the graphs → round(0.90029, 3) = 0.900, and with the 58 prefill sizes × 8 MiB
    14,800 → round(0.89706, 3) = 0.897; DeepSeek-V3.2 at TP 8 (docstring above: 14,848 → 0.897) with the MLA graphs'
    1,536 MiB 16,384 → round(0.88604, 3) = 0.886; DeepSeek-V4-Flash as above."""
    fraction, source = automatic_fraction(config, version, ["--tp", tp])
    assert fraction == expected
    off = expected in (0.897, 0.900) and version != "0.5.15.post1"
    assert ("off for a model class piecewise graphs refuse" in source) == off


KIMI_LINEAR = "heldout/wave5/moonshotai--Kimi-Linear-48B-A3B-Instruct.json"  # linear_attn_config.kda_layers
KIMI_K3_TEXT = "recon/recon--moonshotai--Kimi-K3-text.json"  # KimiK3LinearForCausalLM


@pytest.mark.parametrize("config", [KIMI_LINEAR, KIMI_K3_TEXT])
@pytest.mark.parametrize(("version", "expected"), [("0.5.19", 0.890), ("0.5.20", 0.900), ("0.5.23", 0.900)])
def test_kda_hybrid_linear_attention_drops_the_breakable_graphs_from_0_5_20(
    config: str, version: str, expected: float
) -> None:
    """0.5.20 arg_groups/cuda_graph_hook.py:281-286 (0.5.23:185) `uses_kda_attention` (configs/model_config.py:183-205:
    `linear_attn_config.kda_layers`). Kimi-Linear at TP 4 reserves 14,336 MiB without graphs → round(0.90029, 3) =
    0.900; at 0.5.19 with the MLA graphs' 1,536 MiB (0.5.17 server_args.py:4910) 15,872 → round(0.88960, 3) = 0.890."""
    fraction, source = automatic_fraction(config, version, ["--tp", "4"])
    assert fraction == expected
    assert ("off for KDA hybrid linear attention" in source) == (version != "0.5.19")


@pytest.mark.parametrize(("version", "kept"), [("0.5.15.post1", False), ("0.5.16", True), ("0.5.17", True)])
def test_qwen3_5_keeps_the_breakable_graphs_from_0_5_16(version: str, kept: bool) -> None:
    """0.5.15.post1's breakable rule drops every multimodal model (server_args.py:3374); 0.5.16 lets the classes of
    `multimodal_breakable_cuda_graph_supported_model_archs` keep them (configs/model_config.py:1785, server_args.py
    :3800-3805). Qwen3.5-27B at TP 2: 13,568 MiB reserve, with the 58 sizes × 8 MiB 14,032 (the multimodal factor
    applies after, the same in both)."""
    source = automatic_fraction("heldout/Qwen--Qwen3.5-27B.json", version, ["--tp", "2"])[1]
    assert ("− 14032 MiB reserve" if kept else "− 13568 MiB reserve") in source
    assert ("464 MiB of it prefill graphs" in source) == kept
    assert ("off for a multimodal model" in source) == (not kept)
