"""SGLang turns its prefill CUDA graphs off for some launches before it sizes the automatic fraction, so the reserve
holds none of their 8 MiB a captured size (prefill_graphs_off.py LAUNCH_ERAS). Expected fractions by SGLang's own
arithmetic (`_handle_gpu_memory_settings`, 0.5.10.post1 server_args.py:1283-1326; 0.5.23 memory_hook.py:309-325,
:363-397), done by hand for Qwen3-30B-A3B (no MLA) on one H200 (143,771 MiB, chunked prefill 8,192, decode max bs 256):
- TP 1: 512 + 1.5 × 8,192 + 2 × 256 + 1/8 × 1,024 = 13,440 MiB; the 58 prefill sizes to 8,192 add 8 × 58 = 464;
  round((143,771 − 13,440) / 143,771, 3) = round(0.90652, 3) = 0.907; with them 13,904 → round(0.90329, 3) = 0.903.
- PP 2: tp × pp / 8 × 1,024 = 256: 13,568 → round(0.90563, 3) = 0.906; with them 14,032 → round(0.90240, 3) = 0.902.
- TP 2 DP 2 DP attention: 256 + 3 × 256 × 2 = 1,536 more: 15,104 → round(0.89494, 3) = 0.895; with them 15,568 →
  round(0.89172, 3) = 0.892.
Which launch turns them off, by release (SGLang source, read in its wheels):
- 0.5.10.post1 server_args.py `_handle_piecewise_cuda_graph`: speculative :1089, DP attention :1092, PP :1098,
  A2A :1104, LoRA :1107, hierarchical cache :1123, PD disaggregation (any mode) :1129, EPLB :1135;
- 0.5.11 :1194-1261: the same, no speculative rule;
- 0.5.15.post1 (breakable default on CUDA, cuda_graph_config.py:95): LoRA :3365, A2A :3367-3370, DP attention
  :3372; a PD decode node's reserve skips them (:3662); PP, hierarchical cache, EPLB, a PD prefill node keep them
  (a prefill node skips the decode graphs instead, :3640; decode_graphs_off.py);
- 0.5.23 arg_groups/cuda_graph_hook.py: PP :150, an A2A backend but deepep / megamoe / flashinfer :226, a PD decode
  node :568; LoRA and DP attention keep them.
"""

from __future__ import annotations

import pytest

from tests.engines.sglang.automatic_fraction import automatic_fraction

QWEN3_30B = "Qwen--Qwen3-30B-A3B.json"
DP_ATTENTION = ["--tp", "2", "--dp", "2", "--enable-dp-attention"]
OFF, ON = 0.907, 0.903  # TP 1 without / with the 464 MiB of prefill sizes


def _fraction(version: str, flags: list[str]) -> tuple[float, str]:
    return automatic_fraction(QWEN3_30B, version, flags)


@pytest.mark.parametrize(
    ("version", "flags", "expected"),
    [
        ("0.5.10.post1", [], ON),
        ("0.5.10.post1", ["--speculative-algorithm", "NGRAM"], OFF),  # NGRAM: no draft reserve (0 MiB)
        ("0.5.10.post1", DP_ATTENTION, 0.895),
        ("0.5.10.post1", ["--pp", "2"], 0.906),
        ("0.5.10.post1", ["--moe-a2a-backend", "deepep"], OFF),  # no DeepEP reserve before 0.5.15
        ("0.5.10.post1", ["--enable-lora"], OFF),
        ("0.5.10.post1", ["--enable-hierarchical-cache"], OFF),
        ("0.5.10.post1", ["--disaggregation-mode", "prefill"], OFF),
        ("0.5.10.post1", ["--enable-eplb"], OFF),
        ("0.5.11", ["--speculative-algorithm", "NGRAM"], ON),
        ("0.5.11", ["--pp", "2"], 0.906),
        ("0.5.11", ["--disaggregation-mode", "decode"], OFF),
        ("0.5.15.post1", ["--enable-lora"], OFF),
        ("0.5.15.post1", DP_ATTENTION, 0.895),
        ("0.5.15.post1", ["--pp", "2"], 0.902),
        ("0.5.15.post1", ["--enable-hierarchical-cache"], ON),
        ("0.5.15.post1", ["--enable-eplb"], ON),
        ("0.5.23", ["--pp", "2"], 0.906),
        ("0.5.23", ["--moe-a2a-backend", "mooncake"], OFF),
        ("0.5.23", ["--enable-lora"], ON),
        ("0.5.23", DP_ATTENTION, 0.892),
    ],
)
def test_the_launches_that_turn_the_prefill_graphs_off_reserve_none(
    version: str, flags: list[str], expected: float
) -> None:
    fraction, source = _fraction(version, flags)
    assert fraction == expected
    assert ("no prefill graphs" in source) == (expected in (OFF, 0.895, 0.906))


