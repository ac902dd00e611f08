"""SGLang builds a ModelOpt Qwen3.5's MTP layer with no quant config (models/qwen3_5_mtp.py: quant_config None for
modelopt_fp4 from 0.5.9 :52-53, serialized NVFP4 from 0.5.20 :67-70; a MIXED_PRECISION checkpoint listing no `mtp.`
module alike, 0.5.23 :60-64), and DeepSeek's next-n layer of a modelopt_fp4 checkpoint (deepseek_nextn.py from 0.4.8): the
weights book's `mtp` row is the layer in bf16, counted here from the config."""

from __future__ import annotations

import json

from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.launch import parse_flags
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.ledger import predict
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.conftest import CONFIGS

H200 = 143771 << 20
SPEC = ["--speculative-algorithm", "EAGLE", "--speculative-num-draft-tokens", "4", "--speculative-num-steps", "3",
        "--speculative-eagle-topk", "1", "--disable-radix-cache"]  # fmt: skip


def _model(name: str) -> ModelSpec:
    return model_from_config(json.loads((CONFIGS / "heldout" / f"{name}.json").read_text()), source=name)


def _mtp(model: ModelSpec, tp: int, version: str) -> int:
    flags = ["--tp-size", str(tp), *SPEC, "--engine-version", version]
    ledger = predict(model, parse_flags("sglang", flags, strict=True), gpu_total_bytes=H200, gpu_name="H200")
    return {row.component: row.bytes for row in ledger.ranks[0].weights.rows}["mtp"]


def _qwen35_122b_mtp_bf16(tp: int) -> int:
    """nvidia/Qwen3.5-122B-A10B-NVFP4's config: hidden 3,072, 32 q heads gated (× 2 rows) and 2 KV heads of 256
    (replicated to one a rank past TP 2), 256 experts of 1,024 and a shared expert of 1,024 split over TP, the router
    and the shared expert's gate whole, fc (2 × hidden → hidden) whole, q/k norms and five norms of hidden; all bf16."""
    h, kv = 3072, max(2 // tp, 1)
    attention = (32 * 256 * 2 // tp + 2 * kv * 256) * h * 2 + h * (32 * 256 // tp) * 2 + 2 * 256 * 2
    moe = 256 * 3 * 1024 * h * 2 // tp + 256 * h * 2 + 3 * 1024 * h * 2 // tp + h * 2
    return attention + moe + h * 2 * h * 2 + 5 * h * 2


def test_the_nvfp4_qwen3_5_mtp_layer_is_booked_in_bf16() -> None:
    model = _model("nvidia--Qwen3.5-122B-A10B-NVFP4")
    assert _qwen35_122b_mtp_bf16(4) == 1_292_932_096  # 424,717,312 B as NVFP4 before session 65
    assert _qwen35_122b_mtp_bf16(1) == 5_047_358_464
    for version in ("0.5.14", "0.5.23"):
        assert _mtp(model, 4, version) == _qwen35_122b_mtp_bf16(4)
        assert _mtp(model, 1, version) == _qwen35_122b_mtp_bf16(1)


def test_a_mixed_precision_qwen3_6_listing_no_mtp_module_books_it_plain_too() -> None:
    """nvidia/Qwen3.6-35B-A3B-NVFP4: MIXED_PRECISION, its quantized_layers naming no `mtp.` module."""
    model = _model("nvidia--Qwen3.6-35B-A3B-NVFP4")
    assert not any(name.startswith("mtp.") for name, _ in model.quant.mixed)
    plain = model.model_copy(update={"quant": model.quant.model_copy(update={"method": "none", "mixed": ()})})
    assert _mtp(model, 4, "0.5.23") == _mtp(plain, 4, "0.5.23")


def _deepseek_v31_nextn_bf16(tp: int) -> int:
    """nvidia/DeepSeek-V3.1-NVFP4's next-n layer by hand (hidden 7,168, 128 MLA heads split over TP): q_a 7,168 × 1,536
    and its norm, q_b 1,536 × heads × 192, kv_a 7,168 × 576 and its norm of 512 (whole), kv_b 512 × heads × 256, o
    heads × 128 × 7,168; 256 experts and a shared one of 2,048 split over TP; the router 256 × 7,168 whole and its fp32
    bias of 256; eh_proj 14,336 × 7,168 whole and five norms of hidden: bf16."""
    h, heads, inter = 7168, 128 // tp, 2048 // tp
    attention = h * 1536 + 1536 + 1536 * heads * 192 + h * 576 + 512 + 512 * heads * 256 + heads * 128 * h
    moe = 256 * 3 * h * inter + 3 * h * inter + 256 * h
    return 2 * (attention + moe + 2 * h * h + 5 * h) + 256 * 4


def test_the_nvfp4_deepseek_nextn_layer_is_booked_in_bf16() -> None:
    """deepseek_nextn.py drops the quant config for modelopt_fp4 (0.4.8 :47-51 – 0.5.23 :75-79): the layer, named
    `model.decoder`, is bf16 though layer 60's experts are NVFP4; 0.4.7 kept it (the target's last layer's formats)."""
    path = CONFIGS / "heldout" / "nvidia--DeepSeek-V3.1-NVFP4.json"
    quant = json.loads(path.with_name("nvidia--DeepSeek-V3.1-NVFP4.hf_quant_config.json").read_text())
    model = model_from_config(json.loads(path.read_text()), source=path.name, hf_quant_config=quant)
    assert (model.architecture, model.mtp_layers, model.quant.method) == ("DeepseekV3ForCausalLM", 1, "nvfp4")
    assert (_deepseek_v31_nextn_bf16(1), _deepseek_v31_nextn_bf16(8)) == (23_220_136_960, 3_112_119_296)

    def mtp(version: str, tp: int) -> int:
        parts = engine_rules("sglang").stage_parts(model, 0, 1, ResolvedVersion(text=version))
        book = weights_book(model, ParallelLayout(tp=tp), range(model.num_layers), first_stage=True, last_stage=True,
                            load_mtp=True, parts=parts)  # fmt: skip
        return next(row.bytes for row in book.rows if row.component == "mtp")

    for version in ("0.4.8", "0.5.14", "0.5.23"):
        assert (mtp(version, 1), mtp(version, 8)) == (_deepseek_v31_nextn_bf16(1), _deepseek_v31_nextn_bf16(8))
    assert mtp("0.4.7", 8) < _deepseek_v31_nextn_bf16(8) // 2  # its experts NVFP4 as layer 60's
