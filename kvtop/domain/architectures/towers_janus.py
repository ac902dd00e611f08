"""Janus / Janus-Pro's towers (MultiModalityCausalLM, outer model_type multi_modality), counted as SGLang 0.5.23
models/deepseek_janus_pro.py builds them (vLLM registers no such class).

SGLang's MultiModalityConfig (configs/janus_pro.py) keeps each section's `cls` and `params`; the model builds:
- `vision_model`: CLIPVisionTower over timm's VisionTransformer, its shape from the engine's SigLIP_MODEL_CONFIG
  table by `params.model_name` (image_size and select_layer from `params`): a position table of (image ÷ patch)²
  rows (no class token), a biased Conv2d patch embedding, `layers` blocks (select_layer ≤ 0: layers + select_layer
  + 1 of them) of two LayerNorms, qkv and proj with biases and an MLP width × int(width × mlp_ratio) with biases,
  a final LayerNorm and the "map" pooling head (latent, q, kv, proj with biases, LayerNorm, MLP). The blocks'
  attention is SGLang's VisionAttention: qkv (weight and bias, QKVParallelLinear) and proj's weight
  (RowParallelLinear) split over TP, proj's bias and the rest whole.
- `aligner` and `gen_aligner`: MlpProjector ("linear": one nn.Linear; "mlp_gelu": input_dim → n_embed, then
  depth − 1 of n_embed → n_embed, all biased), whole.
- `gen_vision_model`: VQ-16, built from the engine's ModelArgs defaults whatever `params` say (VQ_16() takes no
  argument): encoder and decoder of ResnetBlocks / AttnBlocks (GroupNorms, biased convs), a 16,384 × 8 codebook
  and its 65,536-wide `codebook_used` Parameter, quant_conv 256 → 8 and post_quant_conv 8 → 256, whole.
- `gen_head` (vision_head: n_embed → image_token_embed → image_token_size, biased) and `gen_embed`
  (image_token_size × gen_vision n_embed, from `gen_vision_config.params`), whole.
SGLang 0.5.23's meta build of the Janus-Pro-7B reconstruction (tests/data/configs/recon): 1,020,136,726 B of them in
bfloat16 at TP 1, 919,399,702 B a rank at TP 2.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvtop.domain.architectures.towers_vit import siglip_pooling_head, vit_blocks
from kvtop.domain.tower_spec import TowerSpec

CONFIG_CLASS = "MultiModalityConfig"  # SGLang 0.5.23 configs/janus_pro.py
SOURCE = "SGLang 0.5.23 models/deepseek_janus_pro.py, configs/janus_pro.py"
WORDS = "the vision tower, its aligner and the image-generation towers (VQ-16, aligner, head, embedding)"

# SGLang 0.5.23 deepseek_janus_pro.py SigLIP_MODEL_CONFIG: model_name -> (patch, width, layers, mlp_ratio)
SIGLIP = {
    "siglip_so400m_patch14_384": (14, 1152, 27, 3.7362),
    "siglip_so400m_patch14_224": (14, 1152, 27, 3.7362),
    "siglip_large_patch16_384": (16, 1024, 24, 4.0),
}
# VQ-16 (ModelArgs defaults and Encoder / Decoder defaults): base channels, multipliers, res blocks, z channels
VQ_CH, VQ_MULT, VQ_RES, VQ_Z, VQ_CODEBOOK, VQ_EMBED, VQ_USAGE = 128, (1, 1, 2, 2, 4), 2, 256, 16384, 8, 65536


def _conv(cin: int, cout: int, k: int) -> int:
    return cin * cout * k * k + cout


def _res(cin: int, cout: int) -> int:
    """ResnetBlock: two GroupNorms, two 3×3 convs, a 1×1 nin_shortcut where the width changes."""
    return (
        2 * cin
        + _conv(cin, cout, 3)
        + 2 * cout
        + _conv(cout, cout, 3)
        + (_conv(cin, cout, 1) if cin != cout else 0)
    )


def _attn(c: int) -> int:
    """AttnBlock: a GroupNorm and q, k, v, proj_out 1×1 convs."""
    return 2 * c + 4 * _conv(c, c, 1)


def vq16() -> int:
    """VQ-16's parameters (encoder, decoder, quantizer with codebook_used, the two 1×1 quant convs)."""
    levels, top = len(VQ_MULT), VQ_CH * VQ_MULT[-1]
    enc, cin = _conv(3, VQ_CH, 3), VQ_CH
    for level, mult in enumerate(VQ_MULT):
        for _ in range(VQ_RES):
            enc, cin = enc + _res(cin, VQ_CH * mult), VQ_CH * mult
            enc += _attn(cin) if level == levels - 1 else 0
        enc += _conv(cin, cin, 3) if level != levels - 1 else 0  # Downsample
    middle = 2 * _res(top, top) + _attn(top)
    enc += middle + 2 * top + _conv(top, VQ_Z, 3)
    dec, cin = _conv(VQ_Z, top, 3) + middle, top
    for level in reversed(range(levels)):
        for _ in range(VQ_RES + 1):
            dec, cin = dec + _res(cin, VQ_CH * VQ_MULT[level]), VQ_CH * VQ_MULT[level]
            dec += _attn(cin) if level == levels - 1 else 0
        dec += _conv(cin, cin, 3) if level != 0 else 0  # Upsample
    dec += 2 * cin + _conv(cin, 3, 3)
    quant = VQ_CODEBOOK * VQ_EMBED + VQ_USAGE + _conv(VQ_Z, VQ_EMBED, 1) + _conv(VQ_EMBED, VQ_Z, 1)
    return enc + dec + quant


