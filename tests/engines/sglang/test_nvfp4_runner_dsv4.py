"""DeepSeek-V4's hybrid FP8+NVFP4 checkpoints on SGLang's `flashinfer_trtllm_routed` MoE runner, by release
(engines/sglang/nvfp4_runner.py DSV4_ROUTED_ERAS, checks.py _check_dsv4_nvfp4_experts).

Expected picks from SGLang's own code (wheels from PyPI, read):
- 0.5.13: configs/model_config.py has no `nvfp4_moe_meta` and nothing sets the routed runner: `auto` picks Marlin on
  SM 9.0 (create_moe_runner) and the SM 10.x class blocks hold no DeepSeek-V4 entry (CUTLASS).
- 0.5.14: model_config.py:351-370 sets `nvfp4_moe_meta` for a MIXED_PRECISION block with moe_quant_algo NVFP4 and a
  group_size (nvidia's DeepSeek-V4-Flash/-Pro-NVFP4 config.json); arg_groups/deepseek_v4_hook.py:63-70 sets
  `moe_runner_backend = "flashinfer_trtllm_routed"` at `auto` for it, on any GPU; model_loader/loader.py:249-270
  builds its experts with HybridFp8NvFp4Config's ModelOptFp4Config, whose ModelOptNvFp4FusedMoEMethod raises
  'Current platform does not support NVFP4 quantization with the selected MoE backend' off Blackwell for any runner
  but auto / marlin (modelopt_quant.py:1774-1778). 0.5.15 alike (overrides.py:713-722, loader.py:252-273,
  modelopt_quant.py:1903-1908); 0.5.23 model_overrides/deepseek_v4.py:66-74.
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from kvtop.domain.engines.base import EngineInputs
from kvtop.domain.engines.sglang.nvfp4_pad import check_gated_w13_pad, w13_pad_rows
from kvtop.domain.engines.sglang.nvfp4_runner import NvFp4MoeRunner, runner_pick
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.errors import InputError
from kvtop.domain.kv import KvStorage, kv_book
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA

FLASH = DATA / "configs" / "heldout" / "nvidia--DeepSeek-V4-Flash-NVFP4.json"
REFUSED = "refuses DeepSeek-V4's NVFP4 experts on H200"


def _flash() -> ModelSpec:
    return model_from_config(json.loads(FLASH.read_text()), source=str(FLASH))


@pytest.mark.parametrize(("release", "gpu", "runner"), [
    ("0.5.13", "B200", NvFp4MoeRunner.CUTLASS), ("0.5.13", "H200", NvFp4MoeRunner.MARLIN),
    ("0.5.14", "B200", NvFp4MoeRunner.TRTLLM), ("0.5.14", "H200", NvFp4MoeRunner.TRTLLM),
    ("0.5.15", "B200", NvFp4MoeRunner.TRTLLM), ("0.5.19", "RTX PRO 6000", NvFp4MoeRunner.TRTLLM),
    ("0.5.23", "B200", NvFp4MoeRunner.TRTLLM),
])  # fmt: skip
def test_the_hybrid_checkpoint_runs_the_routed_trtllm_runner_from_0_5_14(
    release: str, gpu: str, runner: NvFp4MoeRunner
) -> None:
    flash = _flash()
    assert flash.compressed is not None and flash.quant.routed_experts is not None
    assert flash.quant.routed_experts.method == "nvfp4"  # the config's moe_quant_algo NVFP4: nvfp4_moe_meta
    pick = runner_pick(flash, gpu, ResolvedVersion(text=release))
    assert (pick.runner, pick.read) == (runner, True), pick.why


def _plan(capsys: pytest.CaptureFixture[str], release: str, gpu: str) -> tuple[int, str]:
    code = main(["plan", "--model", str(FLASH), "--engine", "sglang", "--engine-version", release, "--gpu", gpu,
                 "--tp", "4", "--no-calibration-store", "--json"])  # fmt: skip
    out = capsys.readouterr()
    return code, out.out + out.err


def test_below_blackwell_the_engine_refuses_the_routed_runner_from_0_5_14(capsys: pytest.CaptureFixture[str]) -> None:
    for release in ("0.5.14", "0.5.15"):
        code, text = _plan(capsys, release, "H200")
        assert code != 0 and REFUSED in text, (release, text[-400:])
    code, text = _plan(capsys, "0.5.13", "H200")  # no nvfp4_moe_meta yet: not this refusal
    assert REFUSED not in text


def test_pro_at_tp_32_is_not_refused_for_a_cutlass_pad_it_never_runs() -> None:
    """DeepSeek-V4-Pro-NVFP4 at TP 32 on B200: w13 holds 2 × (3,072 ÷ 32) = 192 rows, 64 short of 256, which the
    CUTLASS MoE's padding asserts on (modelopt_quant.py process_weights_after_loading); at 0.5.15 the routed TRT-LLM
    runner never reaches it, so the pad check passes; at 0.5.13 (no nvfp4_moe_meta: CUTLASS) it refuses."""
    path = DATA / "configs" / "heldout" / "nvidia--DeepSeek-V4-Pro-NVFP4.json"
    pro = model_from_config(json.loads(path.read_text()), source=str(path))
    layout = ParallelLayout(tp=32)
    assert w13_pad_rows(pro, layout) == 64
    book = kv_book(pro, layout, range(pro.num_layers), "fp8_e4m3", KvStorage(compressed_latent_bytes=584))

    def inputs(release: str) -> EngineInputs:
        return EngineInputs(model=pro, layout=layout, settings=LaunchSettings(engine="sglang"), gpu_total_bytes=1,
                            gpu_name="B200", weights_bytes=0, kv=book, context_length=1,
                            version=ResolvedVersion(text=release))  # fmt: skip

    check_gated_w13_pad(inputs("0.5.15"))
    with pytest.raises(InputError, match="fails to load gated NVFP4 experts"):
        check_gated_w13_pad(inputs("0.5.13"))
