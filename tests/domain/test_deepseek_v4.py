"""DeepSeek-V4 (compressed attention) against SGLang 0.5.23's own classes and pool, built on the meta device.

Every expected figure is the engine's: the parameter bytes per rank its `DeepseekV4ForCausalLM` builds at TP 1 and
TP 2 on sm90 (benchmarks/engine_diff `registry_sweep.py --engine sglang --only …`: the registry rows of
tests/data/engine_diff/registry/sglang-0.5.23.json, `model` + `lm_head`; the shapes quoted below from
`registry_sweep.py --params`), and the token counts its `DSV4PoolConfigurator` gave the same cases (the sweep's
answers: `max_total_num_tokens`, `swa_max_total_num_tokens`, with 80 GiB free before the load, 60 GiB after and
--mem-fraction-static 0.75: 40 GiB available).
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.engines.base import EngineInputs
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.sglang.checks import check_launch
from kvtop.domain.engines.sglang.dsv4 import DSV4_PAGE, dsv4_sizing
from kvtop.domain.engines.sglang.nvfp4_pad import check_gated_w13_pad, w13_pad_rows
from kvtop.domain.engines.sglang.nvfp4_runner import NvFp4MoeRunner, runner_pick
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.kv import KvStorage, kv_book
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from kvtop.domain.wording import GIB
from tests.conftest import CONFIGS

SGLANG = ResolvedVersion(text="0.5.23", source=VersionSource.FLAG)
HELDOUT = CONFIGS / "heldout"


def model(name: str) -> ModelSpec:
    path = HELDOUT / f"{name}.json"
    quant = HELDOUT / f"{name}.hf_quant_config.json"
    return model_from_config(json.loads(path.read_text()), source=name,
                             hf_quant_config=json.loads(quant.read_text()) if quant.exists() else None)  # fmt: skip


def sglang_rank_bytes(m: ModelSpec, tp: int) -> int:
    """One rank's weights as kvtop books them for SGLang 0.5.23: the book with its stage parts, and its rows."""
    rules, layout = engine_rules("sglang"), ParallelLayout(tp=tp)
    layers = range(m.num_layers)
    parts = rules.stage_parts(m, 0, 1, SGLANG)
    book = weights_book(m, layout, layers, first_stage=True, last_stage=True, parts=parts)
    return book.total_bytes + sum(r.bytes for r in rules.weights_built(m, layout, layers, "H100", SGLANG))


@pytest.mark.parametrize(
    ("name", "tp", "engine"),
    [
        ("deepseek-ai--DeepSeek-V4-Flash", 1, 156_390_936_756 + 1_059_061_760),
        ("deepseek-ai--DeepSeek-V4-Flash", 2, 78_849_305_780 + 529_530_880),
        ("deepseek-ai--DeepSeek-V4-Pro", 1, 852_982_407_284 + 1_853_358_080),
        ("deepseek-ai--DeepSeek-V4-Pro", 2, 428_265_854_708 + 926_679_040),
    ],
)
def test_weights_per_rank_are_sglangs_meta_build(name: str, tp: int, engine: int) -> None:
    assert sglang_rank_bytes(model(name), tp) == engine


def test_one_flash_layer_is_the_engines_shapes() -> None:
    """DeepSeek-V4-Flash at TP 2, layer 2 (ratio 4) less layer 3 (ratio 128), from the engine's shapes: the c4
    compressor's ape [4, 1024] fp32 and wkv_gate [2048, 4096] bf16, the indexer's wq_b [8192, 1024] fp8 with
    [64, 8] fp32 scales, weights_proj [64, 4096] bf16, its compressor's ape [4, 256], wkv_gate [512, 4096] and
    norm [128] fp32; less the c128 compressor's ape [128, 512] fp32 and wkv_gate [1024, 4096] bf16."""
    m, layout = model("deepseek-ai--DeepSeek-V4-Flash"), ParallelLayout(tp=2)
    parts = engine_rules("sglang").stage_parts(m, 0, 1, SGLANG)

    def layer(i: int) -> int:
        return weights_book(
            m, layout, range(i, i + 1), first_stage=False, last_stage=False, parts=parts
        ).total_bytes

    c4 = (
        4 * 1024 * 4
        + 2048 * 4096 * 2
        + 8192 * 1024
        + 64 * 8 * 4
        + 64 * 4096 * 2
        + 4 * 256 * 4
        + 512 * 4096 * 2
    )
    c128 = 128 * 512 * 4 + 1024 * 4096 * 2
    assert (
        layer(4) - layer(3) == c4 + 128 * 4 - c128 == 21_256_704
    )  # + the indexer compressor norm [128] fp32


