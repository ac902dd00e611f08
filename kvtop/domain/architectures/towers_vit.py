"""Nine more tower kinds, counted as vLLM 0.33.0 builds and shards them (towers.py reads the fields and picks
the kind): llava's (llava-next's, llava-onevision's) CLIP, SigLIP or Pixtral ViT and 2-layer projector, Llama-4's
vision model and projector, Gemma-4's vision tower and embedder, PaliGemma's SigLIP and projector, Idefics3's
(SmolVLM's) SigLIP and connector, LFM2-VL's and Cosmos-3-Edge's SigLIP2 and projectors, Aria's and Command-A-Vision's SigLIP and projector; and towers.py's Gemma-3 SigLIP and Mistral-3
Pixtral readings. Each returns the parameters whole and those split over TP (a column-parallel layer's
bias splits with it; a row-parallel layer's bias, the norms, embeddings and tables stay whole).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BeforeValidator, Field

from kvtop.domain.config_types import MAX_LAYERS, ConfigSection, Dim, Flag, Hidden, Intermediate
from kvtop.domain.tower_spec import TowerSpec


def _feature_layers(value: Any) -> Any:
    """A signed layer index (−1 the last, −2 the one before: vLLM utils.get_layer_index), or a list of them."""
    items = value if isinstance(value, list) else [value]
    if not items or len(items) > MAX_LAYERS:
        raise ValueError(f"must be an integer or a list of 1 to {MAX_LAYERS:,} integers")
    for item in items:
        if isinstance(item, bool) or not isinstance(item, int):
            raise ValueError("must be an integer or a list of integers (signed layer indices)")
        if not -MAX_LAYERS <= item <= MAX_LAYERS:
            raise ValueError(f"must be between {-MAX_LAYERS:,} and {MAX_LAYERS:,}")
    return value


class LlavaProjectorConfig(ConfigSection):
    """LlavaConfig's (LlavaNextConfig's, LlavaOnevisionConfig's) fields the tower's size reads; absent: the
    class's default (`vision_feature_layer` −2, or −1 for llava-onevision: the Tower's defaults)."""

    vision_feature_layer: Annotated[int | list[int], BeforeValidator(_feature_layers)] | None = None
    multimodal_projector_bias: Flag = True


def layers_built(feature_layer: int | list[int], depth: int) -> int:
    """vLLM llava.py `_get_num_hidden_layers`: the CLIP layers up to the deepest feature layer (−k: depth − k + 1)."""
    wanted = [feature_layer] if isinstance(feature_layer, int) else feature_layer
    return max(depth + index + 1 if index < 0 else index for index in wanted)


def llava_tower(
    values: Mapping[str, Any], text_hidden: int, projector: LlavaProjectorConfig, outer_type: str, config_class: str,
    source: str,
) -> TowerSpec:  # fmt: skip
    """CLIP (a class embedding, a Conv2d patch embedding without bias, (image ÷ patch)² + 1 positions, a pre-
    LayerNorm) or SigLIP (a patch embedding with bias, (image ÷ patch)² positions), then blocks of two LayerNorms,
    qkv and out with biases, fc1 and fc2 with biases; llava-next and -onevision add `image_newline` (text wide);
    the projector linear_1 width → text, linear_2 text → text, biases by `multimodal_projector_bias`. vLLM
    llava.py, llava_next.py and llava_onevision.py build the blocks only up to `vision_feature_layer` (−2: all
    but the last) and no post-LayerNorm nor SigLIP head (`require_post_norm=False`, `use_head=False`); clip.py
    and siglip.py split qkv, out, fc1 and fc2 (QKV/Row/Column/RowParallelLinear). The projector's linear_1
    (Column) and linear_2 (Row) split for llava and llava-next; llava-onevision's are nn.Linear, whole, and so are
    llava-next-video's (llava_next_video.py LlavaNextMultiModalProjector; no image_newline: its pooler has none)."""
    width, mlp = values["hidden_size"], values["intermediate_size"]
    feature_layer = values["vision_feature_layer"] if projector.vision_feature_layer is None else projector.vision_feature_layer
    depth = layers_built(feature_layer, values["depth"])
    clip = values.get("model_type") == "clip_vision_model"
    positions = (values["image_size"] // values["patch_size"]) ** 2 + (1 if clip else 0)
    whole = values["in_channels"] * values["patch_size"] ** 2 * width + positions * width
    whole += 3 * width if clip else width  # the class embedding and pre-LayerNorm, or the patch bias
    whole += depth * (2 * 2 * width + width + width)  # two LayerNorms, out's and fc2's biases
    split = depth * (3 * width * width + 3 * width + width * width + width * mlp + mlp + mlp * width)
    whole += text_hidden if outer_type in ("llava_next", "llava_onevision") else 0  # image_newline
    bias = text_hidden if projector.multimodal_projector_bias else 0
    linears = width * text_hidden + bias + text_hidden * text_hidden
    split_projector = 0 if outer_type in ("llava_onevision", "llava_next_video") else linears  # theirs: whole
    whole += bias + linears - split_projector
    split += split_projector
    return TowerSpec(params=whole + split, tp_split_params=split, config_class=config_class, source=source,
                     projector_params=split_projector,
                     transformers_params=whole + split + _transformers_extra(values, depth, clip))  # fmt: skip


def _transformers_extra(values: Mapping[str, Any], built: int, clip: bool) -> int:
    """What transformers' own CLIPVisionModel / SiglipVisionModel hold beyond vLLM's build of `built` layers (a
    Transformers backend builds these classes as they are: SGLang 0.5.23's for llava-next and -onevision): the
    layers past `vision_feature_layer`, the post-LayerNorm, and SigLIP's pooling head where `vision_use_head`
    (SiglipVisionConfig's default True: a probe, nn.MultiheadAttention's in_proj 3 × width² with bias and out_proj,
    a LayerNorm, fc1 and fc2 with biases)."""
    width, mlp = int(values["hidden_size"]), int(values["intermediate_size"])
    layer = 2 * 2 * width + 3 * width * width + 3 * width + width * width + width + width * mlp + mlp + mlp * width + width
    extra = (int(values["depth"]) - built) * layer + 2 * width
    if not clip and values.get("vision_use_head", True):
        extra += siglip_pooling_head(width, mlp)
    return extra


def siglip_pooling_head(width: int, mlp: int) -> int:
    """SigLIP's attention-pooling head (transformers' SiglipMultiheadAttentionPoolingHead, timm's "map" pool): a probe
    (width), the attention's q, k, v and output projections with biases (transformers' in_proj 3 × width² + 3 ×
    width and out_proj; timm's q, kv and proj), a LayerNorm, and an MLP width → mlp → width with biases."""
    return width + (3 * width * width + 3 * width) + (width * width + width) + 2 * width + (2 * width * mlp + mlp + width)


def llava_pixtral(
    values: Mapping[str, Any], text_hidden: int, projector: LlavaProjectorConfig, config_class: str, source: str
) -> TowerSpec:
    """llava over Pixtral (mistral-community/pixtral-12b: `LlavaForConditionalGeneration` whose vision_config is
    `pixtral`). vLLM llava.py `init_vision_tower_for_llava` builds PixtralHFVisionModel (pixtral.py) up to
    `vision_feature_layer`: a Conv2d patch embedding without bias, ln_pre (RMSNorm), blocks of two RMSNorms,
    qkv_proj (QKVParallelLinear) and o_proj (Row), gate_up_proj (MergedColumn) and down_proj (Row), none biased;
    RoPE, no position table, no post-norm. The projector LlavaMultiModalProjector: linear_1 (Column, vision →
    text) and linear_2 (Row, text → text), biases by `multimodal_projector_bias` (linear_2's whole)."""
    width, mlp = values["hidden_size"], values["intermediate_size"]
    feature_layer = values["vision_feature_layer"] if projector.vision_feature_layer is None else projector.vision_feature_layer
    depth = layers_built(feature_layer, values["depth"])
    whole = values["in_channels"] * values["patch_size"] ** 2 * width + width + depth * 2 * width
    split = depth * (4 * width * width + 3 * width * mlp)
    bias = text_hidden if projector.multimodal_projector_bias else 0
    linears = width * text_hidden + bias + text_hidden * text_hidden
    return TowerSpec(params=whole + bias + split + linears, tp_split_params=split + linears, config_class=config_class,
                     source=source, projector_params=linears)  # fmt: skip


def llama4_vision(values: Mapping[str, Any], text_hidden: int, config_class: str, source: str) -> TowerSpec:
    """vLLM mllama4.py: the patch embedding (an unfold, then a column-parallel linear channels × patch² → width,
    no bias), a class embedding, (image ÷ patch)² + 1 positions, pre and post LayerNorms, blocks of two
    LayerNorms, qkv (QKVParallelLinear, bias) and o_proj (Row, bias), fc1 (Column, bias) and fc2 (Row, bias);
    the pixel-shuffle adapter's fc1 (Column, intermediate → projector_input_dim) and fc2 (Row, →
    projector_output_dim), biases by `multi_modal_projector_bias`; the projector linear_1 (Column,
    vision_output_dim → text, no bias). Heads × head_dim is the width (Llama4VisionConfig)."""
    width, mlp, depth = values["hidden_size"], values["intermediate_size"], values["depth"]
    positions = (values["image_size"] // values["patch_size"]) ** 2 + 1
    adapter_in, adapter_out = values["projector_input_dim"], values["projector_output_dim"]
    bias = values["multi_modal_projector_bias"]
    split = values["in_channels"] * values["patch_size"] ** 2 * width
    whole = width + positions * width + 2 * 2 * width
    split += depth * (3 * width * width + 3 * width + width * width + width * mlp + mlp + mlp * width)
    whole += depth * (width + width + 2 * 2 * width)  # o_proj's and fc2's biases, two LayerNorms
    split += mlp * adapter_in + (adapter_in if bias else 0) + adapter_in * adapter_out
    whole += adapter_out if bias else 0
    split += values["vision_output_dim"] * text_hidden
    return TowerSpec(params=whole + split, tp_split_params=split, config_class=config_class, source=source)


def gemma4_vision(values: Mapping[str, Any], text_hidden: int, config_class: str, source: str) -> TowerSpec:
    """transformers' Gemma4VisionModel (vLLM gemma4_mm.py builds it with AutoModel and replaces every
    nn.Linear by a ReplicatedLinear: nothing splits over TP): input_proj 3 × patch² → width (no bias), a
    position table 2 × position_embedding_size × width, blocks of q, k, v, o (no bias), q and k RMSNorms over
    head_dim (v's has no scale), four RMSNorms, gate, up and down (no bias); the embedder's projection
    width → text (no bias; its norm has no scale). The block linears are `replicated_params`: an engine whose
    own layers split them (SGLang's gemma4_vision.py) says so in its TowerSplit."""
    width, mlp, depth = values["hidden_size"], values["intermediate_size"], values["depth"]
    head_dim = values["head_dim"]
    q_width, kv_width = values["num_attention_heads"] * head_dim, values["num_key_value_heads"] * head_dim
    whole = 3 * values["patch_size"] ** 2 * width + 2 * values["position_embedding_size"] * width
    attention = width * q_width + 2 * width * kv_width + q_width * width + 2 * head_dim
    linears = depth * (attention - 2 * head_dim + 3 * width * mlp)  # q, k, v, o, gate, up, down
    whole += depth * (attention + 4 * width + 3 * width * mlp)
    whole += width * text_hidden
    return TowerSpec(params=whole, tp_split_params=0, config_class=config_class, source=source,
                     replicated_params=linears)  # fmt: skip


class PaliGemmaOuterFields(ConfigSection):
    """PaliGemmaConfig's `projection_dim` (its class default 2048), which it writes over vision_config's
    (configuration_paligemma.py: `self.vision_config.projection_dim = self.projection_dim`)."""

    projection_dim: Hidden = 2048


def paligemma_siglip(
    values: Mapping[str, Any], projector: PaliGemmaOuterFields, config_class: str, source: str
) -> TowerSpec:
    """PaliGemma's SigLIP and projector, as vLLM 0.33.0 paligemma.py builds them: siglip.py SiglipVisionModel
    with every layer (a Conv2d patch with bias, (image ÷ patch)² positions, blocks of two LayerNorms, qkv/out and
    fc1/fc2 with biases split as QKV/Row/Column/Row-parallel, the post-LayerNorm: every layer is used; no head,
    `use_head` False) and PaliGemmaMultiModalProjector (nn.Linear width → projection_dim with bias, whole).
    transformers' own classes (SGLang 0.5.23's Transformers backend: transformers_params) add SigLIP's pooling
    head where `vision_use_head` (SiglipVisionConfig's default True)."""
    width, depth = values["hidden_size"], values["depth"]
    whole, split = _siglip_every_layer(values)
    whole += width * projector.projection_dim + projector.projection_dim
    head = _transformers_extra(values, depth, clip=False) - 2 * width  # the head only: vLLM builds the post-norm
    return TowerSpec(params=whole + split, tp_split_params=split, config_class=config_class, source=source,
                     transformers_params=whole + split + head)  # fmt: skip


def _siglip_every_layer(values: Mapping[str, Any]) -> tuple[int, int]:
    """(whole, split over TP) of vLLM siglip.py's / idefics2_vision_model.py's SigLIP with every layer and its
    post-LayerNorm, no head: a Conv2d patch with bias, (image ÷ patch)² positions, blocks of two LayerNorms,
    qkv/out and fc1/fc2 with biases (QKV/Row/Column/Row-parallel: the row-parallel biases whole)."""
    return siglip_encoder(values, (values["image_size"] // values["patch_size"]) ** 2)


def siglip_encoder(
    values: Mapping[str, Any], positions: int, *, layers: int | None = None, post_norm: bool = True
) -> tuple[int, int]:
    """(whole, split over TP) of a SigLIP / SigLIP2 encoder: a biased patch embedding channels × patch² → width,
    `positions` rows of position table, `layers` blocks (`vit_blocks`; None: every one of `depth`) and, where
    `post_norm`, the post-LayerNorm (Phi-4-reasoning-vision's stops at layer −2 without it)."""
    width = values["hidden_size"]
    depth = values["depth"] if layers is None else layers
    blocks_whole, split = vit_blocks(depth, width, values["intermediate_size"])
    whole = values["in_channels"] * values["patch_size"] ** 2 * width + width + positions * width
    return whole + blocks_whole + (2 * width if post_norm else 0), split


def vit_blocks(depth: int, width: int, mlp: int, *, qkv_bias: bool = True) -> tuple[int, int]:
    """(whole, split over TP) of `depth` pre-LayerNorm ViT blocks as vLLM and SGLang build CLIP's, SigLIP's and
    BLIP-2's encoders: two LayerNorms, out's and fc2's biases whole (row-parallel); qkv (with its bias), out,
    fc1 (with its bias) and fc2 split (QKV / Row / Column / Row-parallel)."""
    whole = depth * (2 * 2 * width + width + width)
    split = depth * (3 * width * width + (3 * width if qkv_bias else 0) + width * width + width * mlp + mlp + mlp * width)
    return whole, split


class Idefics3OuterFields(ConfigSection):
    """Idefics3Config's / SmolVLMConfig's `scale_factor` (the pixel shuffle; their class default 2)."""

    scale_factor: Dim = 2


def idefics3_vision(
    values: Mapping[str, Any], outer: Idefics3OuterFields, text_hidden: int, config_class: str, source: str
) -> TowerSpec:
    """Idefics3's and SmolVLM's vision model and connector, as vLLM 0.33.0 idefics3.py (SmolVLM's smolvlm.py
    subclasses it) builds them: idefics2_vision_model.py's SigLIP with every layer and its post-LayerNorm
    (`_siglip_every_layer`) and Idefics3Connector's modality_projection, a ReplicatedLinear width × scale² →
    the language model's width without bias (whole)."""
    whole, split = _siglip_every_layer(values)
    whole += values["hidden_size"] * outer.scale_factor**2 * text_hidden
    return TowerSpec(params=whole + split, tp_split_params=split, config_class=config_class, source=source)


def siglip2_every_layer(values: Mapping[str, Any]) -> tuple[int, int]:
    """(whole, split over TP) of vLLM lfm2_siglip2.py's / SGLang siglip2.py's SigLIP2 with every layer and its
    post-LayerNorm: a biased linear patch embedding channels × patch² → width and a `num_patches`-row nn.Embedding
    table (whole), blocks of two LayerNorms, qkv/out and fc1/fc2 with biases split as QKV/Row/Column/Row-parallel
    (the row-parallel biases whole)."""
    return siglip_encoder(values, values["num_patches"])


class Cosmos3EdgeOuterFields(ConfigSection):
    """Cosmos3EdgeConfig's `projector_hidden_size` (its class default 11520)."""

    projector_hidden_size: Intermediate = 11520


def cosmos3_edge(
    values: Mapping[str, Any], outer: Cosmos3EdgeOuterFields, text_hidden: int, config_class: str, source: str
) -> TowerSpec:
    """Cosmos-3-Edge's visual, as vLLM 0.33.0 and SGLang 0.5.23 cosmos3_edge.py build it: the SigLIP2 encoder
    (`siglip2_every_layer`) and Cosmos3EdgePatchMerger — a LayerNorm over the width (before the shuffle), linear_fc1
    (Column, width × merge² → projector_hidden_size, biased) and linear_fc2 (Row, → text, its bias whole)."""
    whole, split = siglip2_every_layer(values)
    width, hidden = values["hidden_size"], outer.projector_hidden_size
    merged = width * values["spatial_merge_size"] ** 2
    whole += 2 * width + text_hidden
    split += merged * hidden + hidden + hidden * text_hidden
    return TowerSpec(params=whole + split, tp_split_params=split, config_class=config_class, source=source)


class Lfm2VlOuterFields(ConfigSection):
    """Lfm2VlConfig's projector fields (transformers models/lfm2_vl: its class defaults where absent)."""

    downsample_factor: Dim = 2
    projector_hidden_size: Hidden = 2560
    projector_bias: Flag = True
    projector_use_layernorm: Flag = True


def lfm2_vl(
    values: Mapping[str, Any], outer: Lfm2VlOuterFields, text_hidden: int, config_class: str, source: str
) -> TowerSpec:
    """LFM2-VL's SigLIP2 and projector, as vLLM 0.33.0 lfm2_vl.py builds them: lfm2_siglip2.py Siglip2Model with
    every layer and its post-LayerNorm (a biased linear patch embedding channels × patch² → width, a
    `num_patches`-row nn.Embedding table, both whole; blocks of two LayerNorms, qkv/out and fc1/fc2 with biases
    split as QKV/Row/Column/Row-parallel) and Lfm2VLMultiModalProjector (a LayerNorm over width × factor² where
    `projector_use_layernorm`, linear_1 → projector_hidden_size and linear_2 → text, biased by `projector_bias`:
    ReplicatedLinear, whole). SGLang 0.5.23 lfm2_vl.py builds linear_1 Column- and linear_2 RowParallelLinear
    (`replicated_params`: split where TowerSplit.replicated_linears, linear_2's bias whole)."""
    whole, split = siglip2_every_layer(values)
    merged, hidden = values["hidden_size"] * outer.downsample_factor**2, outer.projector_hidden_size
    whole += 2 * merged if outer.projector_use_layernorm else 0
    bias = outer.projector_bias
    replicated = merged * hidden + (hidden if bias else 0) + hidden * text_hidden  # linear_1, linear_2's weight
    whole += replicated + (text_hidden if bias else 0)
    return TowerSpec(params=whole + split, tp_split_params=split, config_class=config_class, source=source,
                     replicated_params=replicated)  # fmt: skip


class ProjectorConfig(ConfigSection):
    """The outer config's projector fields (Mistral3Config: a merge of 2 × 2 patches, no biases by default)."""

    spatial_merge_size: Dim = 2
    multimodal_projector_bias: Flag = False


def siglip_gemma3(values: Mapping[str, Any], text_hidden: int, config_class: str, source: str) -> TowerSpec:
    """SigLIP (a Conv2d patch embedding with bias, a learned table of (image ÷ patch)² positions, `depth`
    blocks of two LayerNorms, q/k/v/out with biases and fc1/fc2 with biases, a post-LayerNorm) and Gemma-3's
    projector (`mm_input_projection_weight` width × text width, `mm_soft_emb_norm`), both whole on every rank
    but the blocks' qkv, out, fc1 and fc2 (vLLM siglip.py: QKV/Row/Column/RowParallelLinear; gemma3_mm.py)."""
    width, mlp, depth = values["hidden_size"], values["intermediate_size"], values["depth"]
    positions = (values["image_size"] // values["patch_size"]) ** 2
    whole = values["in_channels"] * values["patch_size"] ** 2 * width + width + positions * width
    whole += depth * (2 * 2 * width + width + width) + 2 * width  # norms, out and fc2 biases; post-LayerNorm
    whole += width * text_hidden + width  # the projector and its soft-embedding norm
    split = depth * (3 * width * width + 3 * width + width * width + width * mlp + mlp + mlp * width)
    return TowerSpec(params=whole + split, tp_split_params=split, config_class=config_class,
                     source=source, position_params=positions * width, position_rows=positions)  # fmt: skip


def pixtral_mistral3(
    values: Mapping[str, Any], text_hidden: int, projector: ProjectorConfig, config_class: str, source: str
) -> TowerSpec:
    """Pixtral (a Conv2d patch embedding without bias, an RMSNorm before the blocks, `depth` blocks of two RMSNorms,
    q/k/v/o and gate/up/down without biases; RoPE, no position table) and Mistral-3's projector (an RMSNorm, the
    patch merger width × merge² → width, then linear_1 width → text and linear_2 text → text): vLLM pixtral.py
    and mistral3.py split the blocks' matrices and linear_1 / linear_2 over TP (a linear_1 bias with them,
    linear_2's whole); the rest is whole. Every layer is counted (vision_feature_layer −1, the default)."""
    width, mlp, depth = values["hidden_size"], values["intermediate_size"], values["depth"]
    merge, bias = projector.spatial_merge_size, projector.multimodal_projector_bias
    whole = values["in_channels"] * values["patch_size"] ** 2 * width + width + depth * 2 * width
    split = depth * (4 * width * width + 3 * width * mlp)
    whole += width + width * merge * merge * width + (text_hidden if bias else 0)
    projector = width * text_hidden + text_hidden * text_hidden + (text_hidden if bias else 0)
    split += projector
    return TowerSpec(params=whole + split, tp_split_params=split, config_class=config_class,
                     source=source, projector_params=projector)  # fmt: skip


class AriaOuterFields(ConfigSection):
    """AriaConfig's `projector_patch_to_query_dict` (its class default {1225: 128, 4900: 256}): the projector's
    query rows are its largest value (`max_value_projector_patch_to_query_dict`, which AriaConfig derives)."""

    projector_patch_to_query_dict: dict[str, Dim] = Field(default={"1225": 128, "4900": 256}, min_length=1)


def aria(values: Mapping[str, Any], outer: AriaOuterFields, text_hidden: int, config_class: str, source: str) -> TowerSpec:
    """Aria's vision tower and projector, as vLLM 0.33.0 aria.py builds them: AriaVisionTransformer, the Idefics3
    SigLIP with every layer and no post-LayerNorm (an nn.Identity), and AriaProjector — `query` (the largest
    patch-to-query value × width), transformers' AriaCrossAttention (q/k/v unbiased, nn.MultiheadAttention's
    in_proj and out_proj biased, a biased linear, two LayerNorms; whole), a LayerNorm, and the feed-forward's
    linear_in (Column, width → text) and linear_out (Row, text → text), unbiased, split over TP."""
    width = values["hidden_size"]
    whole, split = _siglip_every_layer(values)
    whole -= 2 * width  # no post-LayerNorm
    queries = max(outer.projector_patch_to_query_dict.values())
    whole += queries * width + 3 * width * width + 4 * width * width + 4 * width + width * width + width + 4 * width
    whole += 2 * width  # the projector's LayerNorm
    feed_forward = width * text_hidden + text_hidden * text_hidden
    return TowerSpec(params=whole + split + feed_forward, tp_split_params=split + feed_forward,
                     config_class=config_class, source=source)  # fmt: skip


class Cohere2VisionOuterFields(ConfigSection):
    """Cohere2VisionConfig's projector fields (transformers models/cohere2_vision: its class defaults where absent)."""

    downsample_factor: Dim = 2
    alignment_intermediate_size: Intermediate = 36864


def cohere2_vision(
    values: Mapping[str, Any], outer: Cohere2VisionOuterFields, text_hidden: int, config_class: str, source: str
) -> TowerSpec:
    """Command-A-Vision's SigLIP and projector, as vLLM 0.33.0 cohere2_vision.py builds them: siglip.py
    SiglipVisionModel with every layer and its post-LayerNorm, no head (`_siglip_every_layer`), and
    Cohere2VisionMultiModalProjector: linear_1 (MergedColumnParallelLinear, width × factor² → two halves of
    `alignment_intermediate_size`, biased) and linear_2 (RowParallelLinear, a half → text, its bias whole)."""
    whole, split = _siglip_every_layer(values)
    merged, half = values["hidden_size"] * outer.downsample_factor**2, outer.alignment_intermediate_size // 2
    split += merged * 2 * half + 2 * half + half * text_hidden
    whole += text_hidden
    return TowerSpec(params=whole + split, tp_split_params=split, config_class=config_class, source=source)
