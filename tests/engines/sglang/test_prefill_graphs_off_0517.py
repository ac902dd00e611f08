"""The breakable prefill graphs' switch-offs from SGLang 0.5.17 (prefill_graphs_off.py LAUNCH_ERAS), read in the
wheels: 0.5.17 server_args.py `_disable_breakable_cudagraph_if_incompatible` :4452-4512 (MLA other than DSA,
NemotronH, DeepSeek-V4, CP, DCP, TBO, an A2A backend but deepep / megamoe / flashinfer, a multimodal model; LoRA and DP
attention no longer); 0.5.18 :4666 (the MLA and NemotronH rules gone); 0.5.19 arg_groups/cuda_graph_hook.py:122
(PP > 1 off by default). Expected fractions by the reserve's own arithmetic (`_handle_gpu_memory_settings`,
`reserve_for_graph_mb` 0.5.17 server_args.py:4882-4921), done by hand on one H200 (143,771 MiB), context 8,192:
- Qwen3-30B-A3B / Nemotron-3-Nano at TP 1: 512 + 1.5 × 8,192 + 2 × 256 + 1/8 × 1,024 = 13,440 MiB → round(0.90652, 3)
  = 0.907; the 58 prefill sizes to 8,192 add 8 × 58 = 464: 13,904 → round(0.90329, 3) = 0.903;
- TP 2 (DCP 2, or PP 2 at TP 1): 256 for the ranks: 13,568 → 0.906; with the sizes 14,032 → round(0.90240, 3) = 0.902;
- TP 2 DP 2 DP attention: + 3 × 256 × 2: with the sizes 15,568 → round(0.89172, 3) = 0.892;
- DeepEP: + 2,048 (reserve_for_deepep_a2a_mb) + 1,024 beside the breakable graphs (:4914-4921): 16,976 →
  round(0.88192, 3) = 0.882; without the graphs (0.5.16) 15,488 → round(0.89227, 3) = 0.892;
- DeepSeek-R1 / -V3.2 at TP 8 (decode max bs 512): 512 + 12,288 + 1,024 + 1,024 = 14,848 → round(0.89672, 3) = 0.897;
  with the MLA graphs' 1,536 MiB (`1.5 * 1024`, :4910): 16,384 → round(0.88604, 3) = 0.886.
"""

from __future__ import annotations

import pytest

from tests.engines.sglang.automatic_fraction import automatic_fraction

QWEN3_30B = "Qwen--Qwen3-30B-A3B.json"
NEMOTRON_H = "nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.json"  # NemotronHForCausalLM
DEEPSEEK_R1 = "deepseek-ai--DeepSeek-R1.json"  # MLA, no indexer
DEEPSEEK_V32 = "deepseek-ai--DeepSeek-V3.2.json"  # DeepseekV32ForCausalLM with index_topk: DSA
DP_ATTENTION = ["--tp", "2", "--dp", "2", "--enable-dp-attention"]




@pytest.mark.parametrize(
    ("version", "flags", "expected", "off_for"),
    [
        ("0.5.16", ["--enable-lora"], 0.907, "LoRA"),
        ("0.5.17", ["--enable-lora"], 0.903, None),
        ("0.5.22", ["--enable-lora"], 0.903, None),
        ("0.5.17", DP_ATTENTION, 0.892, None),
        ("0.5.17", ["--pp", "2"], 0.902, None),
        ("0.5.18", ["--pp", "2"], 0.902, None),
        ("0.5.19", ["--pp", "2"], 0.906, "PP > 1"),
        ("0.5.16", ["--moe-a2a-backend", "deepep"], 0.892, "an MoE A2A backend"),
        ("0.5.17", ["--moe-a2a-backend", "deepep"], 0.882, None),
        ("0.5.17", ["--moe-a2a-backend", "mooncake"], 0.907, "an A2A backend breakable graphs do not take"),
        ("0.5.17", ["--tp", "2", "--dcp-size", "2"], 0.906, "decode context parallel"),
        ("0.5.22", ["--tp", "2", "--dcp-size", "2"], 0.906, "decode context parallel"),
    ],
)
def test_lora_dp_attention_and_deepep_keep_the_graphs_from_0_5_17(
    version: str, flags: list[str], expected: float, off_for: str | None
) -> None:
    fraction, source = automatic_fraction(QWEN3_30B, version, flags)
    assert fraction == expected
    if off_for is None:
        assert "464 MiB of it prefill graphs" in source
    else:
        assert f"no prefill graphs (off for {off_for})" in source


def test_deepep_beside_the_kept_graphs_adds_its_capture_term_at_0_5_17() -> None:
    source = automatic_fraction(QWEN3_30B, "0.5.17", ["--moe-a2a-backend", "deepep"])[1]
    assert "464 MiB of it prefill graphs, 1024 MiB of it their DeepEP capture, 2048 MiB of it DeepEP" in source


@pytest.mark.parametrize(
    ("config", "version", "expected"),
    [
        (DEEPSEEK_R1, "0.5.16", 0.897),
        (DEEPSEEK_R1, "0.5.17", 0.897),  # MLA other than DSA: off
        (DEEPSEEK_R1, "0.5.18", 0.886),  # no MLA rule
        (DEEPSEEK_V32, "0.5.16", 0.897),  # every MLA model off
        (DEEPSEEK_V32, "0.5.17", 0.886),  # DSA exempt (is_deepseek_dsa)
    ],
)
def test_0_5_17_drops_only_a_non_dsa_mla_models_graphs(config: str, version: str, expected: float) -> None:
    assert automatic_fraction(config, version, ["--tp", "8"])[0] == expected


@pytest.mark.parametrize(("version", "expected"), [("0.5.16", 0.903), ("0.5.17", 0.907), ("0.5.18", 0.903)])
def test_0_5_17_alone_drops_nemotron_h_graphs(version: str, expected: float) -> None:
    fraction, source = automatic_fraction(NEMOTRON_H, version, [])
    assert fraction == expected
    assert ("off for NemotronH" in source) == (version == "0.5.17")
