"""LMDeploy 0.17.0 and 0.18.0 (PyPI wheels, read 2026-12-06), and the DSA rules their reading corrected.

Expected figures are the wheels' own arithmetic, by hand: DeepSeek-V3.2 (61 layers, kv_lora_rank 512 + rope 64, indexer
head 128, vocab 129,280) at TP 8 on an H200 (`get_max_batch_size`: h200 → 1024) with 60 GiB free after the weights.

- 0.17.0 executor/base.py:225-245 `_get_runtime_size`: runtime = (prefill + 2 × max_batches) × vocab × 2 + the DSA
  score workspace (`envs.dsa_indexer_max_logits_mb`, default 512 MiB, envs.py:231) for a model with `mla_index_topk`.
- 0.17.0 configurations/deepseek_v32.py:71 `mla_kv_cache_dtype = 'bfloat16'` (PR #4896); v0.16.0's line 71 said
  'fp8_ds_mla' (656 B a token a layer: cache_engine.py MLA_FP8_HEAD_DIM = 512 + 4 × 4 + 64 × 2), and v0.16.0's
  glm_moe_dsa.py:36 'bfloat16' for GLM-5 (PR #4737); v0.12.2 – v0.15.x's one builder made both FP8.
- Block bytes (cache_engine.py, each descriptor rounded up to 256 B): 61 layers × (64 × latent bytes + the indexer's
  64 × (128 fp8 + 4 B fp32 scale) = 8,448 B).
"""

from __future__ import annotations

import pytest

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.lmdeploy.architectures import check
from kvtop.domain.engines.lmdeploy.eras import CALENDAR, resolve_version
from kvtop.domain.engines.lmdeploy.log_records import LmdeployRankLog
from kvtop.domain.engines.lmdeploy.spec_methods import METHOD_ERAS
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource, from_flag
from kvtop.domain.errors import InputError
from kvtop.domain.launch import LaunchSettings, parse_flags
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.model import ModelSpec
from kvtop.domain.spec_methods import check_method
from kvtop.sources.engine_logs import parse_engine_log
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS

MIB, GIB = 1 << 20, 1 << 30
FREE = 60 * GIB
H200_BYTES = 143_771 * MIB
V32 = load_model(str(CONFIGS / "deepseek-ai--DeepSeek-V3.2.json"))
INDEX = 64 * (128 + 4)  # 8,448 B: a multiple of 256
BF16_BLOCK = 61 * (64 * 576 * 2 + INDEX)  # 5,012,736 B
DS_MLA_BLOCK = 61 * (64 * 656 + INDEX)  # 3,076,352 B
LOGITS = (8192 + 2 * 1024) * 129_280 * 2  # (max_prefill_token_num + 2 × max_batches) × vocab × 2 B


def _plan(model: ModelSpec, version: str, *flags: str) -> Ledger:
    settings = parse_flags("lmdeploy", ["--tp", "8", "--engine-version", version, *flags])
    return predict(model, settings, gpu_total_bytes=H200_BYTES, gpu_name="H200",
                   measured=MeasuredInputs(free_after_load_bytes=FREE))  # fmt: skip


@pytest.mark.parametrize(
    ("version", "block", "runtime"),
    [
        ("0.16.0", DS_MLA_BLOCK, LOGITS),  # fp8_ds_mla by default, no workspace
        ("0.17.0", BF16_BLOCK, LOGITS + 512 * MIB),  # bf16 by default, + the 512 MiB score workspace
        ("0.18.0", BF16_BLOCK, LOGITS + 512 * MIB),  # executor/base.py:213-233 unchanged
    ],
)
def test_deepseek_v32_blocks_by_release(version: str, block: int, runtime: int) -> None:
    engine = _plan(V32, version).engine
    assert engine.steps[-3].value == block
    assert engine.reserve_bytes == runtime
    assert engine.num_blocks == int((FREE - runtime) * 0.8) // block


@pytest.mark.parametrize(("version", "block"), [("0.15.0", DS_MLA_BLOCK), ("0.16.0", BF16_BLOCK), ("0.17.0", BF16_BLOCK)])
def test_glm5_latent_by_release(version: str, block: int) -> None:
    """model_type glm_moe_dsa (GLM-5, V3.2's geometry here): FP8 through v0.15.x (one builder for both types),
    bf16 from v0.16.0 (glm_moe_dsa.py:36)."""
    glm5 = V32.model_copy(update={"model_type": "glm_moe_dsa"})
    assert _plan(glm5, version).engine.steps[-3].value == block


def test_fp8_on_a_dsa_model_is_the_656_byte_latent() -> None:
    """--quant-policy 16: fp8_ds_mla in every release that has it (0.17.0 cache_engine.py:160-169); the block had
    counted 576 B while the book said 656."""
    assert _plan(V32, "0.17.0", "--quant-policy", "16").engine.steps[-3].value == DS_MLA_BLOCK


