"""What vLLM's multimodal rotary embedding and Qwen3-VL's deepstack buffers add to the load's measure beside the
book (the calibration's weights term adds them through `weights_held.held_beside`; docs/engines/vllm.md §10).

The multimodal rope (`MRotaryEmbedding`, built by `get_rope` wherever the language model's rope block states
`mrope_section`: v0.11.0 rotary_embedding/__init__.py:97-105) keeps its cos/sin cache `max_position_embeddings × 4`
positions long ("In Qwen2.5-VL, the maximum index value is related to the duration of the input video"): v0.7.2
rotary_embedding.py:779, v0.8.0 :870, v0.8.5.post1 :946, v0.9.2 :1038; v0.11.0 rotary_embedding/mrope.py:241, v0.12.0
:237, v0.19.0 :238; v0.7.1's MRotaryEmbedding keeps the positions as given. From v0.32.0 the factor is a parameter
(`positions_factor`, mrope.py:351 at v0.33.0), 4 by default, and Qwen3-VL's, Qwen3-VL-MoE's and Qwen3.5's decoder layers
pass 1 unless video pruning is on (qwen3_vl.py:1818-1831 `mrope_positions_factor`, qwen3_vl_moe.py:77, qwen3_5.py:165;
read at v0.32.0 and v0.33.0, absent at v0.30.0; `--video-pruning-rate` is a flag kvtop names as not modelled).
Qwen3-VL-30B-A3B's 262,144 positions × 128 × 2 B: 64 MiB as the plain rope, 256 MiB as vLLM builds it.

Qwen3-VL's deepstack buffers (`Qwen3VLForConditionalGeneration.__init__`, v0.11.0 qwen3_vl.py:1155-1161,
qwen3_vl_moe.py:349-353; v0.12.0 qwen3_vl.py:1269-1275, qwen3_vl_moe.py:457-461; v0.19.0 qwen3_vl.py:1503-1509;
v0.33.0 :2031-2037): one `torch.zeros(max_num_batched_tokens, text hidden_size)` per deepstack level, made under the
loader's device and dtype, so on the GPU in the model's dtype inside 'Model loading took', on every rank.

Judged on the weights vLLM printed: Qwen3-VL-30B-A3B at TP 2, v0.12.0 (8,192 batched tokens): the book 29.02 GiB,
+ 0.19 (the rope × 4) + 3 × 8,192 × 2,048 × 2 B (0.09) = 29.30 against 29.3115 printed; Qwen3-VL-8B at TP 1,
v0.19.0: 16.39 + 0.19 (the rope × 4) + 3 × 8,192 × 4,096 × 2 B (0.19) = 16.77 against 16.78 printed (both configs'
`rope_scaling` as published: tests/data/configs/heldout/SOURCES.md).
"""

from __future__ import annotations

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.versions import Era, Eras
from kvtop.domain.engines.vllm.encoder_profile import DEEPSTACK_LEVELS, QWEN3_VL_ERAS, QWEN3_VL_TOWERS
from kvtop.domain.engines.vllm.profile_run import batch_limits

MROPE_FACTOR_ERAS: Eras[int] = Eras((
    Era("", 1, "v0.7.1 rotary_embedding.py MRotaryEmbedding: the positions as given"),
    Era("0.7.2", 4, "v0.7.2 rotary_embedding.py:779 (v0.9.2 :1038, v0.11.0 rotary_embedding/mrope.py:241, v0.19.0 "
                    ":238): cache_max_position_num = max_position_embeddings * 4"),
))  # fmt: skip
# the classes whose decoder layers pass positions_factor 1 (without video pruning)
QWEN3_VL_ROPE_CLASSES = frozenset({
    "Qwen3VLForConditionalGeneration", "Qwen3VLMoeForConditionalGeneration", "Qwen3_5ForConditionalGeneration",
    "Qwen3_5MoeForConditionalGeneration", "Qwen3_5ForCausalLM", "Qwen3_5MoeForCausalLM",
})  # fmt: skip
FACTOR_ONE_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset(), "every MRoPE model × 4 (read at v0.30.0)"),
    Era("0.32.0", QWEN3_VL_ROPE_CLASSES, "v0.32.0 qwen3_vl.py:1818-1831 mrope_positions_factor: 1 without video "
                                         "pruning (read at v0.32.0 and v0.33.0; v0.31.x not read)"),
))  # fmt: skip


def mrope_positions_factor(inputs: CalibrationInputs) -> int:
    """How many times the config's positions the rope's cache holds: 1 for a model without `mrope_section`, else
    vLLM's MRotaryEmbedding's factor at the launch's release and class (module docstring)."""
    model = inputs.model
    if model is None or not model.mrope:
        return 1
    if model.architecture in FACTOR_ONE_ERAS.at(inputs.version):
        return 1
    return MROPE_FACTOR_ERAS.at(inputs.version)


def deepstack_buffers(inputs: CalibrationInputs) -> tuple[int, str] | None:
    """(bytes, why) of Qwen3-VL's deepstack buffers: levels × max_num_batched_tokens × the text's hidden size in the
    model's dtype, on every rank (module docstring); None for another model or a release before Qwen3-VL."""
    model = inputs.model
    if model is None or model.tower is None or model.tower.config_class not in QWEN3_VL_TOWERS:
        return None
    if not QWEN3_VL_ERAS.at(inputs.version):
        return None
    tokens = batch_limits(inputs)[0]
    size = DEEPSTACK_LEVELS * tokens * model.hidden_size * model.dtype_bytes
    return size, (
        f"Qwen3-VL's deepstack buffers ({DEEPSTACK_LEVELS} × {tokens:,} batched tokens × {model.hidden_size:,} × "
        f"{model.dtype_bytes} B, on every rank: qwen3_vl.py Qwen3VLForConditionalGeneration.__init__)"
    )
