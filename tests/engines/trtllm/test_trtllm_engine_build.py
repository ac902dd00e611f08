"""What a TensorRT engine holds because of how it was built (engine_build.py, docs/engines/trtllm.md §17, §18).

The gpt2-medium start (tests/data/calibration/trtllm.jsonl, file29338649464-trtllm-gpt2-medium-3090-triton-v080: a
public note, search-index id 29338649464, tensorrtllm_backend v0.8.0 on an RTX 3090) was built by
`build.py --use_gpt_attention_plugin --remove_input_padding` and logs, in TensorRT's own MiB:
  `No engine version found in the config file, assuming engine(s) built by old builder API.`
  `Loaded engine size: 777 MiB`
  `Init cuDNN: … now: CPU 820, GPU 1139 (MiB)`, then
  `TensorRT-managed allocation in engine deserialization: CPU +0, GPU +774, now: CPU 0, GPU 774 (MiB)`
  `Init cuBLAS/cuBLASLt: CPU +0, GPU +8, now: CPU 848, GPU 1329 (MiB)` (the first execution context)
  `Allocate 21604859904 bytes for k/v cache.` / `Using 219776 total tokens in paged KV cache`
Expected figures are the log's or the engine code's arithmetic, worked here, never kvtop's output.
"""

from __future__ import annotations

from benchmarks.calibration.corpus import load
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.trtllm.calibration import packed_tokens_estimate, terms, token_logits_estimate
from kvtop.domain.engines.trtllm.engine_build import runtime_form, tied_head_copy
from kvtop.domain.launch import parse_flags

MIB = 1 << 20
RECORDS = {r.id: r for r in load("trtllm")}
GPT2 = RECORDS["file29338649464-trtllm-gpt2-medium-3090-triton-v080"]
LLAMA3 = RECORDS["file29429054722-trtllm-llama-3-8b-3090"]  # trtllm-build: 'Engine version 0.8.0 found …'
QWEN_INT8 = RECORDS["trtllm-issue1188-qwen2.5-coder-0.5b-int8wo-a4000"]


def _without_flag(record_inputs: CalibrationInputs, name: str) -> CalibrationInputs:
    settings = record_inputs.settings
    flags = {k: v for k, v in settings.flags.items() if k != name}
    return record_inputs.model_copy(update={"settings": settings.model_copy(update={"flags": flags})})


def test_build_py_flags_are_read_not_refused() -> None:
    """build.py's `--use_gpt_attention_plugin` (bare, or with its plugin dtype) is a flag kvtop reads, not unknown."""
    for tokens in (["--use_gpt_attention_plugin"], ["--use_gpt_attention_plugin", "float16"],
                   ["--use_inflight_batching"], ["--use_embedding_sharing"]):  # fmt: skip
        read = parse_flags("trtllm", ["--max_batch_size", "8", *tokens], strict=True)
        assert tokens[0].lstrip("-") in read.flags and not read.unknown_flags


def test_a_v08_build_py_engine_holds_its_packed_tokens_activation() -> None:
    """The log: TensorRT's count grows 1,139 → 1,329 MiB around the first execution context, 190 MiB, where v0.8's
    trtllm-build form would be max_num_tokens × vocab × 4 B = 8,192 × 50,257 × 4 B = 1,646,821,376 B (1,570.5 MiB).
    The build.py form is the packed tokens' MLP: the engine's window (max_input_len + max_output_len = 1,024) and
    batch 8 match the sibling note's build (`--max_batch_size 8 --max_input_len 924 --max_output_len 100`):
    8 × 924 = 7,392 tokens × (3 × 4,096 + 1,024) × 2 B = 196,804,608 B = 187.7 MiB, within 3 MiB of the count. The
    record passes no max_input_len, so build.py's default 2,048 is assumed: 16,384 × 13,312 × 2 B = 436,207,616 B,
    error the value (the interval reaches the 190 MiB)."""
    inputs = GPT2.inputs()
    assert runtime_form(inputs.version, inputs.settings) == "packed_tokens"
    assert token_logits_estimate(inputs) is None
    found = packed_tokens_estimate(inputs)
    assert found is not None and found.bytes == 16_384 * 13_312 * 2 == 436_207_616
    assert found.error_bytes == found.bytes and "build.py (--use_gpt_attention_plugin)" in found.basis
    assert found.bytes - found.error_bytes <= 190 * MIB <= found.bytes + found.error_bytes
    at_924 = inputs.model_copy(update={"settings": inputs.settings.model_copy(update={"max_input_len": 924})})
    sized = packed_tokens_estimate(at_924)
    assert sized is not None and sized.bytes == 196_804_608 and abs(sized.bytes - 190 * MIB) < 3 * MIB


