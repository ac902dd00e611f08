"""vLLM's MXFP4 experts from v0.21.0 on SM 11.x / 12.x, and what kvtop says where it does not build their layout.

The rules read in the wheels (pip download vllm==X --no-deps): `_get_priority_backends_for_gpt_oss`
(fused_moe/oracle/mxfp4.py) keeps Marlin first on SM 12.0 at v0.21.0 … v0.33.0; on SM 11.x Triton's gate reaches 11.0
from v0.32.0 (gpt_oss_triton_kernels_moe.py:53, `< (13, 0)`) while only family 120 is moved after Marlin (v0.32.0
oracle/mxfp4.py:413), until v0.34.0 moves family 110 too (:446-457). Marlin pads the width per partition to 128 and
the hidden size to 256 (`mxfp4_round_up_hidden_size_and_intermediate_size`, :650-654 at v0.28.0). vllm#51590: 8 × RTX
PRO 4500 (SM 12.0), gpt-oss-120b, TP 8, v0.28.0: 'estimated KV cache budget 19.0 GiB'.
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.kernels import check_weights
from kvtop.domain.engines.vllm.mxfp4_backend import MARLIN, mxfp4_backend
from kvtop.domain.engines.vllm.mxfp4_unmodelled import mxfp4_not_modelled
from kvtop.domain.engines.vllm.weights_built import mxfp4_experts
from kvtop.domain.errors import InputError
from kvtop.domain.launch import parse_flags
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.ledger import predict
from kvtop.domain.model_config import model_from_config
from kvtop.domain.wording import GIB
from kvtop.ui.planning import PlanOutcome
from kvtop.ui.widgets.plan_result import outcome_table
from tests.data_paths import DATA

GPT_OSS = DATA.parent.parent / "examples" / "models" / "gpt-oss-120b.json"
MODEL = model_from_config(json.loads(GPT_OSS.read_text()), source="gpt-oss-120b")
# vllm#51590's launch: TP 8 on the RTX PRO 4500 at v0.28.0, 0.95, max_num_seqs 256
PR51590 = ("--model", str(GPT_OSS), "--engine", "vllm", "--engine-version", "0.28.0", "--gpu", "RTXPRO4500",
           "--tensor-parallel-size", "8", "--gpu-memory-utilization", "0.95", "--max-num-seqs", "256")  # fmt: skip


def plan(capsys: pytest.CaptureFixture[str], *args: str, as_json: bool = False) -> str:
    assert main(["plan", "--no-calibration-store", *(("--json",) if as_json else ()), *args]) == 0
    return capsys.readouterr().out


def test_sm11_takes_triton_first_at_0_32_and_0_33_only() -> None:
    """Jetson Thor (SM 11.0): Marlin at v0.31.0 (Triton's gate stops below 11.0) and v0.34.0 (family 110 moved
    after Marlin); Triton's Blackwell layouts at v0.32.0 and v0.33.0: no backend kvtop builds, said so."""
    layout = ParallelLayout(tp=1)
    for release, marlin in (("0.31.0", True), ("0.32.0", False), ("0.33.0", False), ("0.34.0", True)):
        version = ResolvedVersion(text=release)
        chosen = mxfp4_backend(None, "JETSON-THOR", version)
        built = mxfp4_experts(MODEL, layout, "JETSON-THOR", version)
        said = mxfp4_not_modelled(MODEL, layout, None, "JETSON-THOR", version)
        if marlin:
            assert chosen is not None and chosen.name == MARLIN and built is not None and said is None, release
        else:
            assert chosen is None and built is None, release
            assert said is not None and "Triton runs ahead of Marlin" in said, release


