"""SGLang's `auto` NVFP4 MoE runner on SM 10.x read with the launch's `--quantization` (engines/sglang/nvfp4_runner.py).

Expected picks from SGLang's own code (wheels from PyPI, read):
- 0.5.23 arg_groups/overrides.py:787-826: `quantization = view.quantization` (the flag as typed); only where it is None
  is it filled from config.json's quant_method; flashinfer_trtllm for fp8 / modelopt_fp8 / modelopt_fp4 /
  modelopt_mixed or none. The fill is `get_quantization_config(hf_config)` (utils/common.py:3849-3854): config.json's
  `quantization_config.quant_method` as written. Kimi-K2.5-NVFP4's config.json states `modelopt`: without the flag
  CUTLASS (not in the list), with `--quantization modelopt_fp4` flashinfer_trtllm, with `--quantization modelopt`
  CUTLASS; the same checkpoint stating `modelopt_fp4` runs flashinfer_trtllm. 0.5.13 server_args.py:2022-2055 and
  0.5.9 (Kimi-K2.5 and GLM-5 join the DeepSeek block) alike.
- 0.5.6 server_args.py:1214-1259 and 0.5.7 :1353-1393: the Qwen3-MoE / VL-MoE / Next blocks fill a None flag from
  config.json's quant_method and test `("fp8", "modelopt_fp4")`; Qwen3-235B-A22B-NVFP4 states its block in
  hf_quant_config.json only (config.json has none): without the flag CUTLASS, with `--quantization modelopt_fp4`
  flashinfer_trtllm. 0.5.8 adds `or self.quantization is None`: flashinfer_trtllm without the flag.
- 0.5.4 server_args.py:895-901: `self.quantization == "modelopt_fp4"`, nothing fills it from config.json: without
  the flag DeepSeek-V3 runs CUTLASS. 0.5.5 server_args.py:915-940: None becomes config.json's quant_method, else
  "fp8" (in the list): DeepSeek-V3-0324-NVFP4 (no quant_method in config.json) runs flashinfer_trtllm.
  0.5.5.post1 server_args.py:906-948: the same branch (its _handle_model_specific_adjustments differs from 0.5.5's only
  in logging, the Llama4 backend list and a multi-node check).
- 0.5.11 – 0.5.12: without a quant_method DeepSeek-V3 asks has_fp8_weights_in_checkpoint (the shards: unread); with
  `--quantization modelopt_fp4` it is flashinfer_trtllm.

Bytes (independent arithmetic): Kimi-K2.5 (hidden 7,168, moe_intermediate 2,048, 384 experts, 60 MoE layers, NVFP4
groups of 16, float8 scales) at TP 8: each expert's shard 256, w13's scales 512 × 448 and w2's 7,168 × 16 (multiples
of 128 and 4 already): 344,064 B an expert, × 384 × 60 = 7,927,234,560 B of swizzled placeholders on each rank. At
0.5.9 flashinfer_trtllm never frees them (blockscale_leak.py); at 0.5.23 CUTLASS builds and aliases them away (none
kept: every shape aligned) and flashinfer_trtllm builds none, so the plan's resident bytes are the same either way.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvtop.cli import main
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.sglang.nvfp4_runner import NvFp4MoeRunner, runner_pick
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from kvtop.sources.hub import load_config_file
from tests.data_paths import DATA

HELDOUT = DATA / "configs" / "heldout"
KIMI = HELDOUT / "nvidia--Kimi-K2.5-NVFP4.json"  # config.json quant_method "modelopt"
GLM51 = HELDOUT / "nvidia--GLM-5.1-NVFP4.json"  # GlmMoeDsaForCausalLM, config.json quant_method "modelopt"
DEEPSEEK_V3 = DATA / "configs" / "nvidia--DeepSeek-V3-0324-NVFP4.json"  # no quant_method in config.json
QWEN3_235B = DATA / "configs" / "nvidia--Qwen3-235B-A22B-NVFP4.json"  # Qwen3MoeForCausalLM, hf_quant_config.json only
NOTE = "kvtop assumes CUTLASS and counts the swizzled block-scale copies"
KIMI_PLACEHOLDERS_TP8 = 7_927_234_560
_T, _C = NvFp4MoeRunner.TRTLLM, NvFp4MoeRunner.CUTLASS


@pytest.mark.parametrize(("config", "release", "quantization", "runner", "read"), [
    (KIMI, "0.5.23", None, _C, True), (KIMI, "0.5.23", "modelopt_fp4", _T, True), (KIMI, "0.5.23", "modelopt", _C, True),
    (KIMI, "0.5.23", " ModelOpt_FP4 ", _T, True),  # as argparse would compare the typed choice
    (KIMI, "0.5.13", "modelopt_fp4", _T, True), (KIMI, "0.5.9", "modelopt_fp4", _T, True),
    (KIMI, "0.5.5", "modelopt_fp4", _C, True),  # no block for the class before 0.5.9
    (GLM51, "0.5.16", None, _C, True), (GLM51, "0.5.16", "modelopt_fp4", _T, True),
    (GLM51, "0.5.20", "modelopt", _C, True),
    (DEEPSEEK_V3, "0.5.4", None, _C, True), (DEEPSEEK_V3, "0.5.4", "modelopt_fp4", _T, True),
    (DEEPSEEK_V3, "0.5.5", None, _T, True), (DEEPSEEK_V3, "0.5.5", "modelopt", _C, True),
    (DEEPSEEK_V3, "0.5.5.post1", None, _T, True), (DEEPSEEK_V3, "0.5.5.post1", "modelopt", _C, True),
    (QWEN3_235B, "0.5.6", None, _C, True), (QWEN3_235B, "0.5.6", "modelopt_fp4", _T, True),
    (QWEN3_235B, "0.5.7", None, _C, True), (QWEN3_235B, "0.5.8", None, _T, True),
    (DEEPSEEK_V3, "0.5.11", None, _C, False), (DEEPSEEK_V3, "0.5.11", "modelopt_fp4", _T, True),
    (DEEPSEEK_V3, "0.5.12", "modelopt_fp4", _T, True),
    (KIMI, "0.5.23", "fp8", _C, False),  # a choice kvtop does not read on a ModelOpt NVFP4 checkpoint: named
])  # fmt: skip
def test_runner_pick_reads_the_launch_quantization(
    config: Path, release: str, quantization: str | None, runner: NvFp4MoeRunner, read: bool
) -> None:
    pick = runner_pick(load_config_file(config), "B200", ResolvedVersion(text=release), quantization)
    assert (pick.runner, pick.read) == (runner, read), pick.why


def test_a_config_json_modelopt_fp4_literal_is_the_string_without_the_flag(tmp_path: Path) -> None:
    """Kimi-K2.5-NVFP4's config.json with `quant_method: modelopt_fp4` (a spelling SGLang also takes): without the flag
    its DeepSeek-family block sees that literal, in the list (0.5.23 overrides.py:808-818): flashinfer_trtllm."""
    config = json.loads(KIMI.read_text())
    config["quantization_config"]["quant_method"] = "modelopt_fp4"
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    model = load_config_file(path)
    assert model.quant.config_quant_method == "modelopt_fp4"
    assert load_config_file(KIMI).quant.config_quant_method == "modelopt"
    pick = runner_pick(model, "B200", ResolvedVersion(text="0.5.23"))
    assert (pick.runner, pick.read) == (_T, True), pick.why


def test_a_block_read_from_the_quant_file_is_a_fact_of_the_reading_not_of_its_file_name() -> None:
    """Qwen3-235B-A22B-NVFP4's config.json states no quantization block; its ModelOpt block is in the separate
    hf_quant_config.json, so SGLang's Qwen3 block sees no string (0.5.7 server_args.py:1353-1393: none is not in
    `("fp8", "modelopt_fp4")`: CUTLASS; 0.5.8's `or self.quantization is None`: flashinfer_trtllm). kvtop keeps that
    as QuantSpec.from_quant_file where it reads the file, under whatever name the file came (a hub cache path, a
    `<stem>.hf_quant_config.json`, or another name an operator gives), not from the name."""
    config = json.loads(QWEN3_235B.read_text())
    quant_file = json.loads(QWEN3_235B.with_name(QWEN3_235B.stem + ".hf_quant_config.json").read_text())
    assert "quantization_config" not in config
    for name in ("hf_quant_config.json", "modelopt-settings.json"):
        model = model_from_config(config, source=str(QWEN3_235B), hf_quant_config=quant_file, hf_source=name)
        assert (model.quant.method, model.quant.from_quant_file, model.quant.source) == ("nvfp4", True, name)
        for release, runner in (("0.5.7", _C), ("0.5.8", _T)):
            pick = runner_pick(model, "B200", ResolvedVersion(text=release))
            assert (pick.runner, pick.read) == (runner, True), (name, release, pick.why)
    assert not load_config_file(KIMI).quant.from_quant_file  # config.json's own block (quant_method "modelopt")
    assert load_config_file(QWEN3_235B).quant.from_quant_file


def test_the_flag_leaves_hopper_and_sm12_picks_alone() -> None:
    """Marlin on SM 9.0 from 0.5.13, CUTLASS on SM 12.0, whatever the flag (no class block reads it there)."""
    kimi, at = load_config_file(KIMI), ResolvedVersion(text="0.5.23")
    assert runner_pick(kimi, "H200", at, "modelopt_fp4").runner is NvFp4MoeRunner.MARLIN
    assert runner_pick(kimi, "RTX PRO 6000", at, "modelopt_fp4").runner is _C


def _plan(capsys: pytest.CaptureFixture[str], release: str, *flags: str) -> tuple[str, dict[str, int]]:
    args = ["plan", "--model", str(KIMI), "--engine", "sglang", "--engine-version", release, "--gpu", "B200",
            "--tp", "8", "--no-calibration-store"]  # fmt: skip
    code = main([*args, *flags])
    text = capsys.readouterr()
    assert code == 0, text.err[-400:]
    code = main([*args, *flags, "--json"])
    out = capsys.readouterr()
    assert code == 0, out.err[-400:]
    rows = {row["component"]: row["bytes"] for row in json.loads(out.out)["ranks"][0]["weights"]}
    return " ".join((text.out + text.err).split()), rows


def test_kimi_k25_at_0_5_23_on_b200_with_and_without_modelopt_fp4(capsys: pytest.CaptureFixture[str]) -> None:
    """Without the flag CUTLASS, read (config.json's `modelopt` is not in the block's list); with
    `--quantization modelopt_fp4` flashinfer_trtllm, read: no note either way, the same resident rows."""
    bare, bare_rows = _plan(capsys, "0.5.23")
    flagged, flagged_rows = _plan(capsys, "0.5.23", "--quantization", "modelopt_fp4")
    assert NOTE not in bare and NOTE not in flagged
    assert bare_rows == flagged_rows
    assert "aliased_blockscale_swizzled" not in bare_rows  # released placeholders: in no plan


def test_kimi_k25_at_0_5_23_releases_the_cutlass_placeholders_only() -> None:
    """The meta-built count (weights_released): CUTLASS's placeholders, aliased away; flashinfer_trtllm builds none."""
    rules, kimi, at = engine_rules("sglang"), load_config_file(KIMI), ResolvedVersion(text="0.5.23")
    layers = range(kimi.num_layers)

    def released(quantization: str | None) -> dict[str, int]:
        rows = rules.weights_released(kimi, ParallelLayout(tp=8), layers, "B200", at, quantization=quantization)
        return {row.component: row.bytes for row in rows}

    assert released("modelopt") == {"aliased_blockscale_swizzled": KIMI_PLACEHOLDERS_TP8}
    assert released("modelopt_fp4") == {}


def test_kimi_k25_at_0_5_9_with_modelopt_fp4_holds_the_trtllm_placeholders(capsys: pytest.CaptureFixture[str]) -> None:
    """0.5.9's flashinfer_trtllm leaves every swizzled placeholder allocated: 7,927,234,560 B a rank at TP 8; without
    the flag config.json's `modelopt` runs CUTLASS (read), which leaks none."""
    flagged, rows = _plan(capsys, "0.5.9", "--quantization", "modelopt_fp4")
    assert rows["leaked_blockscale_swizzled"] == KIMI_PLACEHOLDERS_TP8
    assert NOTE not in flagged
    bare, bare_rows = _plan(capsys, "0.5.9")
    assert "leaked_blockscale_swizzled" not in bare_rows
    assert NOTE not in bare