def test_without_build_py_flags_a_v08_engine_keeps_the_trtllm_build_form() -> None:
    """The Llama-3-8B trtllm-build engine (29429054722): 15,681 → 19,711 MiB around its execution context, 4,030 MiB;
    8,192 × 128,256 × 4 B = 4,202,692,608 B (4,008 MiB), the v0.8 form, unchanged; and the gpt2 start without its
    build.py flag is read the same way (a launch line that does not say the builder)."""
    found = token_logits_estimate(LLAMA3.inputs())
    assert found is not None and found.bytes == 8_192 * 128_256 * 4 == 4_202_692_608
    unsaid = _without_flag(GPT2.inputs(), "use_gpt_attention_plugin")
    assert runtime_form(unsaid.version, unsaid.settings) == "token_logits"


def test_the_v08_form_is_measured_only_at_the_vocabulary_it_was_read_at() -> None:
    """The form was read off Llama-3-8B engines (vocab 128,256): there its error is the logs' 10 %,
    4,202,692,608 B × 0.1. Issue #1400's Llama-2-7B engine (vocab 32,000, --max_num_tokens 4096) is charged
    4,096 × 32,000 × 4 B = 524,288,000 B; the packed tokens' MLP TensorRT holds whatever the vocabulary is
    4,096 × (3 × 11,008 + 4,096) × 2 B = 304,087,040 B, so the error reaches it: 220,200,960 B (token_logits.py)."""
    llama3 = token_logits_estimate(LLAMA3.inputs())
    assert llama3 is not None and llama3.error_bytes == 420_269_261
    found = token_logits_estimate(RECORDS["case-trtllm-1400-llama7b-sq-a100-80gb"].inputs())
    assert found is not None and found.bytes == 4_096 * 32_000 * 4 == 524_288_000
    assert found.error_bytes == 524_288_000 - 4_096 * (3 * 11_008 + 4_096) * 2 == 220_200_960
    assert "at vocab 32,000 the error reaches the packed tokens' MLP" in found.basis


def test_a_tied_checkpoint_engine_holds_its_lm_head_apart() -> None:
    """gpt2-medium ties its head (GPT2Config's default): the engine holds 774 MiB (TensorRT-managed, deserialization),
    the tied book 354,871,296 params × 2 B = 709,742,592 B (676.9 MiB) and a second head 50,257 × 1,024 × 2 B =
    102,926,336 B (98.2 MiB): 812,668,928 B = 775.0 MiB, within 2 MiB of the count (the book alone misses by 97)."""
    inputs = GPT2.inputs()
    extra = tied_head_copy(inputs.model, inputs.layout, inputs.settings)
    assert extra is not None and extra[0] == 50_257 * 1_024 * 2 == 102_926_336
    weights = next(t for t in terms(inputs, {}) if t.term is Term.WEIGHTS)
    assert weights.bytes == 709_742_592 + 102_926_336
    assert abs(weights.bytes - 774 * MIB) < 2 * MIB


def test_the_int8_weight_only_engine_keeps_a_16_bit_head() -> None:
    """Issue 1188 (0.14, Qwen2.5-Coder-0.5B int8 weight-only): `TensorRT-managed allocation in IExecutionContext
    creation: … now: CPU 0, GPU 869 (MiB)`; its head is not quantized (convert_hf_qwen splits `lm_head.weight` without
    the weight-only path): 151,936 × 896 × 2 B = 272,269,312 B (259.7 MiB) beside the book: the term lands within
    1 % of 869 MiB (the book alone, 601.6 MiB, misses by 31 %)."""
    inputs = QWEN_INT8.inputs()
    extra = tied_head_copy(inputs.model, inputs.layout, inputs.settings)
    assert extra is not None and extra[0] == 151_936 * 896 * 2 == 272_269_312
    weights = next(t for t in terms(inputs, {}) if t.term is Term.WEIGHTS)
    assert abs(weights.bytes / (869 * MIB) - 1) < 0.01


def test_no_copy_where_the_head_is_shared_or_not_built_twice() -> None:
    """`--use_embedding_sharing` shares it; Gemma is built shared (models/gemma/model.py asserts
    share_embedding_table); the PyTorch backend ties it as the model does; a pipeline stage's book charges the last
    stage's head already; an untied model has its own head in the book."""
    inputs = GPT2.inputs()
    shared = inputs.model_copy(update={"settings": inputs.settings.model_copy(
        update={"flags": {**inputs.settings.flags, "use_embedding_sharing": True}})})  # fmt: skip
    assert tied_head_copy(shared.model, shared.layout, shared.settings) is None
    staged = inputs.layout.model_copy(update={"pp": 2})
    assert tied_head_copy(inputs.model, staged, inputs.settings) is None
    assert tied_head_copy(LLAMA3.inputs().model, LLAMA3.inputs().layout, LLAMA3.inputs().settings) is None
    gemma = inputs.model.model_copy(update={"architecture": "Gemma2ForCausalLM"}) if inputs.model else None
    assert gemma is not None and tied_head_copy(gemma, inputs.layout, inputs.settings) is None
    pytorch = inputs.model_copy(update={"settings": inputs.settings.model_copy(update={"backend": "pytorch"})})
    weights = next(t for t in terms(pytorch, {}) if t.term is Term.WEIGHTS)
    assert weights.bytes == 709_742_592
