"""vLLM's pooling runner (kvtop/domain/engines/vllm/pooling.py), read in the v0.11.0 wheel.

Expected figures are vLLM 0.11.0's code's arithmetic by hand, never the function's output: profile_run runs the
forward over max_num_batched_tokens and then `_dummy_pooler_run` instead of the sampler
(v1/worker/gpu_model_runner.py:3388-3396), so the peak is the forward's (the MLP's gate-up output and activation,
tokens × (3 × intermediate + hidden) × 2 B, beside the residual and normed input, 2 × tokens × hidden × 2 B) where that
is larger than the pooler's float32 rows (tokens × hidden × 4 B beside the forward's output, tokens × hidden × 2 B).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.calibration import FITS
from kvtop.domain.engines.vllm.calibration_activation import activation_estimate
from kvtop.domain.engines.vllm.pooling_runner import pooling_runner
from kvtop.domain.engines.vllm.v0_profile import held_forward_bytes
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import check_parallel, parse_flags
from kvtop.domain.layout import ParallelLayout
from kvtop.sources.hub import load_config_file
from tests.data_paths import CONFIGS

QWEN3_06B = CONFIGS.parent / "calibration" / "configs" / "Qwen--Qwen3-0.6B.json"  # tied LM head: hidden 1,024, intermediate 3,072
QWEN3_32B = CONFIGS / "Qwen--Qwen3-32B.json"  # an untied LM head
QWEN3_VL_30B = CONFIGS / "heldout" / "Qwen--Qwen3-VL-30B-A3B-Instruct.json"  # multimodal, an untied head


def _inputs(config: Path, version: str, *flags: str) -> CalibrationInputs:
    model = load_config_file(config)
    return CalibrationInputs(
        model=model, settings=parse_flags("vllm", [*flags, "--engine-version", version]), layout=ParallelLayout(tp=1),
        gpu_name="H100", gpu_total_bytes=gpu_total_bytes("H100"), version=ResolvedVersion(text=version),
        weights_bytes=0, context_length=8192,
    )  # fmt: skip


def test_a_pooling_runner_peaks_at_its_forward_not_a_sampler() -> None:
    """Qwen3-0.6B at 8,192 tokens: 8,192 × (3 × 3,072 + 1,024) × 2 + 2 × 8,192 × 1,024 × 2 = 201,326,592 B of forward,
    above the pooler's 8,192 × 1,024 × (4 + 2) = 50,331,648; the generating runner's peak adds 1,024 seqs' logits."""
    flags = ("--max-num-batched-tokens", "8192", "--max-num-seqs", "1024")
    pooled = activation_estimate(_inputs(QWEN3_06B, "0.11.0", "--runner", "pooling", *flags), FITS)
    generated = activation_estimate(_inputs(QWEN3_06B, "0.11.0", *flags), FITS)
    assert pooled.source == "assumed" and "pooling runner" in pooled.basis
    assert pooled.bytes >= 201_326_592
    assert generated.bytes - pooled.bytes > 1024 * 151_936 * 4  # at least one float32 copy of the logits


def test_the_older_task_spelling_asks_for_the_same_runner() -> None:
    """`--task embed` (deprecated at v0.11.0, config/model.py:473-514: converted to runner pooling, convert embed)."""
    flags = ("--max-num-batched-tokens", "8192")
    task = activation_estimate(_inputs(QWEN3_06B, "0.11.0", "--task", "embed", *flags), FITS)
    runner = activation_estimate(_inputs(QWEN3_06B, "0.11.0", "--runner", "pooling", *flags), FITS)
    assert task.bytes == runner.bytes


