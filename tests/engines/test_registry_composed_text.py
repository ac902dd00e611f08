"""Issue 26, the text-only classes that had no config at hand (session 47): each judged on a config composed from its
config class's defaults (tests/data/engine_diff/registry/configs/<Class>.json; SOURCES.md beside it, field by field).

Oracle: the engines' meta builds of those configs (tests/data/engine_diff/registry/{vllm-0.33.0,sglang-0.5.23}.json,
`registry_sweep.py --set classes --only default--<Class>`), each figure also written out below from the engine's model
code (file and lines named), never from kvtop. kvtop plans each equal.

- SolarForCausalLM (both engines): Llama's modules (solar.py); the bskcn_* skip connections blend hidden states in
  forward and hold no tensor. vLLM gives every layer the config's sliding_window (2,047) as its window.
- TeleFLMForCausalLM (both engines): LlamaForCausalLM (teleflm.py); the μP scalars scale logits and embeddings only.
- Plamo3ForCausalLM (vLLM): the `plamo3` entry (q/k norms, four norms a layer, full every 8th layer).
- Rnj1ForCausalLM (vLLM, `--attention-backend TRITON_ATTN`): the `rnj1` entry (a Gemma3TextConfig whose
  "sliding_attention" layers are full; "chunked_attention" ones keep the window).
- FlintForCausalLM (vLLM, sm100): the `flint` entry (fp32 sinks, q/k norms, experts and one ungated shared expert).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from benchmarks.engine_diff import kvtop_side
from benchmarks.engine_diff.cases import budget
from benchmarks.engine_diff.engines import ENGINES
from benchmarks.engine_diff.registry_configs import REGISTRY_DATA
from benchmarks.engine_diff.registry_judge import judge, kvtop_answer
from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.launch_check import launch_refusals
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.model import LayerKind
from kvtop.domain.model_config import model_from_config
from kvtop.domain.wording import GIB

BF16, FP32 = 2, 4
VERSIONS = {"vllm": "0.33.0", "sglang": "0.5.23"}


def _config(name: str) -> dict[str, Any]:
    return dict(json.loads((REGISTRY_DATA / "configs" / f"{name}.json").read_text()))


def _row(engine: str, name: str, tp: int) -> dict[str, Any]:
    config = f"default--{name}"
    return row_of(engine, VERSIONS[engine], config, tp)


def _llama_bytes(c: dict[str, Any], tp: int) -> dict[str, int]:
    """vLLM 0.33.0 / SGLang 0.5.23 solar.py and llama.py: qkv (heads + 2 KV heads) × head_dim, o, gate_up, down split
    over TP; two RMSNorms a layer and the final one whole; embedding and the untied head split by vocabulary (32,000
    rows: a multiple of 64, no padding)."""
    h, inter, layers, vocab = c["hidden_size"], c["intermediate_size"], c["num_hidden_layers"], c["vocab_size"]
    hd = h // c["num_attention_heads"]
    split = (h * (c["num_attention_heads"] + 2 * c["num_key_value_heads"]) * hd + h * h + 3 * h * inter) // tp
    return {"model": (layers * (split + 2 * h) + vocab // tp * h + h) * BF16, "lm_head": vocab // tp * h * BF16}


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
@pytest.mark.parametrize("name", ["SolarForCausalLM", "TeleFLMForCausalLM"])
@pytest.mark.parametrize("tp", [1, 2])
def test_llama_shaped_classes_build_as_llama_and_kvtop_plans_them_equal(engine: str, name: str, tp: int) -> None:
    row = _row(engine, name, tp)
    assert row["status"] == "ok"
    (stage,) = row["stages"]
    expected = _llama_bytes(_config(name), tp)  # TP 1: model 13,214,687,232 B, lm_head 262,144,000 B
    assert stage["param_bytes"] == expected
    per_token = 32 * 2 * (32 // tp) * 128 * BF16  # 32 layers, K and V of 32 KV heads × 128 (TP 1: 524,288 B)
    if engine == "sglang":
        assert int(row["cell_size"]) == per_token
    else:
        (spec,) = stage["layer_specs"]
        assert spec["layers"] == 32 and spec["page_size_bytes"] == 16 * per_token // 32
        # Solar: vLLM gives every layer the config's sliding_window (ModelConfig's window, no per-layer one passed)
        assert spec["kind"] == ("SlidingWindowSpec" if name == "SolarForCausalLM" else "FullAttentionSpec")
    plan = kvtop_answer(engine, VERSIONS[engine], row)
    assert plan["stages"][0]["weights_bytes"] == sum(expected.values())
    assert plan["bytes_per_token"] == per_token
    assert judge(engine, VERSIONS[engine], row).verdict == "equal"


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
@pytest.mark.parametrize("tp", [1, 2])
def test_teleflm_typed_config_is_read_by_the_llama_entry_through_its_class(
    engine: str, tp: int, tmp_path: Path
) -> None:
    """Tele-FLM's checkpoints state model_type teleflm, which no entry reads: vLLM 0.33.0 teleflm.py
    (TeleFLMForCausalLM(LlamaForCausalLM)) and SGLang 0.5.23 teleflm.py:50-90 (TeleFLMModel(LlamaModel)) build a Llama
    body; use_mup true makes them read input_mult, output_mult and mup_scale_factor, scalars that size nothing. So the
    plan reads the llama entry by the class (no "unchecked class" note), and its bytes are the same engine rows'."""
    config = {**_config("TeleFLMForCausalLM"), "model_type": "teleflm", "use_mup": True, "input_mult": 1.0,
              "output_mult": 1.0, "mup_scale_factor": 1.0}  # fmt: skip
    model = model_from_config(config)
    assert model.reading == (
        "architecture entry llama (LlamaConfig), by its class TeleFLMForCausalLM (model_type 'teleflm')"
    )
    assert model.unchecked_class is None
    row = _row(engine, "TeleFLMForCausalLM", tp)
    expected = _llama_bytes(config, tp)  # TP 1: 13,214,687,232 + 262,144,000 B, the engines' meta rows
    assert row["stages"][0]["param_bytes"] == expected
    path = tmp_path / "teleflm.json"
    path.write_text(json.dumps(config))
    case = {**{k: row[k] for k in ("tp", "kv_dtype", "gpu", "max_model_len")}, "config": "teleflm", "flags": [],
            **budget(ENGINES[engine])}  # fmt: skip
    with mock.patch.object(kvtop_side, "config_path", lambda name: path):
        plan = kvtop_side.kvtop_plan(engine, VERSIONS[engine], case)
    assert plan["stages"][0]["weights_bytes"] == sum(expected.values())
    assert plan["bytes_per_token"] == 32 * 2 * (32 // tp) * 128 * BF16  # TP 1: 524,288 B (SGLang's cell_size)


def _plamo3_bytes(tp: int) -> int:
    """vLLM 0.33.0 plamo3.py: Plamo3AttentionMixer 146-195 (qkv of 32 + 2 × 4 heads × 128 with no bias, o, q_norm and
    k_norm of head_dim), DenseMLP (gate_up 2 × 13,312, down), Plamo3DecoderLayer 252-270 (four norms of hidden);
    the embedding split by vocabulary, tied to the head; the final norm. TP 1: 6,574,059,520 parameters."""
    h, hd, inter, vocab = 4096, 128, 13312, 32000
    split = (h * (32 + 2 * 4) * hd + 32 * hd * h + 3 * h * inter) // tp
    return (32 * (split + 2 * hd + 4 * h) + vocab // tp * h + h) * BF16


@pytest.mark.parametrize("tp", [1, 2])
def test_plamo3_windows_every_layer_but_each_eighth_and_kvtop_plans_it_equal(tp: int) -> None:
    row = _row("vllm", "Plamo3ForCausalLM", tp)
    (stage,) = row["stages"]
    assert stage["param_bytes"] == {"model": _plamo3_bytes(tp)}  # TP 1: 13,148,119,040 B
    kinds = [(s["kind"], s["layers"], s.get("sliding_window")) for s in stage["layer_specs"]]
    # Plamo3Config: layer i full where (i + 1) % sliding_window_pattern (8) == 0, window_size (2,048) elsewhere
    assert kinds == [("SlidingWindowSpec", 7, 2048), ("FullAttentionSpec", 1, None)] * 4
    assert {s["page_size_bytes"] for s in stage["layer_specs"]} == {16 * 2 * (4 // tp) * 128 * BF16}
    plan = kvtop_answer("vllm", "0.33.0", row)
    assert plan["stages"][0]["weights_bytes"] == _plamo3_bytes(tp)
    assert judge("vllm", "0.33.0", row).verdict == "equal"
    model = model_from_config(_config("Plamo3ForCausalLM"))
    assert model.layer_attention.count(LayerKind.FULL) == 4 and model.qk_norm


def test_plamo3_reads_the_window_size_its_file_states() -> None:
    """Plamo3Config.__init__ (SGLang's copy, configs/plamo3.py @ 33918d47) derives interleaved_sliding_window from the
    file's window_size (None on every sliding_window_pattern-th layer), which vLLM 0.33.0 plamo3.py:205 reads per
    layer: a stated 1,024 is the window, never the class's 2,048, and no note says the file left it out."""
    config = _config("Plamo3ForCausalLM")
    assert config["window_size"] == 2048
    model = model_from_config({**config, "window_size": 1024})
    assert model.sliding_window == 1024 and not model.defaults_used
    assert not model_from_config(config).defaults_used  # stated: not a class default


def _rnj1_bytes(tp: int) -> int:
    """vLLM 0.33.0 rnj1.py on Gemma3TextConfig's defaults: Rnj1Attention 118-138 (qkv of 8 + 2 × 4 heads × 256, o,
    q_norm and k_norm of head_dim), Rnj1MLP (gate_up 2 × 9,216, down), Rnj1DecoderLayer 226-234 (four norms of
    hidden); the embedding (262,208 rows: 4,097 × 64, no padding) tied to the head; the final norm."""
    h, hd, inter, vocab = 2304, 256, 9216, 262208
    split = (h * (8 + 2 * 4) * hd + 8 * hd * h + 3 * h * inter) // tp
    return (26 * (split + 2 * hd + 4 * h) + vocab // tp * h + h) * BF16


@pytest.mark.parametrize("tp", [1, 2])
def test_rnj1_on_triton_holds_full_attention_where_gemma3_slides_and_kvtop_plans_it_equal(tp: int) -> None:
    row = _row("vllm", "Rnj1ForCausalLM", tp)
    assert row["flags"] == ["--attention-backend", "TRITON_ATTN"]
    (stage,) = row["stages"]
    assert stage["param_bytes"] == {"model": _rnj1_bytes(tp)}  # TP 1: 5,257,316,864 B
    # rnj1.py 141-144: a window only on "chunked_attention" layers; the defaults' "sliding_attention" layers are full
    (spec,) = stage["layer_specs"]
    assert (spec["kind"], spec["layers"], spec["page_size_bytes"]) == ("FullAttentionSpec", 26, 16 * 2 * (4 // tp) * 256 * 2)
    assert judge("vllm", "0.33.0", row).verdict == "equal"


def test_rnj1_reads_its_chunked_layers_as_windowed_whatever_its_model_type() -> None:
    """rnj1.py 141-144: is_chunked → per_layer_sliding_window = config.sliding_window (chunk_lookback 1: vLLM's
    SlidingWindowSpec); gemma3_text's own entry would read "sliding_attention" as windowed."""
    config = _config("Rnj1ForCausalLM")
    config["layer_types"] = ["chunked_attention", *config["layer_types"][1:]]
    model = model_from_config(config)
    assert model.model_type == "rnj1" and model.unchecked_class is None
    assert model.layer_attention[0] is LayerKind.SLIDING and model.sliding_window == config["sliding_window"]
    assert set(model.layer_attention[1:]) == {LayerKind.FULL}


def _flint_bytes(tp: int) -> int:
    """vLLM 0.33.0 models/flint/model.py: FlintAttention 257-296 (qkv of 32 + 2 × 4 heads × 128, o, q_norm and k_norm
    of head_dim, a float32 sink per head of the rank), FlintSparseMoeBlock 140-190 (the bf16 router GateLinear
    hidden → 256 whole, 256 experts of gate_up 2 × 512 and down split over TP, one shared FlintMLP of 1,024 split),
    two norms a layer; the embedding and the untied head split by vocabulary (150,144 rows: 2,346 × 64)."""
    h, hd, vocab, experts = 2048, 128, 150144, 256
    split = (h * (32 + 2 * 4) * hd + 32 * hd * h + experts * 3 * h * 512 + 3 * h * 1024) // tp
    bf16 = 49 * (split + 2 * hd + h * experts + 2 * h) + 2 * (vocab // tp) * h + h
    return bf16 * BF16 + 49 * (32 // tp) * FP32


@pytest.mark.parametrize("tp", [1, 2])
def test_flint_builds_on_blackwell_and_kvtop_plans_it_equal(tp: int) -> None:
    row = _row("vllm", "FlintForCausalLM", tp)
    assert row["gpu"] == "sm100" and row["status"] == "ok"
    (stage,) = row["stages"]
    assert sum(stage["param_bytes"].values()) == _flint_bytes(tp)  # TP 1: 82,668,071,552 B
    (spec,) = stage["layer_specs"]  # FlintConfig's layer_types: every layer full
    assert (spec["kind"], spec["layers"], spec["page_size_bytes"]) == ("FullAttentionSpec", 49, 16 * 2 * (4 // tp) * 128 * 2)
    plan = kvtop_answer("vllm", "0.33.0", row)
    assert plan["stages"][0]["weights_bytes"] == _flint_bytes(tp)
    assert judge("vllm", "0.33.0", row).verdict == "equal"


def _ledger(name: str, *extra: str, gpu: str = "H100", version: str = "0.33.0") -> Ledger:
    model = model_from_config(_config(name))
    flags = ["--tensor-parallel-size", "1", "--max-model-len", "8192", "--engine-version", version, *extra]
    measured = MeasuredInputs(free_before_load_bytes=80 * GIB, free_after_load_bytes=60 * GIB)
    return predict(model, parse_flags("vllm", flags), gpu_total_bytes=gpu_total_bytes(gpu), gpu_name=gpu,
                   measured=measured)  # fmt: skip


def _backend_refusals(ledger: Ledger) -> list[str]:
    return [r.message for r in launch_refusals(ledger) if r.field == "--attention-backend"]


@pytest.mark.parametrize(("extra", "gpu", "impl"), [
    ((), "H100", "FlashAttentionImpl"), ((), "B200", "FlashInferImpl"),
    (("--attention-backend", "flashinfer"), "H100", "FlashInferImpl"),
])  # fmt: skip
def test_kvtop_refuses_rnj1_off_triton_with_the_engines_words(extra: tuple[str, ...], gpu: str, impl: str) -> None:
    """v1/attention/backends/flash_attn.py FlashAttentionImpl.__init__ (and flashinfer.py's) take no chunk_lookback:
    the registry sweep's build on sm90's default raised "FlashAttentionImpl.__init__() got an unexpected keyword
    argument 'chunk_lookback'"."""
    (message,) = _backend_refusals(_ledger("Rnj1ForCausalLM", *extra, gpu=gpu))
    assert f"'{impl}.__init__() got an unexpected keyword argument 'chunk_lookback''" in message
    # the remedy the sweep's build took (registry_sweep.BACKEND_FLAGS; v0.33.0 triton_attn.py:494
    # TritonAttentionImpl.__init__(…, chunk_lookback: int = -1)), named by the rule's own constant
    assert message.endswith("add --attention-backend TRITON_ATTN")
    assert not _backend_refusals(_ledger("Rnj1ForCausalLM", "--attention-backend", "TRITON_ATTN"))
    assert not _backend_refusals(_ledger("Rnj1ForCausalLM", version="0.13.0"))


@pytest.mark.parametrize(("name", "version", "refused"), [
    # vLLM sdists: models/rnj1.py first in v0.20.0 (absent from v0.19.1), Attention(chunk_lookback=…) at :174, and
    # v0.20.0 flash_attn.py:597-610 FlashAttentionImpl.__init__ takes no chunk_lookback
    ("Rnj1ForCausalLM", "0.19.1", False), ("Rnj1ForCausalLM", "0.20.0", True),
    # vllm/models/flint/ first in v0.33.0 (absent from v0.32.0); model.py:318 asserts a FlashInferImpl
    ("FlintForCausalLM", "0.32.0", False), ("FlintForCausalLM", "0.33.0", True),
])  # fmt: skip
def test_the_backend_refusals_start_with_the_release_that_added_the_class(name: str, version: str, refused: bool) -> None:
    assert bool(_backend_refusals(_ledger(name, version=version))) is refused


def test_kvtop_refuses_flint_off_flashinfer_and_plans_it_on_blackwell() -> None:
    """The registry sweep on sm90 (no flag): FLASH_ATTN, "Flint requires FlashInfer attention" (AssertionError)."""
    (message,) = _backend_refusals(_ledger("FlintForCausalLM"))
    assert "on FLASH_ATTN" in message and "'Flint requires FlashInfer attention'" in message
    assert not _backend_refusals(_ledger("FlintForCausalLM", gpu="B200"))
