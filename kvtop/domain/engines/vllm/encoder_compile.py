"""What a multimodal model's V2 profile holds at its peak, below which the compile's figure hides (v2_graphs.py).

`v2_graphs.compile_above_peak` charges the V1 graph figure that stands for torch.compile's cold compile only above
V2's counted peak: the compile ends before the compiled forward allocates (piecewise_backend.py:189-190, decorators.py
:674-681 at v0.29.0) and the budget holds one peak over the profile (utils/mem_utils.py:317-326 at v0.28.0). A
multimodal model's V2 `profile_run` does the same after its encoder profile (v1/worker/gpu/model_runner.py:790-828
at v0.28.0, :851-883 at v0.29.0, :938-970 at v0.30.0): `profile_encoder_cache` runs the tower on the dummy batch and keeps its outputs in the encoder cache,
then `_dummy_run(self.max_num_tokens, skip_attn=True, is_profile=True)` compiles and runs the text model, then
`_dummy_sampler_run`, and only then `reset_encoder_cache`. So the compile's transient sits on what the encoder
profile keeps, as the text run does; and the tower's own forward, before both, is a second peak it may hide under:

    peak = max(encoder forward, kept + compile, kept + text run)

kvtop's activation term charges the larger of the encoder forward and kept + text run where it counts them
(`EncoderProfile.peak`), so the compile is charged above max(text run, encoder forward − kept) — the counted parts
only: the text run as V2's code counts it (`v2_profile.launch_stage_peaks`, whatever the encoder), the encoder's
forward where `encoder_profile.py` counts it (Qwen3.5 from v0.17.0) and the activation term charges it (one pipeline
stage: the tower runs on the first, `calibration_activation._sampler_floor` counts it at PP 1 only). Before, `profile_peak` read V2's count only
where no encoder runs, so a multimodal V2 start was charged the whole figure on top of its peak.

Read at v0.28.0 (model_runner.py:790-828), v0.29.0 and v0.30.0 (the same `profile_run`, h_src wheels). Gemma-4
(gemma4_mm.py:254-281 at v0.28.0, :259-286 at v0.29.0, :260-287 at v0.30.0) profiles its video modality, 32 frames ×
(70 soft tokens + 2 + 6) = 2,496 tokens (the T4 log's 'Encoder cache will be initialized with a budget of 2496
tokens'), through its vision tower: not a family `encoder_profile.py` counts, so only the text run is read there.
"""

from __future__ import annotations

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.vllm.encoder_profile import encoder_profile
from kvtop.domain.engines.vllm.profile_run import lora
from kvtop.domain.engines.vllm.runner_eras import runs_v2
from kvtop.domain.engines.vllm.skip_mm_profiling import encoder_profiled
from kvtop.domain.engines.vllm.v2_profile import V2_SAMPLER_COUNTED, launch_stage_peaks
from kvtop.domain.wording import gib


def multimodal_profile_peak(inputs: CalibrationInputs) -> tuple[int, str] | None:
    """(bytes, why) of a multimodal model's V2 profile peak the compile's figure hides under, beside what the
    encoder profile keeps (module docstring); None where V2 does not run, no encoder is profiled, the release's V2
    sampler is not counted (`V2_SAMPLER_COUNTED`) or LoRA's buffers join the profile."""
    model = inputs.model
    if model is None or lora(inputs) or not runs_v2(inputs.version, model, inputs.settings):
        return None
    if not encoder_profiled(model, inputs.settings, inputs.version, inputs.gpu_name):
        return None
    if not V2_SAMPLER_COUNTED.at(inputs.version):
        return None
    peaks, _ = launch_stage_peaks(inputs, model)
    text = peaks.last
    encoder = encoder_profile(inputs)
    # the tower's forward hides it only where the activation term charges that forward (PP 1, as it counts the encoder)
    counted = encoder is not None and encoder.forward_bytes > 0 and inputs.layout.pp == 1
    before = max(encoder.forward_bytes - encoder.kept_bytes, 0) if encoder is not None and counted else 0
    if before > text:
        return before, (f"the encoder's forward before it less what the encoder profile keeps ({gib(before)}: "
                        "model_runner.py:790-828 at v0.28.0, :851-883 at v0.29.0)")  # fmt: skip
    return text, (f"V2's text run as counted, on what the encoder profile keeps ({gib(text)}: model_runner.py:813-823 "
                  "at v0.28.0, :868-877 at v0.29.0)")  # fmt: skip