@pytest.mark.parametrize(("version", "flags", "says"), [
    ("0.13.0", ("--runner", "pooling", "--max-num-batched-tokens", "8192"), "not modelled"),
    ("0.11.0", ("--runner", "pooling"), "--max-num-batched-tokens"),
    ("0.11.0", ("--runner", "draft"), "draft runner"),
    ("0.11.0", ("--convert", "embed", "--max-num-batched-tokens", "8192"), "without `--runner pooling`"),
])  # fmt: skip
def test_what_it_does_not_plan_is_refused_by_name(version: str, flags: tuple[str, ...], says: str) -> None:
    with pytest.raises(InputError, match=says):
        activation_estimate(_inputs(QWEN3_06B, version, *flags), FITS)


def test_an_untied_head_the_adapter_deletes_is_refused() -> None:
    """`_create_pooling_model_cls` deletes `lm_head` (model_executor/models/adapters.py:190-192 at v0.11.0)."""
    with pytest.raises(InputError, match="untied LM head"):
        activation_estimate(_inputs(QWEN3_32B, "0.11.0", "--runner", "pooling", "--max-num-batched-tokens", "8192"),
                            FITS)  # fmt: skip


@pytest.mark.parametrize(("version", "flags", "says"), [
    ("0.10.0", ("--runner", "pooling"), "has no --runner"),
    ("0.13.0", ("--task", "embed"), "has no --task"),
    ("0.11.0", ("--runner", "pool"), "one of auto, generate, pooling, draft"),
])  # fmt: skip
def test_the_release_and_argparse_refuse_as_vllm_does(version: str, flags: tuple[str, ...], says: str) -> None:
    with pytest.raises(InputError, match=says):
        check_parallel(parse_flags("vllm", [*flags, "--engine-version", version]))


def test_argparse_choices_are_refused_without_a_release() -> None:
    """`--runner bogus` with no --engine-version: check_parallel skips the release's checks (none named), yet vLLM's
    argparse refuses the value at any release (config/model.py:61-77 at v0.11.0: RunnerOption), so the plan does."""
    settings = parse_flags("vllm", ["--runner", "bogus"])
    check_parallel(settings)  # no release: the span checks wait for the plan's resolved release
    inputs = _inputs(QWEN3_06B, "0.11.0").model_copy(update={"settings": settings})
    with pytest.raises(InputError, match="'bogus': one of auto, generate, pooling, draft"):
        activation_estimate(inputs, FITS)


def _as(architecture: str, version: str, *flags: str) -> CalibrationInputs:
    """Qwen3-0.6B's shapes (a tied head) under another class name, as config.json's `architectures` would give it."""
    inputs = _inputs(QWEN3_06B, version, *flags)
    assert inputs.model is not None
    return inputs.model_copy(update={"model": inputs.model.model_copy(update={"architecture": architecture})})


@pytest.mark.parametrize(("architecture", "pooling"), [
    ("BertModel", True),  # registered, BertEmbeddingModel.is_pooling_model (bert.py, registry.py:161)
    ("Qwen2ForRewardModel", True),  # registered, qwen2_rm.py:29
    ("RobertaForMaskedLM", True),  # registered as RobertaEmbeddingModel: no pooling suffix, a pooling class
    ("Gemma3TextModel", True),  # registered as gemma3.Gemma3Model: neither pooling nor compute_logits → `*Model`
    ("GteNewModel", True),  # bert_with_rope.GteNewModel: no is_pooling_model of its own → `*Model`
    ("Qwen3ForSequenceClassification", True),  # not registered at v0.11.0: the suffix
    ("LlamaModel", False),  # registered as llama.LlamaForCausalLM, which generates (registry.py:171)
    ("Qwen2Model", False),  # registered as qwen2.Qwen2ForCausalLM
    ("Qwen3ForCausalLM", False), ("MiniCPMV", False),  # a generating suffix; none (the default, generate)
])  # fmt: skip
def test_runner_auto_resolves_the_pooling_classes_as_v0_11_0_does(architecture: str, pooling: bool) -> None:
    """`_get_default_runner_type` (config/model.py:745-767 at v0.11.0), sentence-transformers files aside."""
    assert pooling_runner({}, _as(architecture, "0.11.0").model, ResolvedVersion(text="0.11.0")) is pooling
    assert not pooling_runner({"runner": "generate"}, _as(architecture, "0.11.0").model, ResolvedVersion(text="0.11.0"))


