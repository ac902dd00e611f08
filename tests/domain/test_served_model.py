"""One served model: a launch that re-casts its weights at load is booked, sized and calibrated on the
model as the engine holds it (`kvtop.domain.served_model`), by every book and view alike.

Expected values are hand arithmetic from Llama-3.1-8B's config (32 layers, 8 KV heads of 128, hidden
4096, vocabulary 128,256) and its checkpoint: 8,030,261,248 parameters, the safetensors index's
total_size 16,060,522,496 bytes in BF16. KV `auto` is the model dtype in vLLM (`CacheConfig.cache_dtype
"auto"` ⇒ the model's dtype, docs/engines/vllm.md §3) and in SGLang (`model_runner.py`: `kv_cache_dtype ==
"auto"` ⇒ `self.kv_cache_dtype = self.dtype`, the dtype `--dtype` gave the model).
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.registry import ENGINE_IDS, engine_flags
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.served_model import load_cast, not_modelled_cast, served_model
from kvtop.sources.hub import load_config_file
from tests.data_paths import CONFIGS, DATA

LLAMA_8B = CONFIGS / "meta-llama--Llama-3.1-8B.json"
PARAMS = 8_030_261_248
BF16_CHECKPOINT = 16_060_522_496  # the safetensors index's total_size
FP32_KV_PER_TOKEN = 32 * 8 * 128 * 2 * 4  # layers × KV heads × head dim × (K, V) × 4 B = 262,144
BF16_KV_PER_TOKEN = 32 * 8 * 128 * 2 * 2
# Both engines hold their rope's cos/sin cache beside the checkpoint's tensors: 131,072 positions × head_dim 128
# values, in vLLM in the model's dtype as served (rotary_embedding/base.py; engines/vllm/weights_held.py), in SGLang
# in float32 on CUDA whatever the dtype (engines/sglang/weights_held.py): 131,072 × 128 × 4 B = 67,108,864 B
ROPE = 131_072 * 128


def _rope_bytes(engine: str, dtype_bytes: int) -> int:
    return ROPE * (4 if engine == "sglang" else dtype_bytes)


def _segment_tail(engine: str, small_bytes: int) -> int:
    """SGLang measures its load as the caching allocator's segments (engines/sglang/weights_held.py): every matrix
    and the rope cache here are whole numbers of 2 MiB, and the tensors under 1 MiB (`small_bytes`: norms, scales)
    share one 2 MiB small-pool segment, whose unused rest counts as held."""
    return (2 << 20) - small_bytes if engine == "sglang" else 0


NORMS = (2 * 32 + 1) * 4096  # 32 layers' two RMSNorms and the final one


def _plan(engine: str, *flags: str):  # type: ignore[no-untyped-def]
    model = load_config_file(LLAMA_8B)
    settings = parse_flags(engine, [*flags]).model_copy(update={"model": str(LLAMA_8B)})
    return planned_capacity(model, settings, gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100")


@pytest.mark.parametrize(("engine", "version"), [("vllm", "0.19.0"), ("sglang", "0.5.4")])
def test_dtype_float32_books_weights_kv_and_calibration_on_one_model(engine: str, version: str) -> None:
    found = _plan(engine, "--engine-version", version, "--dtype", "float32")
    ledger = found.ledger
    assert PARAMS * 4 == 2 * BF16_CHECKPOINT == 32_121_044_992
    beside = _rope_bytes(engine, 4) + _segment_tail(engine, NORMS * 4)  # 1,064,960 B of float32 norms
    assert ledger.weights_bytes == 32_121_044_992 + beside  # the weights table's total
    assert ledger.kv_format == "fp32" and ledger.kv_bytes_per_token == FP32_KV_PER_TOKEN == 262_144
    term = found.estimate.term(Term.WEIGHTS)
    assert term is not None and term.source == "calibrated"
    assert term.bytes == ledger.weights_bytes and found.estimate.weights_beside_book_bytes == beside
    assert "--dtype float32" in term.basis


def test_the_cast_halves_the_tokens_a_gib_buys() -> None:
    """fp32 KV is twice bf16's bytes per token: the exchange rate halves, 8,192 → 4,096 tokens per GiB."""
    bf16 = _plan("vllm", "--engine-version", "0.19.0").ledger
    fp32 = _plan("vllm", "--engine-version", "0.19.0", "--dtype", "float32").ledger
    assert (bf16.tokens_per_gib, fp32.tokens_per_gib) == ((1 << 30) / BF16_KV_PER_TOKEN, (1 << 30) / FP32_KV_PER_TOKEN)
    assert fp32.tokens_per_gib == 4096