@pytest.mark.parametrize("version", ["0.5.15.post1", "0.5.23"])
def test_a_decode_node_reserves_no_prefill_graphs_and_decode_batch_activations(version: str) -> None:
    """A PD decode node skips the prefill sizes (0.5.15.post1 :3662; 0.5.23 memory_hook.py:380-381) and sizes its
    activations to the decode batch, max(256, 2048) × 1.5 = 3,072 MiB (0.5.15.post1 :3626-3633; 0.5.23 :297-303;
    decode_graphs_off.py): 512 + 3,072 + 512 + 128 = 4,224, under the 10 GiB floor → round(133,531 / 143,771, 3) =
    0.929."""
    fraction, source = _fraction(version, ["--disaggregation-mode", "decode"])
    assert fraction == 0.929
    assert "no prefill graphs (off for a PD decode node)" in source


def test_a_prefill_node_keeps_them_and_drops_the_decode_graphs_from_0_5_15() -> None:
    """0.5.15.post1: a PD prefill node keeps the prefill sizes (:3662 skips them only on a decode node) and skips the
    decode graphs' 2 × 256 (:3640 `disaggregation_mode != "prefill"`; decode_graphs_off.py): 13,904 − 512 = 13,392 →
    round(0.90685, 3) = 0.907."""
    fraction, source = _fraction("0.5.15.post1", ["--disaggregation-mode", "prefill"])
    assert fraction == 0.907
    assert "464 MiB of it prefill graphs" in source and "no decode graphs (off for a PD prefill node)" in source


def test_a_deepep_launch_keeps_them_from_0_5_23_and_says_so() -> None:
    """0.5.15.post1: any A2A backend drops the breakable graphs; 0.5.23 takes deepep (cuda_graph_hook.py:226). Both
    add the 2,048 MiB DeepEP reserve (deployment_eras.py): 13,440 + 2,048 = 15,488 → round(0.89227, 3) = 0.892;
    with the 464 and the 1,024 MiB 0.5.23 keeps for breakable graphs beside DeepEP (memory_hook.py:391-397):
    16,976 → round(0.88192, 3) = 0.882."""
    assert _fraction("0.5.15.post1", ["--moe-a2a-backend", "deepep"])[0] == 0.892
    fraction, source = _fraction("0.5.23", ["--moe-a2a-backend", "deepep"])
    assert fraction == 0.882
    assert "464 MiB of it prefill graphs, 1024 MiB of it their DeepEP capture" in source


@pytest.mark.parametrize(("version", "expected"), [("0.5.13", 0.886), ("0.5.15.post1", 0.897), ("0.5.23", 0.886)])
def test_the_breakable_default_drops_an_mla_models_graphs_from_0_5_15_to_0_5_17(version: str, expected: float) -> None:
    """0.5.15.post1's breakable rules drop the graphs for `use_mla_backend()` (server_args.py:3352; 0.5.16:3774; 0.5.17
    non-DSA only: test_prefill_graphs_off_0517.py); 0.5.23 has no MLA rule (cuda_graph_hook.py:183-239) and 0.5.13's piecewise switch none either. DeepSeek-R1 at TP 8 on an
    H200 (decode max bs 512 at TP ≥ 4): 512 + 12,288 + 2 × 512 + 8/8 × 1,024 = 14,848 MiB → round(0.89672, 3) = 0.897;
    with the MLA graphs' 1,536 MiB: 16,384 → round(0.88604, 3) = 0.886."""
    assert automatic_fraction("deepseek-ai--DeepSeek-R1.json", version, ["--tp", "8"])[0] == expected