def projector(params: Mapping[str, Any]) -> int | None:
    """MlpProjector's parameters ("linear" or "mlp_gelu"); None for another kind (not read)."""
    kind, cin, out = params.get("projector_type", "mlp_gelu"), params.get("input_dim"), params.get("n_embed")
    if not isinstance(cin, int) or not isinstance(out, int) or kind not in ("linear", "mlp_gelu"):
        return None
    depth = 1 if kind == "linear" else int(params.get("depth", 1))
    return cin * out + out + (depth - 1) * (out * out + out)


def siglip(params: Mapping[str, Any]) -> tuple[int, int] | None:
    """(the vision tower's parameters, those SGLang splits over TP); None for a model_name outside the table."""
    if params.get("model_name") not in SIGLIP:
        return None
    patch, width, depth, ratio = SIGLIP[params["model_name"]]
    select = int(params.get("select_layer", -1))
    layers = min(depth, depth + select + 1) if select <= 0 else min(depth, select)
    mlp, image = int(width * ratio), int(params.get("image_size", 384))
    # every block's parameters (vit_blocks), of which SGLang splits the attention's qkv (weight, bias) and proj weight
    # (VisionAttention) and keeps timm's MLP whole
    blocks = sum(vit_blocks(layers, width, mlp))
    split = layers * (3 * width * width + 3 * width + width * width)
    pool = siglip_pooling_head(width, mlp)  # the "map" head
    whole = (image // patch) ** 2 * width + 3 * patch * patch * width + width + 2 * width + pool
    return whole + blocks, split


def janus(outer: Mapping[str, Any]) -> TowerSpec | None:
    """Janus's towers from its five sections; None where one is not the kind SGLang builds as counted here."""
    sections = [outer.get(k) or {} for k in ("vision_config", "aligner_config", "gen_vision_config",
                                             "gen_aligner_config", "gen_head_config")]  # fmt: skip
    vision, aligner, gen_vision, gen_aligner, head = (s.get("params") or {} for s in sections)
    classes = tuple(s.get("cls") for s in sections)
    if classes != ("CLIPVisionTower", "MlpProjector", "VQ-16", "MlpProjector", "vision_head"):
        return None
    tower, aligners = siglip(vision), (projector(aligner), projector(gen_aligner))
    sizes = (head.get("n_embed"), head.get("image_token_embed"), head.get("image_token_size"),
             gen_vision.get("image_token_size"), gen_vision.get("n_embed"))  # fmt: skip
    if tower is None or None in aligners or not all(isinstance(v, int) for v in sizes):
        return None
    n_embed, token_embed, token_size, codes, code_dim = (int(v) for v in sizes)  # type: ignore[arg-type]
    gen = n_embed * token_embed + token_embed + token_embed * token_size + token_size + codes * code_dim
    params = tower[0] + sum(a for a in aligners if a is not None) + vq16() + gen
    return TowerSpec(params=params, tp_split_params=tower[1], config_class=CONFIG_CLASS, source=SOURCE,
                     label=WORDS)  # fmt: skip
