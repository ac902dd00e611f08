"""engine-failures (vLLM runner): the failures of vLLM's own code on what a config.json holds, which every launch of
it meets on any device, told from a harness gap (engine_failures.py).

The runner counts an AttributeError or TypeError raised in vLLM's code where a stand-in may be the cause as a harness
error. The ones listed here were each read in vLLM 0.33.0's source with its pinned transformers (5.20.2): the value
that fails comes from the config class transformers builds from the config.json, never from a stand-in, so the
launch's answer is a refusal with its reason. Each entry names the innermost vLLM file (under vllm/) of the
traceback, a vLLM function on it and the start of the exception's first line.

Imported inside the engine's venv (standard library only).
"""

from __future__ import annotations

if __package__:  # imported as benchmarks.engine_diff.… (kvtop's tests)
    from .engine_failures import Failure, known_failure
else:  # by name beside the runner, inside the engine's venv
    from engine_failures import Failure, known_failure

VLLM_SOURCE = "/site-packages/vllm/"
CANNOT = "vLLM cannot build this config on any device:"

# (innermost file under vllm/, a function of vLLM's on the traceback, the exception's first line) -> what vLLM reads
# and why it fails there (0.33.0)
ENGINE_FAILURES: dict[Failure, str] = {
    ("model_executor/models/step_vl.py", "__init__", "'Step3p7VisionConfig' object has no attribute"): (
        "step_vl.py:361-364 (PerceptionEncoder.__init__) reads the vision config's output_dim or width, heads and "
        "layers; transformers 5.20.2's Step3p7VisionConfig renames width, heads, layers on load and has no "
        "output_dim, so no config.json builds"
        # Step3p7VisionConfig.__post_init__ pops width, layers and heads into hidden_size, num_hidden_layers and
        # num_attention_heads (configuration_step3p7.py); models/step3p7.py builds the PerceptionEncoder for every
        # Step3p7ForConditionalGeneration
    ),
    ("model_executor/models/ernie45_vl.py", "__init__", "'Ernie4_5_VLMoeVisionConfig' object has no attribute 'embed_dim'"): (
        "ernie45_vl.py:376 (Ernie4_5_VisionTransformer.__init__) reads the vision config of ERNIE-4.5-VL's own "
        "configuration code (DFNRopeVisionTransformerConfig: embed_dim, mlp_ratio); transformers 5.20.2's converted "
        "Ernie4_5_VLMoeConfig (model_type ernie4_5_vl_moe) names them hidden_size and intermediate_size, so no "
        "config.json in the transformers format builds"
    ),
    ("model_executor/models/bailing_moe_v3.py", "__init__", "'BailingHybridConfig' object has no attribute 'use_bias'"): (
        "bailing_moe_v3.py:435 (BailingMoeV3MLP.__init__) reads config.use_bias, which transformers 5.20.2's "
        "BailingHybridConfig (vLLM's reading of model_type bailing_hybrid) does not define, so a Ling-3 config that "
        "does not state use_bias does not build"
    ),
    ("model_executor/models/voxtral.py", "__init__", "'VoxtralEncoderConfig' object has no attribute 'downsample_factor'"): (
        "voxtral.py:327 (VoxtralForConditionalGeneration.__init__) reads audio_config.downsample_factor, which "
        "only vLLM's Mistral-format parser writes (transformers_utils/configs/mistral.py, from params.json's "
        "whisper_model_args); transformers 5.20.2's VoxtralEncoderConfig has no such field, so no config.json "
        "builds (vLLM serves Voxtral with --config-format mistral)"
    ),
}


def classify(exc: BaseException, case: dict[str, str]) -> tuple[str, str] | None:
    """(status, message) for a failure this module knows, else None (the runner's own classification)."""
    why = known_failure(exc, VLLM_SOURCE, ENGINE_FAILURES)
    return ("refused", f"{CANNOT} {why}") if why is not None else None