def test_vllm51590_pads_marlins_rows_at_tp8(capsys: pytest.CaptureFixture[str]) -> None:
    """TP 8: 2,880 ÷ 8 = 360 → 384, hidden 2,880 → 3,072; 36 layers × 128 experts × 3 × (384 × 3,072 − 360 × 2,880)
    × 17/32 B = 1,049,075,712 B (0.98 GiB) over the book; the plan's KV within 5 % of the logged 19.0 GiB."""
    version = ResolvedVersion(text="0.28.0")
    built = mxfp4_experts(MODEL, ParallelLayout(tp=8), "RTXPRO4500", version)
    assert built is not None and (built.backend, built.width, built.padded, built.padded_hidden) == (
        "marlin", 360, 384, 3072)  # fmt: skip
    out = json.loads(plan(capsys, *PR51590, as_json=True))
    rows = [row for rank in out["ranks"] for row in rank["weights"] if row["component"] == "expert_padding"]
    assert rows and {row["bytes"] for row in rows} == {36 * 128 * 3 * (384 * 3072 - 360 * 2880) * 17 // 32}
    assert out["not_modelled"] == []
    assert abs(out["kv_budget_bytes"] / GIB / 19.0 - 1) < 0.05


def test_plan_and_the_planner_say_where_the_experts_layout_is_not_modelled(capsys: pytest.CaptureFixture[str]) -> None:
    """B200 (family 100: FlashInfer TRTLLM or Triton) and Jetson Thor at v0.33.0: the weights count the book, and
    `plan`'s text, its JSON and the planner's table say so; the RTX PRO 4500 at v0.28.0 says nothing."""
    for gpu, release in (("B200", "0.28.0"), ("JETSON-THOR", "0.33.0")):
        args = ("--model", str(GPT_OSS), "--engine", "vllm", "--engine-version", release, "--gpu", gpu)
        expected = f"vLLM {release}'s MXFP4 experts on {gpu}"
        text = plan(capsys, *args)
        assert any(line.startswith(f"note: not modelled: {expected}") for line in text.splitlines()), gpu
        listed = json.loads(plan(capsys, *args, as_json=True))["not_modelled"]
        # at v0.29.0 on gpt-oss runs V2, whose graph charge is named beside (test_gpt_oss_v2_graphs.py)
        layouts = [line for line in listed if not line.startswith("gpt-oss's CUDA graphs on vLLM")]
        assert len(layouts) == 1 and layouts[0].startswith(expected), gpu
        assert len(listed) == (2 if release == "0.33.0" else 1), gpu
        settings = parse_flags("vllm", ["--engine-version", release], strict=True)
        ledger = predict(MODEL, settings, gpu_total_bytes=180 * GIB, gpu_name=gpu)
        table = outcome_table(PlanOutcome(before=ledger, after=ledger, settings=settings), None).plain
        assert f"not modelled: {expected}" in table, gpu
    assert "not modelled" not in "".join(line for line in plan(capsys, *PR51590).splitlines() if "MXFP4" in line)


def test_the_marlin_variable_is_read_until_0_23_only() -> None:
    """VLLM_MXFP4_USE_MARLIN=1 on an H100: Marlin at v0.23.0 (oracle/mxfp4.py:526 reads it, deprecated in envs.py);
    from v0.24.0 no file of the wheel names it, so the release's Triton (triton_kernels in the wheel) runs."""
    found = {}
    for release in ("0.23.0", "0.24.0", "0.28.0"):
        settings = parse_flags("vllm", ["--engine-version", release], strict=True)
        settings = settings.model_copy(update={"flags": {**settings.flags, "VLLM_MXFP4_USE_MARLIN": "1"}})
        chosen = mxfp4_backend(settings, "H100", ResolvedVersion(text=release))
        assert chosen is not None
        found[release] = (chosen.name, chosen.source)
    assert found == {"0.23.0": ("marlin", "stated"), "0.24.0": ("triton", "release"), "0.28.0": ("triton", "release")}


def test_below_sm_8_0_vllm_refuses_mxfp4_and_names_no_family_100_backend() -> None:
    """Mxfp4Config.get_min_capability is 80 in every wheel read (v0.10.2 quantization/mxfp4.py:116-117, v0.22.0
    :57-58, v0.34.0 :72-73), checked as the config is built (v0.22.0 config/vllm.py:590-599): a V100 (SM 7.0) or a T4
    (SM 7.5, where Marlin's kernels would run) is refused before any MoE backend is picked. The not-modelled note
    names family 100's FlashInfer TRTLLM / Triton only on SM 10.x."""
    layout, version = ParallelLayout(tp=1), ResolvedVersion(text="0.22.0")
    settings = parse_flags("vllm", ["--engine-version", "0.22.0"])
    for gpu in ("V100", "T4"):
        with pytest.raises(InputError, match="Minimum capability: 80"):
            check_weights(MODEL, settings, layout, gpu, version)
    check_weights(MODEL, settings, layout, "A100-80GB", version)  # SM 8.0: served
    b200 = mxfp4_not_modelled(MODEL, layout, None, "B200", version)
    assert b200 is not None and "family 100" in b200
    v100 = mxfp4_not_modelled(MODEL, layout, None, "V100", version)
    assert v100 is None or "family 100" not in v100