def test_the_hyper_connection_mixers_are_the_engines_shapes() -> None:
    """DeepSeek-V4-Flash at TP 2, layer 3 (ratio 128) with the final norm: the norms row by hand from SGLang 0.5.23
    models/deepseek_v4.py's shapes (hc_mult 4, hidden 4,096). bf16: q_norm [1,024], kv_norm [512], the layer's two
    RMSNorms [4,096] each and the final norm [4,096]; fp32: the c128 compressor's norm [512], `hc_attn` and `hc_ffn`
    from make_hc_mixing_params (fn [(2 + 4) × 4 = 24, 4 × 4,096], base [24], scale [3]) and the head's from
    make_hc_head_params (fn [4, 4 × 4,096], base [4], scale [1]); all whole on every rank."""
    m = model("deepseek-ai--DeepSeek-V4-Flash")
    assert (m.body.hc_streams, m.body.hc_comb) == (4, True)  # the config's hc_mult, with comb rows
    parts = engine_rules("sglang").stage_parts(m, 0, 1, SGLANG)
    book = weights_book(m, ParallelLayout(tp=2), range(3, 4), first_stage=False, last_stage=True, parts=parts)
    norms = next(r for r in book.rows if r.component == "norms")
    bf16 = 1024 + 512 + 2 * 4096 + 4096
    fp32 = 512 + 2 * (24 * 4 * 4096 + 24 + 3) + 4 * 4 * 4096 + 4 + 1
    assert (norms.params, norms.bytes) == (bf16 + fp32, 2 * bf16 + 4 * fp32) == (866_363, 3_437_804)


def test_hash_routed_layers_hold_a_token_table_and_no_score_bias() -> None:
    """Layers 0–2 (num_hash_layers 3): mlp.topk.tid2eid [129280, 6] int32, no e_score_correction_bias [256] fp32."""
    m, layout = model("deepseek-ai--DeepSeek-V4-Flash"), ParallelLayout(tp=1)

    def router(i: int) -> int:
        book = weights_book(m, layout, range(i, i + 1), first_stage=False, last_stage=False)
        return next(r.bytes for r in book.rows if r.component == "router")

    assert router(2) - router(4) == 129_280 * 6 * 4 - 256 * 4 == 3_101_696


def test_nvfp4_experts_are_refused_below_blackwell_and_planned_on_it() -> None:
    """nvidia/DeepSeek-V4-Flash-NVFP4: SGLang's overrides pick flashinfer_trtllm_routed, which its NVFP4 MoE method
    refuses off Blackwell (the engine at sm90: 'Current platform does not support NVFP4 quantization with the
    selected MoE backend')."""
    m = model("nvidia--DeepSeek-V4-Flash-NVFP4")
    assert m.quant.routed_experts is not None and m.quant.routed_experts.method == "nvfp4"
    assert m.quant.format_of(("model.layers.0.mlp.shared_experts",)) is m.quant  # block FP8 elsewhere
    book = kv_book(
        m, ParallelLayout(), range(m.num_layers), "fp8_e4m3", KvStorage(compressed_latent_bytes=584)
    )

    def check(gpu: str) -> None:
        check_launch(EngineInputs(model=m, layout=ParallelLayout(), settings=LaunchSettings(engine="sglang"), gpu_total_bytes=1,
                                  gpu_name=gpu, weights_bytes=0, kv=book, context_length=1, version=SGLANG))  # fmt: skip

    with pytest.raises(InputError, match="Current platform does not support NVFP4"):
        check("H100")
    check("B200")


