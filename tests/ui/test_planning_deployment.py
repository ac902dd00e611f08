"""The planner's what-if fields for the deployment beside the model (issue 30): each edit is written in the
engine's own flags and re-solved, before → after, on the same GPUs."""

from __future__ import annotations

import pytest

from kvtop.domain.errors import InputError
from kvtop.domain.wording import GIB
from kvtop.ui.planning import apply_edits, engine_flags, field_texts, plan
from tests.ui.fakes import H100_TOTAL_BYTES, llama_settings


def test_the_deployment_fields_start_from_the_launch() -> None:
    settings = llama_settings().model_copy(update={"flags": {"enable-lora": True, "max-lora-rank": "64"}})
    texts = field_texts(settings)
    assert (texts["lora_slots"], texts["lora_rank"], texts["spec_method"], texts["host_kv_gib"]) == (
        "default", "64", "", ""
    )
    assert texts["redundant_experts"] == "0"


def test_host_kv_per_rank_answers_how_many_tokens_it_adds(llama) -> None:
    # Llama-3-70B TP8 under SGLang (latest): 40,960 B per token per rank; 25 GiB of host memory per rank is
    # int(25 × 2³⁰ ÷ 10⁹ × 10⁹ // 40,960) tokens, up one page of 1 (HiCache, v0.5.5.post3 on)
    outcome = plan(llama, llama_settings(), {"host_kv_gib": "25"}, gpu_total_bytes=H100_TOTAL_BYTES, gpu_name="H100")
    assert outcome.after is not None and outcome.after.host_tier is not None
    hicache_bytes = int(float(f"{25 * GIB / 1e9:.9g}") * 1e9)
    assert outcome.after.host_tier.tokens_per_rank == hicache_bytes // 40_960 + 1
    assert outcome.after.token_capacity == outcome.before.token_capacity  # the GPU pool is unchanged
    assert "--enable-hierarchical-cache --hicache-size 26.8435456" in engine_flags(outcome.after.settings, with_model=False, launch=outcome.nodes)


def test_lora_slots_cost_gpu_tokens_before_to_after(llama) -> None:
    outcome = plan(llama, llama_settings(), {"lora_slots": "8", "lora_rank": "16"},
                   gpu_total_bytes=H100_TOTAL_BYTES, gpu_name="H100")  # fmt: skip
    assert outcome.after is not None and outcome.before is not None
    assert outcome.after.token_capacity < outcome.before.token_capacity
    assert outcome.after.settings.flags == {"enable-lora": True, "max-loras-per-batch": "8", "max-lora-rank": "16"}


def test_host_kv_as_a_share_of_the_gpu_pool_is_hicaches_only() -> None:
    sglang = apply_edits(llama_settings(), {"host_kv_gib": "x3"})
    assert sglang.flags == {"enable-hierarchical-cache": True, "hicache-ratio": "3"}
    with pytest.raises(InputError, match="host KV GiB: vLLM has no host KV sized as a share of the GPU pool"):
        apply_edits(llama_settings().model_copy(update={"engine": "vllm"}), {"host_kv_gib": "x3"})
    offloading = llama_settings().model_copy(update={"engine": "vllm", "flags": {"kv-offloading-size": "200"}})
    assert field_texts(offloading)["host_kv_gib"] == "25"  # 200 GiB over TP8, per rank


def test_a_draft_method_for_vllm_is_written_as_its_speculative_config() -> None:
    settings = llama_settings().model_copy(update={"engine": "vllm"})
    edited = apply_edits(settings, {"spec_method": "ngram", "redundant_experts": "0"})
    assert edited.flags["speculative-config"] == '{"method": "ngram", "num_speculative_tokens": 1}'


@pytest.mark.parametrize(
    ("texts", "message"),
    [
        ({"host_kv_gib": "lots"}, "host KV GiB: needs a size in GiB above 0"),
        ({"redundant_experts": "-2"}, "redundant experts: must be at least 0"),
        # an operator trial read '--max-loras-per-batch: expected a whole number ≥ 1' (the engine flag's check,
        # the field not marked): the field's own check names it
        ({"lora_slots": "-1"}, r"LoRA slots: must be at least 1 \(got -1\)"),
        ({"lora_slots": "0"}, r"LoRA slots: must be at least 1 \(got 0\)"),
        # the engine's refusal of the flag the field wrote: named by the field's label, the flag kept in the words
        ({"spec_method": "WARP9"}, "speculative: --speculative-algorithm: must be one of"),
    ],
)
def test_bad_deployment_text_names_its_field(texts: dict[str, str], message: str) -> None:
    with pytest.raises(InputError, match=message):
        apply_edits(llama_settings(), texts)


@pytest.mark.parametrize(
    ("engine", "flag"),
    [
        ("vllm", "--speculative-config"),
        ("lmdeploy", "--speculative-algorithm"),
        # TensorRT-LLM's field was dropped (with_setup did not write it): 'foo' planned as no speculation at all
        ("trtllm", "--speculative_config.decoding_type"),
    ],
)
def test_an_unknown_method_marks_the_speculative_field_on_every_engine(engine: str, flag: str) -> None:
    # session 46, G3: the planner accepted 'foo' for all three; SGLang already refused it (the case above)
    settings = llama_settings().model_copy(update={"engine": engine, "engine_version": None})
    with pytest.raises(InputError, match=f"speculative: {flag}: must be one of .*got 'foo'") as caught:
        apply_edits(settings, {"spec_method": "foo"})
    assert caught.value.field == "speculative"


def test_lmdeploy_before_speculative_decoding_reads_as_a_sentence() -> None:
    # session 46, F5: the planner said '✗ speculative: --speculative-algorithm this release has no speculative
    # decoding' (flag and refusal run together). LMDeploy 0.10.0's `lmdeploy serve api_server` has no
    # --speculative-algorithm at all (lmdeploy/cli/utils.py add_spec_group appears in v0.11.0), so any method is
    # refused; the words keep the flag's colon, as `kvtop plan ... --speculative-algorithm foo` prints them.
    settings = llama_settings().model_copy(update={"engine": "lmdeploy", "engine_version": "0.10.0"})
    with pytest.raises(InputError) as caught:
        apply_edits(settings, {"spec_method": "foo"})
    assert str(caught.value.detail).startswith(
        "--speculative-algorithm: this release has no speculative decoding (got 'foo'; release 0.10.0)"
    ), caught.value.detail
    assert caught.value.field == "speculative"


def test_a_known_method_for_tensorrt_llm_is_written_as_its_decoding_type() -> None:
    settings = llama_settings().model_copy(update={"engine": "trtllm", "engine_version": None})
    edited = apply_edits(settings, {"spec_method": "Eagle3"})
    assert edited.flags["speculative_config.decoding_type"] == "Eagle3"