def test_runner_auto_on_a_pooling_class_plans_the_pooling_runner() -> None:
    """The default runner on `Qwen3ForSequenceClassification` is the one `--runner pooling` asks for, at v0.11.0."""
    flags = ("--max-num-batched-tokens", "8192")
    auto = activation_estimate(_as("Qwen3ForSequenceClassification", "0.11.0", *flags), FITS)
    asked = activation_estimate(_as("Qwen3ForSequenceClassification", "0.11.0", "--runner", "pooling", *flags), FITS)
    generating = activation_estimate(_as("Qwen3ForCausalLM", "0.11.0", *flags), FITS)
    assert auto == asked and "pooling runner" in auto.basis and "pooling runner" not in generating.basis


def test_runner_auto_where_not_read_is_refused_by_name() -> None:
    """v0.13.0's pooling runner is not read: a pooling suffix is refused, naming the class; a bare `*Model` name, which
    later releases also register generating classes under (MossAudioModel at v0.33.0), keeps the generating plan."""
    with pytest.raises(UnsupportedModelError, match="`--runner auto` on Qwen2ForRewardModel"):
        activation_estimate(_as("Qwen2ForRewardModel", "0.13.0", "--max-num-batched-tokens", "8192"), FITS)
    assert not pooling_runner({}, _as("GteNewModel", "0.13.0").model, ResolvedVersion(text="0.13.0"))


@pytest.mark.parametrize("task", ["transcription", "draft"])
def test_the_other_task_values_plan_as_vllm_resolves_them(task: str) -> None:
    """TaskOption at v0.11.0 (config/model.py:64-65) takes `transcription` and `draft`: transcription is a generate
    task (_RUNNER_TASKS, :74-78), the generating runner; draft is in no list, so the runner stays auto (:496, :509):
    on Qwen3ForCausalLM both plan as the generating launch does."""
    flags = ("--max-num-batched-tokens", "8192")
    check_parallel(parse_flags("vllm", ["--task", task, "--engine-version", "0.11.0"]))
    asked = activation_estimate(_inputs(QWEN3_06B, "0.11.0", "--task", task, *flags), FITS)
    assert asked.bytes == activation_estimate(_inputs(QWEN3_06B, "0.11.0", *flags), FITS).bytes


def test_task_draft_on_a_pooling_class_resolves_as_auto() -> None:
    """--task draft leaves the runner auto (config/model.py:509 at v0.11.0): BertModel, registered pooling, pools."""
    assert pooling_runner({"task": "draft"}, load_config_file(QWEN3_06B).model_copy(update={"architecture": "BertModel"}),
                          ResolvedVersion(text="0.11.0"))  # fmt: skip


def test_the_other_task_values_where_not_read_are_refused_by_name() -> None:
    with pytest.raises(UnsupportedModelError, match="--task transcription is not modelled"):
        activation_estimate(_inputs(QWEN3_06B, "0.10.2", "--task", "transcription"), FITS)


@pytest.mark.parametrize(("architecture", "refused"), [
    ("Qwen3VLMoeForConditionalGeneration", False),  # its head in language_model: not the adapter's `self.lm_head`
    ("Idefics3ForConditionalGeneration", True),  # idefics3.py: `self.lm_head` on the class itself (v0.11.0)
])  # fmt: skip
def test_a_multimodal_head_is_deleted_only_where_the_class_holds_it(architecture: str, refused: bool) -> None:
    """The adapter deletes `lm_head` only where `hasattr(self, "lm_head")` (adapters.py:190-192 at v0.11.0)."""
    inputs = _inputs(QWEN3_VL_30B, "0.11.0", "--runner", "pooling", "--max-num-batched-tokens", "8192")
    assert inputs.model is not None and inputs.model.multimodal and not inputs.model.tie_word_embeddings
    inputs = inputs.model_copy(update={"model": inputs.model.model_copy(update={"architecture": architecture})})
    if refused:
        with pytest.raises(UnsupportedModelError, match="untied LM head"):
            activation_estimate(inputs, FITS)
    else:
        assert activation_estimate(inputs, FITS).bytes > 0


