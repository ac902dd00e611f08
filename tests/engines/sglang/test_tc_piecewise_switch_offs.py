"""The torch.compile piecewise prefill backend (`tc_piecewise`) has its own switch-offs, not the breakable backend's
(prefill_graphs_off.TC_LAUNCH_ERAS, MULTIMODAL_GRAPH_ERAS), read in the wheels: from 0.5.16 a multimodal class on the
piecewise allowlist leaves the breakable default for tc_piecewise (0.5.16 server_args.py:3663-3671, allowlist
configs/model_config.py:1776: Kimi-K2.5 among them), from 0.5.18 only if it is not on the breakable allowlist too
(0.5.18 server_args.py:4562-4569, 0.5.19 arg_groups/cuda_graph_hook.py:140-149, 0.5.21 :148-157): Kimi-K2.5 joins
the breakable list at 0.5.18 (configs/model_config.py:1921) and keeps the breakable backend; Cohere2-Vision moves from
the piecewise list (0.5.18 :1908) to the breakable one at 0.5.19 (:1973, :1985); MiniMax-M3 stays piecewise-only to
0.5.21 (:2295, :2307) and joins the breakable list at 0.5.22 (:2388). The tc_piecewise rules (0.5.16 :3688-3757, 0.5.17 :4377, 0.5.21 cuda_graph_hook.py:177-259) have no MLA rule but turn the graphs
off for `--enable-torch-compile`, EPLB and any PD mode; 0.5.22 has no tc_piecewise backend (its breakable rules keep
the graphs for them).

Expected reserves by SGLang's arithmetic (`_handle_gpu_memory_settings`) for Kimi-K2.5 (MLA) at TP 8 on one H200
(143,771 MiB), context 8,192: 512 metadata + 1.5 × 8,192 activations + 1,024 for TP 8 + 2 × 512 decode graphs =
14,848 MiB with no prefill graphs; + 1,536 for MLA prefill graphs (0.5.17 server_args.py:4910) = 16,384 MiB; a PD
prefill node drops the decode graphs' 1,024 (0.5.16 :4169-4182): 13,824 MiB. Cohere2-Vision and MiniMax-M3 (not MLA)
reserve the 58 prefill sizes × 8 MiB = 464 MiB for the graphs: 14,848 + 464 = 15,312 MiB.
"""

from __future__ import annotations

import pytest

from tests.engines.sglang.automatic_fraction import automatic_fraction

KIMI_K25 = "heldout/moonshotai--Kimi-K2.5.json"  # KimiK25ForConditionalGeneration, on the piecewise allowlist
COHERE2_VISION = "../engine_diff/registry/configs/Cohere2VisionForConditionalGeneration.json"
MINIMAX_M3 = "heldout/nvidia--MiniMax-M3-NVFP4.json"  # MiniMaxM3SparseForConditionalGeneration
WITH_GRAPHS, WITHOUT = "143771 − 16384 MiB reserve", "143771 − 14848 MiB reserve"


def _source(version: str, flags: list[str], config: str = KIMI_K25) -> str:
    return automatic_fraction(config, version, ["--tp", "8", *flags])[1]


@pytest.mark.parametrize("version", ["0.5.16", "0.5.17", "0.5.18", "0.5.21"])
def test_the_allowlisted_class_keeps_its_tc_piecewise_graphs_though_mla(version: str) -> None:
    # the breakable rules of 0.5.16 / 0.5.17 drop an MLA model (before session 61 kvtop applied them: 14,848 MiB)
    assert WITH_GRAPHS in _source(version, [])


@pytest.mark.parametrize("version", ["0.5.16", "0.5.17"])
@pytest.mark.parametrize(("flags", "why"), [
    (["--enable-torch-compile"], "off for --enable-torch-compile"),
    (["--enable-eplb"], "off for EPLB"),
])  # fmt: skip
def test_tc_piecewise_switch_offs(version: str, flags: list[str], why: str) -> None:
    source = _source(version, flags)
    assert WITHOUT in source
    assert f"no prefill graphs ({why})" in source


@pytest.mark.parametrize("version", ["0.5.18", "0.5.21"])
@pytest.mark.parametrize("flags", [["--enable-torch-compile"], ["--enable-eplb"]])
def test_a_class_on_both_allowlists_keeps_the_breakable_backend_from_0_5_18(version: str, flags: list[str]) -> None:
    # before session 61 kvtop switched Kimi-K2.5 to tc_piecewise to 0.5.21 and dropped its graphs here (14,848 MiB)
    assert WITH_GRAPHS in _source(version, flags)


@pytest.mark.parametrize(("config", "version", "tc_piecewise"), [
    (COHERE2_VISION, "0.5.18", True), (COHERE2_VISION, "0.5.19", False), (COHERE2_VISION, "0.5.21", False),
    (MINIMAX_M3, "0.5.19", True), (MINIMAX_M3, "0.5.21", True), (MINIMAX_M3, "0.5.22", False),
])  # fmt: skip
def test_the_piecewise_only_classes_run_tc_piecewise(config: str, version: str, tc_piecewise: bool) -> None:
    # kept either way (464 MiB of graphs); under tc_piecewise EPLB turns them off, under breakable it does not
    assert "143771 − 15312 MiB reserve" in _source(version, [], config)
    off = "143771 − 14848 MiB reserve" in _source(version, ["--enable-eplb"], config)
    assert off == tc_piecewise


def test_a_pd_prefill_node_drops_tc_piecewise_graphs_but_not_breakable_ones() -> None:
    assert "143771 − 13824 MiB reserve" in _source("0.5.17", ["--disaggregation-mode", "prefill"])
    assert "143771 − 15360 MiB reserve" in _source("0.5.18", ["--disaggregation-mode", "prefill"])
    assert "143771 − 15360 MiB reserve" in _source("0.5.22", ["--disaggregation-mode", "prefill"])


@pytest.mark.parametrize("version", ["0.5.22", "0.5.23"])
def test_0_5_22_has_no_tc_piecewise_backend(version: str) -> None:
    # the breakable rules (0.5.22 cuda_graph_hook.py:138, 0.5.23 :170) read neither torch compile nor EPLB
    assert WITH_GRAPHS in _source(version, ["--enable-torch-compile"])
    assert WITH_GRAPHS in _source(version, ["--enable-eplb"])


def test_0_5_15_drops_every_multimodal_model() -> None:
    # 0.5.15.x: breakable default, no switch to tc_piecewise (server_args.py:3374: every multimodal model)
    assert "no prefill graphs (off for a multimodal model)" in _source("0.5.15.post1", [])