def test_fp8_on_plain_mla_stays_576_bytes() -> None:
    v3 = load_model(str(CONFIGS / "deepseek-ai--DeepSeek-V3.json"))  # no indexer: K (block, 1, 576) fp8, V width 0
    assert _plan(v3, "0.17.0", "--quant-policy", "16").engine.steps[-3].value == 61 * 64 * 576


def test_a_dsa_model_refuses_int_kv() -> None:
    with pytest.raises(InputError, match="sparse-MLA models take --quant-policy 0 or 16 only"):
        _plan(V32, "0.17.0", "--quant-policy", "8")


def test_the_workspace_line_bounds_the_release() -> None:
    """Dated while 0.16.0 was the newest, the 0.17.0 line rules 0.16.0 out: the newest release it allows."""
    log = parse_engine_log(
        "2026-08-25 10:00:00,000 - lmdeploy - INFO - base.py:407 - Reserve 512 MiB for DSA prefill score workspace.\n"
    )
    assert [size.value_bytes for rank in log.ranks(LmdeployRankLog) for size in rank.dsa_workspaces] == [512 * MIB]
    assert resolve_version(log).label == "~0.18.0"


def test_calendar_holds_0_18_0_as_the_newest() -> None:
    assert [(entry.release, entry.day.isoformat()) for entry in CALENDAR[-2:]] == [
        ("0.17.0", "2026-09-02"), ("0.18.0", "2026-09-28")]  # fmt: skip
    assert "newer than 0.18.0" in (from_flag("0.19.0", CALENDAR).detail or "")


@pytest.mark.parametrize(
    ("architecture", "release", "state"),
    [("KimiK25ForConditionalGeneration", "0.16.0", "refused"),
     ("KimiK25ForConditionalGeneration", "0.17.0", "registered"),
     ("DFlashDraftModel", "0.17.0", "refused"), ("DFlashDraftModel", "0.18.0", "registered")],
)  # fmt: skip
def test_module_map_rows(architecture: str, release: str, state: str) -> None:
    model = V32.model_copy(update={"architecture": architecture})
    version = ResolvedVersion(text=release, source=VersionSource.FLAG)
    result = check(model, LaunchSettings(engine="lmdeploy", model="m", backend="pytorch"), version)
    assert result.state == state


def test_dflash_from_0_18_0() -> None:
    check_method("dflash", METHOD_ERAS, "0.18.0", flag="--speculative-algorithm")
    with pytest.raises(InputError):
        check_method("dflash", METHOD_ERAS, "0.17.0", flag="--speculative-algorithm")


@pytest.mark.parametrize(("release", "declared"), [("0.10.0", False), ("0.16.0", False), ("0.17.0", False),
                                                   ("0.18.0", True), (None, True)])  # fmt: skip
def test_num_gpu_blocks_is_written_only_where_the_release_declares_it(release: str | None, declared: bool) -> None:
    """`--num-gpu-blocks` is first an option of `lmdeploy serve api_server` in 0.18.0 (the wheel's cli/utils.py:536-539,
    type=int; serve.py:131 adds it, :257 passes it to PytorchEngineConfig); the 0.17.0 wheel's cli/ has no such option
    (nor v0.10.0 … v0.16.0 at their tags): the copied line and `explain`'s caps name it only from 0.18.0 (an unstated
    release is the latest)."""
    from kvtop.domain.explanation import token_caps_of

    settings = LaunchSettings(engine="lmdeploy", backend="pytorch", engine_version=release, num_gpu_blocks_override=512)
    assert ("--num-gpu-blocks" in settings.to_flags()) is declared
    assert (token_caps_of(settings) == "a --num-gpu-blocks setting or the context bound") is declared
    if not declared:
        assert token_caps_of(settings) == "the context bound"


@pytest.mark.parametrize(("release", "said"), [("0.16.0", True), ("0.17.0", True), ("0.18.0", False)])
def test_num_gpu_blocks_before_the_cli_has_it_is_planned_as_the_python_api_and_said(release: str, said: bool) -> None:
    """Before 0.18.0 `serve api_server` has no `--num-gpu-blocks` (the 0.17.0 wheel's cli/): the count is planned
    as `PytorchEngineConfig.num_gpu_blocks` (100 blocks × 64 tokens = 6,400), and a note says the copied line
    leaves it out (it plans from free memory when pasted); from 0.18.0 the line carries it and no note is needed."""
    model = load_model(str(CONFIGS / "Qwen--Qwen3-32B.json"))
    settings = parse_flags("lmdeploy", ["--engine-version", release, "--backend", "pytorch", "--num-gpu-blocks", "100"])
    ledger = predict(model, settings, gpu_total_bytes=H200_BYTES, gpu_name="H200")
    assert ledger.engine.token_capacity == 100 * 64
    notes = [note for note in ledger.engine.notes if note.startswith("--num-gpu-blocks: LMDeploy")]
    assert bool(notes) is said
    assert ("--num-gpu-blocks" in settings.to_flags()) is not said
    if said:
        assert f"LMDeploy {release}'s CLI has no such option (first in 0.18.0" in notes[0]
        assert "PytorchEngineConfig.num_gpu_blocks" in notes[0]