def test_online_fp8_quantizes_the_matrices_and_leaves_kv_at_the_model_dtype() -> None:
    """`--quantization fp8` on a BF16 checkpoint: each of the 32 × 7 linear matrices in one byte with one
    fp32 scale, embedding, LM head and norms in BF16 (9,081,201,536 B, vLLM printed 8.49 GiB); the KV
    stays BF16 (an online FP8 config states no KV dtype). Fp8Config still gives each of the 32 attention layers its
    KV-cache method's scalars: vLLM's q/k/v/prob scales in the model dtype (4 × 2 B, BaseKVCacheMethod.create_weights),
    SGLang's k_scale and v_scale in fp32 (2 × 4 B: fp8.py Fp8Config.get_quant_method → Fp8KVCacheMethod on every
    RadixAttention, llama.py passing the quant config)."""
    embedding, norms = 128_256 * 4096, (2 * 32 + 1) * 4096
    linear = PARAMS - 2 * embedding - norms
    scalars = {"vllm": 32 * 4 * 2, "sglang": 32 * 2 * 4}
    for engine in ("vllm", "sglang"):
        found = _plan(engine, "--quantization", "fp8")
        book = 2 * embedding * 2 + norms * 2 + linear + 32 * 7 * 4
        # the small tensors: the BF16 norms, each linear module's fp32 scales (q|k|v 12 B, o 4, gate|up 8, down 4)
        # and SGLang's k_scale and v_scale (8 B) a layer
        small = norms * 2 + 32 * (12 + 4 + 8 + 4) + scalars[engine]
        beside = _rope_bytes(engine, 2) + _segment_tail(engine, small)
        assert book == 9_081_201_536 and found.ledger.weights_bytes == book + scalars[engine] + beside
        assert found.ledger.kv_format == "bf16" and found.ledger.kv_bytes_per_token == BF16_KV_PER_TOKEN
        assert found.estimate.term(Term.WEIGHTS).bytes == found.ledger.weights_bytes  # type: ignore[union-attr]


def test_a_cast_kvtop_does_not_model_keeps_the_checkpoint_and_says_so() -> None:
    """bitsandbytes quantizes at load in its own format: the book stays the checkpoint's (assumed ± 50 %)."""
    found = _plan("vllm", "--engine-version", "0.19.0", "--quantization", "bitsandbytes")
    assert found.ledger.weights_bytes == BF16_CHECKPOINT
    term = found.estimate.term(Term.WEIGHTS)
    assert term is not None and term.source == "assumed" and term.error_bytes == BF16_CHECKPOINT // 2
    assert not_modelled_cast(found.ledger.model, found.ledger.settings) == "--quantization bitsandbytes"
    said = "--quantization bitsandbytes at load: the books count the checkpoint's bytes"
    assert found.ledger.model.not_modelled == (said,)  # plan prints it, --json lists it
    assert served_model(found.ledger.model, found.ledger.settings) is found.ledger.model  # said once


def test_a_sixteen_bit_dtype_on_a_bf16_checkpoint_serves_the_checkpoint_itself() -> None:
    model = load_config_file(LLAMA_8B)
    for engine, dtype in (("vllm", "bfloat16"), ("sglang", "auto")):
        settings = parse_flags(engine, ["--dtype", dtype])
        assert served_model(model, settings) is model and load_cast(model, settings).not_modelled is None


def test_a_float16_dtype_on_a_bf16_checkpoint_keeps_its_bytes_and_names_the_kv_fp16() -> None:
    """vLLM's `--dtype half` (config/model.py _STR_DTYPE_TO_TORCH_DTYPE, v0.33.0) and LMDeploy's `float16` serve
    the bf16 checkpoint in float16: the same 2 bytes an element, and the KV under `auto` is float16."""
    model = load_config_file(LLAMA_8B)
    assert model.half_dtype == "bf16"  # config.json: "torch_dtype": "bfloat16"
    for engine, dtype in (("vllm", "half"), ("lmdeploy", "float16")):
        settings = parse_flags(engine, ["--dtype", dtype])
        served = served_model(model, settings)
        assert (served.dtype_bytes, served.half_dtype) == (2, "fp16")
        assert load_cast(model, settings).not_modelled is None and load_cast(model, settings).applied == ()