def test_the_forward_s_count_is_the_mlp_transient_beside_two_held_rows() -> None:
    """Qwen3-0.6B at 8,192 tokens: 8,192 × (3 × 3,072 + 1,024) × 2 B of MLP transient and 2 × 8,192 × 1,024 × 2 B
    held (qwen2.py:248-250 at v0.8.5.post1) = 201,326,592 B: the one count the pooling and generating floors use."""
    assert held_forward_bytes(load_config_file(QWEN3_06B), ParallelLayout(tp=1), 8192) == 201_326_592


def test_a_later_pipeline_stage_s_buffer_joins_the_pooling_peak() -> None:
    """At PP 2 V1's `_dummy_run` keeps the hidden states and residual a later stage receives, whatever the runner
    (v1/worker/gpu_model_runner.py:3112-3116 at v0.11.0): 2 × 8,192 tokens × 1,024 × 2 B = 33,554,432 B."""
    flags = ("--runner", "pooling", "--max-num-batched-tokens", "8192")
    one = activation_estimate(_inputs(QWEN3_06B, "0.11.0", *flags), FITS)
    staged = _inputs(QWEN3_06B, "0.11.0", *flags).model_copy(update={"layout": ParallelLayout(tp=1, pp=2)})
    assert activation_estimate(staged, FITS).bytes - one.bytes == 33_554_432


def test_v0_10_2_plans_the_pooling_runner_as_v0_11_0_does() -> None:
    """v0.10.2's profile_run pooler branch, _dummy_pooler_run, pooler.py's ALL pooling, the adapter and the head dtype are
    v0.11.0's functions (pooling.POOLING_ERAS): the same forward floor (8,192 × (3 × 3,072 + 1,024) × 2 + 2 × 8,192 ×
    1,024 × 2 = 201,326,592 B); v0.11.1 split `encode` into token_embed (with the ST projector, pooler.py:623-643):
    not modelled there."""
    flags = ("--runner", "pooling", "--max-num-batched-tokens", "8192", "--max-num-seqs", "1024")
    pooled = activation_estimate(_inputs(QWEN3_06B, "0.10.2", *flags), FITS)
    assert "pooling runner" in pooled.basis and pooled.bytes >= 201_326_592
    with pytest.raises(UnsupportedModelError, match="not modelled"):
        activation_estimate(_inputs(QWEN3_06B, "0.11.1", *flags), FITS)


def test_v0_10_2_s_v0_pooling_runner_is_not_modelled() -> None:
    """VLLM_USE_V1=0 at v0.10.2 starts V0 (engine/arg_utils.py create_engine_config), whose pooling runner was not read."""
    inputs = _inputs(QWEN3_06B, "0.10.2", "--runner", "pooling", "--max-num-batched-tokens", "8192")
    v0 = inputs.model_copy(update={"settings": inputs.settings.model_copy(
        update={"flags": {**inputs.settings.flags, "VLLM_USE_V1": "0"}})})  # fmt: skip
    with pytest.raises(UnsupportedModelError, match="under V0"):
        activation_estimate(v0, FITS)


def test_bart_model_generates_at_v0_10_2() -> None:
    """v0.10.2 registers BartModel as a text-generation class (registry.py:149): `--runner auto` generates, though its
    name ends in the pooling suffix `Model`."""
    assert not pooling_runner({}, _as("BartModel", "0.10.2").model, ResolvedVersion(text="0.10.2"))
    assert pooling_runner({}, _as("GteNewModel", "0.10.2").model, ResolvedVersion(text="0.10.2"))  # the suffix