@pytest.mark.parametrize(
    ("name", "bpft", "c128", "full", "swa"),
    [
        ("deepseek-ai--DeepSeek-V4-Flash", 7_086.75, 2_715_811_840, 5_677_312, 567_552),
        ("deepseek-ai--DeepSeek-V4-Pro", 10_115.25, 4_209_508_352, 3_829_760, 382_976),
    ],
)
def test_the_pool_is_sglangs(name: str, bpft: float, c128: int, full: int, swa: int) -> None:
    """`calculate_pool_sizes` at 40 GiB: full and SWA tokens are the engine's; bytes per full token and the c128
    states by its arithmetic (Flash: 0.1 × (585 × 43 + 8/256 × 10,240 × 21) + 21 × (585 + 132)/4 + 20 × 864/128;
    c128 rows ceil((257 × 128 + 129)/128) × 128 = 33,152 × 1,024 × 4 B × 20 layers)."""
    m = model(name)
    sizing = dsv4_sizing(m, range(m.num_layers), DSV4_PAGE, 256, 0.1)
    assert (sizing.bytes_per_full_token, sizing.c128_state_bytes) == (bpft, c128)
    tokens = sizing.tokens(40 * GIB, DSV4_PAGE)
    assert (tokens, int(tokens * 0.1) // DSV4_PAGE * DSV4_PAGE) == (full, swa)


def test_engines_without_its_pools_refuse_it_by_name() -> None:
    m = model("deepseek-ai--DeepSeek-V4-Flash")
    with pytest.raises(UnsupportedModelError, match="compressed attention .* not modelled") as err:
        kv_book(m, ParallelLayout(), range(m.num_layers), "bf16", engine_rules("vllm").kv_storage)
    assert err.value.field == "compress_ratios"


def test_sglang_reads_auto_kv_as_fp8_and_refuses_other_dtypes() -> None:
    """SGLang 0.5.23 `_deepseek_v4_kv_cache_dtype`: auto becomes fp8_e4m3 (the harness's pool: torch.float8_e4m3fn);
    anything but fp8_e4m3 or bfloat16 fails its assertion."""
    from kvtop.domain.kv_format import resolve_kv_format
    from kvtop.domain.launch_check import launch_refusals
    from kvtop.domain.ledger import predict

    m = model("deepseek-ai--DeepSeek-V4-Flash")
    assert resolve_kv_format("auto", m, engine_rules("sglang").kv_storage) == "fp8_e4m3"
    assert resolve_kv_format("auto", m, engine_rules("vllm").kv_storage) == "bf16"
    settings = LaunchSettings(engine="sglang", tp=2, kv_cache_dtype="fp8_e5m2")
    refusals = launch_refusals(
        predict(m, settings, gpu_total_bytes=141 * GIB, gpu_name="H200", version=SGLANG)
    )
    assert [r.field for r in refusals] == ["--kv-cache-dtype"]
    assert "fp8_e5m2 is not supported for DeepseekV4ForCausalLM" in refusals[0].message


def test_nvfp4_experts_on_the_routed_trtllm_runner_hold_no_swizzled_scales() -> None:
    """On Blackwell the overrides' flashinfer_trtllm_routed runner makes ModelOptNvFp4FusedMoEMethod set
    `w13_blockscale_swizzled` / `w2_blockscale_swizzled` to None (0.5.23 modelopt_quant.py: TRT-LLM aliases the
    weight scales); without EP every rank holds its experts' input scales already: no expert_scales row."""
    m = model("nvidia--DeepSeek-V4-Pro-NVFP4")
    rows = engine_rules("sglang").weights_built(m, ParallelLayout(tp=8), range(m.num_layers), "B200", SGLANG)
    # wo_a stays bf16 there: a hybrid FP8+NVFP4 config is no Fp8Config (wo_a_fp8_gemm_enabled)
    assert [r.component for r in rows] == ["wo_a_bf16"]


def test_wo_a_is_bf16_below_blackwell_and_the_checkpoints_fp8_on_it() -> None:
    """DeepSeek-V4-Flash at TP 1: 43 layers × ([8192, 4096] bf16 − ([8192, 4096] fp8 + [64, 32] fp32 scales)) =
    1,442,488,320 B, the engine's own difference on sm90 between a wo_a built bf16 (SGLANG_OPT_FP8_WO_A_GEMM
    resolved off: 182,362,067,124 B of model) and FP8 (the flag's default read before it was resolved:
    180,919,578,804 B); on sm100 DeepGEMM's UE8M0 scales keep the FP8 GEMM, and the book's FP8 stands."""
    m, layout = model("deepseek-ai--DeepSeek-V4-Flash"), ParallelLayout(tp=1)
    rules, layers = engine_rules("sglang"), range(43)
    h100 = {r.component: r.bytes for r in rules.weights_built(m, layout, layers, "H100", SGLANG)}
    assert h100["wo_a_bf16"] == 43 * (8192 * 4096 * 2 - (8192 * 4096 + 64 * 32 * 4)) == 1_442_488_320
    assert "wo_a_bf16" not in {r.component for r in rules.weights_built(m, layout, layers, "B200", SGLANG)}


def test_nvfp4_experts_needing_w13_padding_are_not_refused_for_the_cutlass_moe() -> None:
    """DeepSeek-V4-Pro-NVFP4 at TP 32 on B200: w13 holds 2 × (3072 ÷ 32) = 192 rows, 64 short of 256, which
    SGLang's CUTLASS MoE would refuse to pad (modelopt_quant.py:3018 at 0.5.23); but the model's overrides run
    flashinfer_trtllm_routed for a hybrid FP8+NVFP4 checkpoint (model_overrides/deepseek_v4.py:66-74 at 0.5.23),
    which never reaches that assert: the pad check lets it pass."""
    m, layout = model("nvidia--DeepSeek-V4-Pro-NVFP4"), ParallelLayout(tp=32)
    assert w13_pad_rows(m, layout) == 64
    pick = runner_pick(m, "B200", SGLANG)
    assert (pick.runner, pick.read) == (NvFp4MoeRunner.TRTLLM, True)
    book = kv_book(m, layout, range(m.num_layers), "fp8_e4m3", KvStorage(compressed_latent_bytes=584))
    check_gated_w13_pad(EngineInputs(model=m, layout=layout, settings=LaunchSettings(engine="sglang"), gpu_total_bytes=1,
                                     gpu_name="B200", weights_bytes=0, kv=book, context_length=1, version=SGLANG))  # fmt: skip