def test_a_served_model_serves_as_itself() -> None:
    """A what-if re-solves the ledger's (served) model: the cast is not applied twice."""
    model = load_config_file(LLAMA_8B)
    settings = parse_flags("vllm", ["--dtype", "float32", "--quantization", "fp8"])
    served = served_model(model, settings)
    assert (served.dtype_bytes, served.quant.method, served.quant.weight_bits) == (4, "fp8", 8)
    assert served_model(served, settings) is served
    # a what-if of other settings casts the checkpoint, not the cast model
    assert served_model(served, settings.model_copy(update={"dtype": "auto", "quantization": None})) is model
    assert served_model(served, settings.model_copy(update={"quantization": None})).quant == model.quant
    again = predict(served, settings, gpu_total_bytes=gpu_total_bytes("H100"))
    assert again.weights_bytes == predict(model, settings, gpu_total_bytes=gpu_total_bytes("H100")).weights_bytes


def test_plan_shows_one_weights_figure_and_the_kv_the_cast_gives(capsys: pytest.CaptureFixture[str]) -> None:
    """The header, the weights table, the KV line and the calibration term of `kvtop plan` agree."""
    args = ["plan", "--model", str(LLAMA_8B), "--engine", "vllm", "--engine-version", "0.19.0", "--gpu", "H100",
            "--dtype", "float32"]  # fmt: skip
    assert main([*args, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    weights_term = next(term for term in out["terms"] if term["term"] == "weights")
    assert out["weights_bytes"] == weights_term["bytes"] == 32_121_044_992 + _rope_bytes("vllm", 4) == 32_188_153_856
    assert (out["kv_cache_dtype"], out["kv_bytes_per_token"]) == ("fp32", 262_144)
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "KV fp32" in text.splitlines()[0]
    assert "8,030,261,248" in text and "32.19 GB (29.98 GiB)" in text and "262,144 B" in text  # vLLM printed 29.98


FLOAT32_LOG = DATA / "served_model" / "vllm-0.19.0-llama-3.1-8b-float32-h100.log"


def test_explain_of_a_float32_start_rebuilds_its_logged_tokens(capsys: pytest.CaptureFixture[str]) -> None:
    """The start's own log (llm-d-planner, vLLM 0.19.0, H100) printed `GPU KV cache size: 175,296 tokens` from
    42.8 GiB of KV memory: 10,956 blocks of 16 tokens at 4,194,304 B a block (fp32 KV). The log's engine
    config says `dtype=torch.float32`; explain serves the model so and rebuilds the figure."""
    args = ["explain", str(FLOAT32_LOG), "--model", str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"),
            "--gpu", "H100", "--no-calibration-store", "--json"]  # fmt: skip
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["logged"]["token_capacity"] == 175_296 == 10_956 * 16
    assert out["predicted"]["kv_bytes_per_token"] == FP32_KV_PER_TOKEN
    assert out["predicted"]["token_capacity"] == 175_296 and out["verdict"] == "match"


@pytest.mark.parametrize("engine", ENGINE_IDS)
def test_every_engines_cast_table_says_its_releases_and_source(engine: str) -> None:
    casts = engine_flags(engine).load_casts  # type: ignore[arg-type]
    assert casts.releases and casts.source
    assert all(width in (None, 2, 4) for _, width in casts.dtypes)


def test_the_served_spec_keeps_config_jsons_quant_method_as_written() -> None:
    """Qwen3-32B-FP8-Static-PerTensor's config.json has a quantization_config block naming no quant_method (ModelOpt's
    quant_algo with no producer vLLM claims): the literal read is '' ('a block stating none'). vLLM serves it
    unquantized and rebuilt the spec without it: None, which SGLang's NVFP4 runner pick reads as 'no block at all'
    (`nvfp4_runner._quant_strings`). An online `--quantization fp8` keeps the checkpoint's literal the same way."""
    model = load_config_file(DATA / "engine_diff" / "configs" / "Qwen--Qwen3-32B-FP8-Static-PerTensor.json")
    config = json.loads((DATA / "engine_diff" / "configs" / "Qwen--Qwen3-32B-FP8-Static-PerTensor.json").read_text())
    assert "quant_method" not in config["quantization_config"] and model.quant.config_quant_method == ""
    ignored = served_model(model, parse_flags("vllm", ["--tp", "2"]))
    assert ignored.quant.ignored and not ignored.quant.quantized
    assert ignored.quant.config_quant_method == ""
    llama = load_config_file(LLAMA_8B)
    stated = llama.model_copy(update={"quant": llama.quant.model_copy(update={"config_quant_method": ""})})
    online = served_model(stated, parse_flags("vllm", ["--quantization", "fp8"]))
    assert online.quant.method == "fp8" and online.quant.config_quant_method == ""
