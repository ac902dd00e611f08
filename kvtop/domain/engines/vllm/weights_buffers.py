"""What vLLM's multimodal rotary embedding and Qwen3-VL's deepstack buffers add to the load's measure beside the
book (the calibration's weights term adds them through `weights_held.held_beside`; docs/engines/vllm.md §10).

The multimodal rope (`MRotaryEmbedding`) is what `get_rope` builds for a rope block stating `mrope_section` of type
`default` (the legacy `mrope` is renamed so: v0.9.2 transformers_utils/config.py:248-251) from v0.7.2 (v0.7.2
rotary_embedding.py:1037-1039, v0.9.2 :1931-1941, v0.11.0 rotary_embedding/__init__.py:96-97), of type `yarn` only
from v0.11.0 (:156-167; v0.9.2 :1979-1993 and v0.10.2 __init__.py:144 build a plain YaRN rope even with
`mrope_section`), of `openpangu` from v0.16.0 (MRotaryEmbeddingInterleaved, a subclass) and `bailing_mrope` from
v0.30.0 (BailingMRotaryEmbedding, a subclass): `MROPE_TYPES_ERAS`. The block is the one in effect: a launch's
`--rope-scaling` / `--hf-overrides` rope (rope_override.py `launch_ropes`) replaces config.json's, so an override
without `mrope_section` builds no multimodal rope. Its cos/sin cache is `max_position_embeddings × 4` positions long
("In Qwen2.5-VL, the maximum index value is related to the duration of the input video"): v0.7.2
rotary_embedding.py:779, v0.8.0 :870, v0.8.5.post1 :946, v0.9.2 :1038; v0.11.0 rotary_embedding/mrope.py:241, v0.12.0
:237, v0.19.0 :238; v0.7.1's MRotaryEmbedding keeps the positions as given. A YaRN one is built over the block's
`original_max_position_embeddings` and keeps YaRN's cache, × factor: original × 4 × factor (v0.11.0 mrope.py:241,
:255-258, yarn_scaling_rope.py:62), 4 × the length the override derives (rope_override.py). From v0.32.0 the 4 is a
parameter (`positions_factor`, mrope.py:351 at v0.33.0), 4 by default, and the decoder layers of Qwen3-VL,
Qwen3-VL-MoE and Qwen3.5 (and the registry's classes built on them: `FACTOR_ONE_ERAS`) pass 1 unless video pruning is on
(qwen3_vl.py:1818-1831 `mrope_positions_factor`, qwen3_vl_moe.py:77, qwen3_5.py:165; read at v0.32.0 and v0.33.0,
absent at v0.30.0; `--video-pruning-rate` is a flag kvtop names as not modelled).
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
from kvtop.domain.engines.vllm.encoder_dummies import DEEPSTACK_LEVELS
from kvtop.domain.engines.vllm.encoder_profile import QWEN3_VL_ERAS, QWEN3_VL_TOWERS
from kvtop.domain.engines.vllm.profile_run import batch_limits
from kvtop.domain.engines.vllm.rope_override import launch_ropes

MROPE_FACTOR_ERAS: Eras[int] = Eras((
    Era("", 1, "v0.7.1 rotary_embedding.py MRotaryEmbedding: the positions as given"),
    Era("0.7.2", 4, "v0.7.2 rotary_embedding.py:779 (v0.9.2 :1038, v0.11.0 rotary_embedding/mrope.py:241, v0.19.0 "
                    ":238): cache_max_position_num = max_position_embeddings * 4"),
))  # fmt: skip
# the rope types for which get_rope builds MRotaryEmbedding (or a subclass over its cache) where the block states
# mrope_section
MROPE_TYPES_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset({"default"}), "v0.7.2 rotary_embedding.py:1037-1039, v0.9.2 :1931-1941, v0.10.2 "
                                    "rotary_embedding/__init__.py:96-97: 'default' only; yarn builds YaRNScalingRotary"
                                    "Embedding even with mrope_section (v0.9.2 :1979-1993, v0.10.2 :144)"),
    Era("0.11.0", frozenset({"default", "yarn"}), "v0.11.0 rotary_embedding/__init__.py:96-97 and :156-167: yarn with "
                                                  "mrope_section builds MRotaryEmbedding"),
    Era("0.16.0", frozenset({"default", "yarn", "openpangu"}), "v0.16.0 rotary_embedding/__init__.py:310: openpangu "
                                                               "builds MRotaryEmbeddingInterleaved(MRotaryEmbedding)"),
    Era("0.30.0", frozenset({"default", "yarn", "openpangu", "bailing_mrope"}),
        "v0.30.0 rotary_embedding/__init__.py:100: bailing_mrope builds BailingMRotaryEmbedding(MRotaryEmbedding)"),
))  # fmt: skip
LEGACY_DEFAULT = frozenset({"", "mrope"})  # patch_rope_scaling renames 'mrope' to 'default' (v0.9.2 config.py:248-251)
# the registry's classes whose decoder layers pass positions_factor 1 (without video pruning): Qwen3-VL's,
# Qwen3-VL-MoE's and Qwen3.5's, and those built on them (colqwen3.py ColQwen3Model(Qwen3VLForConditionalGeneration);
# ColQwen3_5, InternS2Preview, clef_flash, d3 on Qwen3.5's classes; minicpmv4_6.py's language model Qwen3_5ForCausalLM;
# Qwen3.5's MTP drafters on Qwen3_5DecoderLayer). Not InternS1-Pro, InternS2-Mobius, Cosmos3-Edge or Qwen3-Omni: their
# own layers call get_rope with the default 4 (v0.33.0 interns1_pro.py:317, interns2_mobius.py:203, cosmos3_edge.py:378,
# qwen3_omni_moe_thinker.py's Qwen3MoeLLMModel)
_FACTOR_ONE_V0_32 = (
    "Qwen3VLForConditionalGeneration", "Qwen3VLMoeForConditionalGeneration", "Qwen3_5ForConditionalGeneration",
    "Qwen3_5MoeForConditionalGeneration", "Qwen3_5ForCausalLM", "Qwen3_5MoeForCausalLM", "ColQwen3",
    "OpsColQwen3Model", "Qwen3VLNemotronEmbedModel", "ColQwen3_5", "InternS2PreviewForConditionalGeneration",
    "MiniCPMV4_6ForConditionalGeneration", "Qwen3_5MTP", "Qwen3_5MoeMTP",
)  # fmt: skip
_FACTOR_ONE_V0_33 = (*_FACTOR_ONE_V0_32, "ClefFlashForJointSchema", "D3ForSequenceClassification")
FACTOR_ONE_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset(), "every MRoPE model × 4 (read at v0.30.0)"),
    Era("0.32.0", frozenset(_FACTOR_ONE_V0_32), "v0.32.0 qwen3_vl.py:1818-1831 mrope_positions_factor: 1 without "
                                                "video pruning (registry.py's classes over these layers; v0.31.x not "
                                                "read)"),
    Era("0.33.0", frozenset(_FACTOR_ONE_V0_33), "v0.33.0 the same, and clef_flash.py, d3.py's Qwen3.5 subclasses"),
))  # fmt: skip


def mrope_in_effect(inputs: CalibrationInputs) -> bool:
    """Whether vLLM builds a multimodal rope at this launch: a rope block in effect (the launch's override where it
    gives one, else config.json's) states `mrope_section` under a type `MROPE_TYPES_ERAS` builds it for."""
    model = inputs.model
    if model is None:
        return False
    given = launch_ropes(inputs.settings, inputs.version, model)
    if given is None:
        blocks: tuple[tuple[object, bool], ...] = ((model.rope_type, model.mrope),)
    else:
        blocks = tuple((rope.get("rope_type", rope.get("type", "")), "mrope_section" in rope) for rope in given[0])
    types = MROPE_TYPES_ERAS.at(inputs.version)
    return any(mrope and ("default" if kind in LEGACY_DEFAULT else kind) in types for kind, mrope in blocks)


def mrope_positions_factor(inputs: CalibrationInputs) -> int:
    """How many times the rope's positions (the config's, or the length a launch's rope derives) vLLM's
    MRotaryEmbedding keeps at this launch's release, class and rope block; 1 where it builds none (module docstring)."""
    model = inputs.model
    if model is None or not mrope_in_effect(inputs):
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
