"""The reader's latent and compressed attention: MLA (and DSA's indexer), MiniMax-M3's sparse indexer and
DeepSeek-V4's compressed latents, each into the facts `reader.read_architecture` builds a ModelSpec from.
"""

from __future__ import annotations

from typing import Any

from kvtop.domain.architectures.description import Architecture, Compressed, Latent, SparseIndex
from kvtop.domain.architectures.fields import Fields
from kvtop.domain.compressed_spec import CompressedSpec
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.model import AttentionKind, LayerKind, MlaSpec
from kvtop.domain.quant import QuantSpec

COMPRESS_RATIOS = (0, 4, 128)  # DeepSeek-V4's (SGLang 0.5.23 also asserts 1 and 2, which no checkpoint uses)


def latent(f: Fields, arch: Architecture, facts: dict[str, Any]) -> None:
    latent = arch.latent
    assert latent is not None
    if latent.use_field and f.get(latent.use_field) is False:
        return  # plain attention: the heads and head_dim already read
    rope, nope, v_dim = f.need(latent.rope), f.need(latent.nope), f.need(latent.v_dim)
    if not (rope and nope and v_dim):
        raise f.error(latent.rope if not rope else latent.nope if not nope else latent.v_dim,
                      "must be at least 1 for latent attention")  # fmt: skip
    facts["mla"] = MlaSpec(
        kv_lora_rank=f.need(latent.kv_lora),
        q_lora_rank=f.get(latent.q_lora),
        qk_rope_head_dim=rope,
        qk_nope_head_dim=nope,
        v_head_dim=v_dim,
    )
    facts["attention_kind"] = AttentionKind.MLA
    facts["head_dim"] = nope + rope
    facts["v_head_dim"] = v_dim
    facts["num_kv_heads"] = facts["num_attention_heads"]
    if latent.index_dim is not None and f.get(latent.index_dim):
        facts["attention_kind"] = AttentionKind.DSA
        facts["dsa_index_head_dim"] = f.need(latent.index_dim)
        facts["dsa_index_heads"] = f.need(latent.index_heads)
        facts["dsa_indexed"] = indexed_layers(f, latent, facts["num_layers"])
        facts["dsa_index_rope_interleaved"] = f.flag(latent.index_rope_interleave)


def sparse_index(f: Fields, rule: SparseIndex, facts: dict[str, Any]) -> None:
    """MiniMax-M3's indexer: the layers `sparse_attention_freq` marks, one bf16 key of `sparse_index_dim` each
    (absent: the class default, every layer from `absent_first_plain`)."""
    layers = facts["num_layers"]
    sparse = f.get(rule.section)
    flags = tuple(i >= rule.absent_first_plain for i in range(layers))
    dim = rule.absent_index_dim
    if sparse is not None and sparse.sparse_attention_freq is not None:
        if len(sparse.sparse_attention_freq) != layers:
            raise f.error(f"{rule.section}.sparse_attention_freq", f"must list one flag per layer ({layers})")
        flags = tuple(bool(flag) for flag in sparse.sparse_attention_freq)
    if sparse is not None and sparse.sparse_index_dim is not None:
        dim = sparse.sparse_index_dim
    facts["dsa_index_head_dim"] = dim
    facts["dsa_index_heads"] = facts["num_kv_heads"]  # index_q heads equal the KV heads (vLLM asserts it)
    facts["dsa_indexed"] = flags
    facts["index_key_bf16"] = True


def compressed(f: Fields, rule: Compressed, facts: dict[str, Any]) -> None:
    """DeepSeek-V4: a compress ratio per layer (0: the sliding window only, read as a sliding layer; 4 or 128: a
    compressed latent per that many tokens beside it, read as full), the LoRAs, hyper-connections and indexer; the
    routed experts MXFP4 where the config says `expert_dtype: fp4` (its checkpoint's experts: 4-bit, one E8M0
    scale per 32) and the quantization config gives them no format of its own."""
    for field, what in rule.refused_fields:
        if f.get(field):
            raise UnsupportedModelError(f"{field} ({what}) is not modelled", field=f.prefix + field, source=f.source)
    layers = facts["num_layers"]
    ratios = tuple(f.get(rule.ratios) or ())
    if len(ratios) < layers:
        raise f.error(rule.ratios, f"must give a compress ratio for each of the {layers} layers, not {len(ratios)}")
    if any(r not in COMPRESS_RATIOS for r in ratios[:layers]):
        raise f.error(rule.ratios, f"ratios other than {COMPRESS_RATIOS} are not modelled")
    facts["compressed"] = CompressedSpec(
        ratios=ratios[:layers], window=f.need(rule.window), q_lora_rank=f.need(rule.q_lora),
        o_groups=f.need(rule.o_groups), o_lora_rank=f.need(rule.o_lora),
        index_head_dim=f.need(rule.index_dim), index_heads=f.need(rule.index_heads), rope_head_dim=f.need(rule.rope),
        experts_fp4=(f.get("expert_dtype") or "fp4") == "fp4",
    )  # fmt: skip
    # its hyper-connections: `hc_mult` streams whose mixers also mix the streams (comb rows; weight_hyper.py)
    facts["body"] = facts["body"].model_copy(update={"hc_streams": f.need(rule.hc_mult), "hc_comb": True})
    facts["layer_attention"] = tuple(LayerKind.FULL if r else LayerKind.SLIDING for r in ratios[:layers])
    facts["sliding_window"] = facts["compressed"].window
    facts.pop("config_sliding_window", None)
    quant: QuantSpec = facts["quant"]
    if f.get("expert_dtype") == "fp4" and quant.routed_experts is None:
        mxfp4 = QuantSpec(method="mxfp4", weight_bits=4, group_size=32, scale_bytes=1, scheme="mxfp4",
                          source=f"{f.source} expert_dtype")  # fmt: skip
        facts["quant"] = quant.model_copy(update={"routed_experts": mxfp4})


def indexed_layers(f: Fields, latent: Latent, layers: int) -> tuple[bool, ...]:
    """Per layer, whether it keeps its own indexer (and its key cache); () when every layer does."""
    types = f.get(latent.index_types)
    if types is not None:
        if len(types) != layers:
            raise f.error(latent.index_types, f"must list one type per layer ({layers}), not {len(types)}")
        indexed = tuple(kind != "shared" for kind in types)
    else:
        freq, offset = f.opt(latent.index_freq, 1), f.opt(latent.index_offset, 2)
        indexed = tuple(max(i - offset + 1, 0) % freq == 0 for i in range(layers))
    if latent.sparse_types is not None:  # only sparse layers build an indexer (vLLM 0.33.0 hy_v4 attention.py)
        words = f.get(latent.sparse_types)
        if not isinstance(words, list) or len(words) != layers:
            raise UnsupportedModelError(
                f"each layer's attention unstated ({layers} layers): SGLang 0.5.23 (configs/hy_v4.py) then runs DSA on "
                "every layer and vLLM 0.33.0 on none", field=f.prefix + latent.sparse_types, source=f.source)  # fmt: skip
        indexed = tuple(own and word in latent.sparse_words for own, word in zip(indexed, words, strict=True))
    return () if all(indexed) else indexed
