"""The one reader of architecture entries: a validated text section and an `Architecture` → `ModelSpec`.

Shared facts first (width, heads, KV heads, head dim, vocab, positions, each layer's attention kind and
window), then what the entry declares: per-kind geometry, latent attention, experts, recurrent state, MTP,
KV-shared layers (latent and compressed attention in latent_rules.py). Nothing here names a family: a family's differences are its entry's values.
"""

from __future__ import annotations

from typing import Any

from kvtop.domain.architectures import latent_rules, layer_rules
from kvtop.domain.architectures.description import (
    Architecture,
    KindGeometry,
    ParallelNorms,
    WidthAdjust,
)
from kvtop.domain.architectures.fields import Fields
from kvtop.domain.architectures.fope import fope_frequencies
from kvtop.domain.architectures.layer_rules import ALL_FULL, LAYER_TYPE_WORDS, stated_layer_types
from kvtop.domain.config_default import ConfigDefault, DefaultKind
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.model import (
    AttentionGeometry,
    AttentionKind,
    LayerKind,
    MlpKind,
    ModelSpec,
    SharedBlockSpec,
    VisionSpec,
)
from kvtop.domain.quant import QuantSpec
from kvtop.domain.rounding import round_up
from kvtop.domain.wording import with_article

VISION_NOT_MODELLED = (
    "vision tower weights (not in the weights book; SGLang's VLM fraction and reserve apply where it serves "
    "the model as multimodal)"
)


def read_architecture(
    f: Fields,
    arch: Architecture,
    *,
    architecture: str,
    name: str,
    dtype_bytes: int,
    quant: QuantSpec,
    multimodal: bool,
    tie_word_embeddings: bool | None,
    vision: VisionSpec | None,
    config_model_type: str,
    reading: str,
) -> ModelSpec:
    """The ModelSpec of a config read by `arch` (see the module docstring).

    `tie_word_embeddings` is the config's own value when it states one (the text config's, else the outer
    config's); when neither does, the entry's class default decides.
    """
    g = arch.geometry
    hidden = f.need("hidden_size")
    heads = f.need(g.heads)
    counted = arch.layers.count(f) if f.get(g.layers) is None else None
    layers = counted if counted else f.need(g.layers) * g.blocks_per_layer
    kv_heads = _kv_heads(f, arch, heads)
    if kv_heads > heads or heads % kv_heads:
        raise f.error(
            g.kv_heads or "num_key_value_heads",
            f"{kv_heads} KV heads cannot serve {heads} attention heads (they must divide them)",
        )
    head_dim = f.opt(g.head_dim, hidden // heads) if g.head_dim else hidden // heads
    if head_dim < 1:
        raise f.error(g.heads, f"{heads} heads leave no width of hidden_size {hidden} (head_dim 0)")
    tied = f.flag("tie_word_embeddings") if tie_word_embeddings is None else tie_word_embeddings
    kinds = _layer_kinds(f, arch, layers)
    facts: dict[str, Any] = {
        "name": name,
        "source": f.source,
        "architecture": architecture,
        "model_type": arch.model_type,
        "config_model_type": config_model_type,
        "dtype_bytes": dtype_bytes,
        "hidden_size": hidden,
        "num_layers": layers,
        "num_attention_heads": heads,
        "num_kv_heads": kv_heads,
        "head_dim": head_dim,
        "v_head_dim": head_dim,
        "attention_kind": (
            AttentionKind.MHA
            if kv_heads == heads
            else AttentionKind.MQA
            if kv_heads == 1
            else AttentionKind.GQA
        ),
        "attention_bias": _attention_bias(f, arch),
        "qk_norm": arch.attention.qk_norm
        or (f.flag(arch.attention.qk_norm_field) if arch.attention.qk_norm_field else False),
        "qk_norm_stated": bool(arch.attention.qk_norm_field and f.flag(arch.attention.qk_norm_field)),
        "attention_sinks": arch.attention.sinks,
        "vocab_size": f.need(g.vocab),
        "tie_word_embeddings": tied,
        "intermediate_size": _intermediate(f, arch, hidden),
        "mlp_gated": arch.mlp_gated,
        "max_position_embeddings": f.need(g.positions),
        "positions_field": g.positions,
        "quant": quant,
        "multimodal": multimodal,
        "vision": vision,
        "layer_attention": kinds,
        "layer_mlp": (MlpKind.DENSE,) * layers,
        "chunked_local": arch.chunked_local,
        "window_excludes_query": arch.window_excludes_query,
        "parallel_state": arch.parallel_state,
        "body": arch.body.model_copy(
            update={
                "o_bias": arch.body.o_bias or _any_flag(f, arch.attention.o_bias_fields),
                "mlp_bias": arch.body.mlp_bias or _any_flag(f, arch.mlp_bias_fields),
                "lm_head_bias": arch.body.lm_head_bias or f.flag("lm_head_bias"),
                "norms_per_layer": _norms(f, arch.norms) if arch.norms else _norms_by_word(f, arch),
                "norm_gate_rank": arch.norm_gate[2] if arch.norm_gate and f.get(arch.norm_gate[0]) in arch.norm_gate[1]
                else arch.body.norm_gate_rank,
                "final_norm": arch.body.final_norm
                and (f.flag(arch.final_norm_field) if arch.final_norm_field else True),
                "q_output_gate": arch.attention.output_gate
                or bool(arch.attention.output_gate_field and f.flag(arch.attention.output_gate_field)),
                "head_gate": _head_gate(f, arch.attention.head_gate_field),
                "fused_qkv_chunks": f.opt("num_key_value_heads") or 0
                if arch.attention.fused_qkv_field and f.get(arch.attention.fused_qkv_field) == "fused_qkv" else 0,
                "output_gate_proj": arch.attention.output_gate_proj
                or bool(arch.attention.output_gate_proj_field and f.flag(arch.attention.output_gate_proj_field)),
                "output_gate_bias": arch.attention.output_gate_bias,
                "sink_keys": bool(arch.attention.sink_keys_field and f.flag(arch.attention.sink_keys_field)),
                "latent_output_gate": bool(arch.attention.latent_gate_field and f.flag(arch.attention.latent_gate_field))
                or _latent_gate_kind(f, arch) == "element_wise",
                "latent_head_gate": _latent_gate_kind(f, arch) == "head_wise",
                "latent_sinks": bool(arch.attention.latent_sink_field and f.flag(arch.attention.latent_sink_field)),
                "hc_streams": f.need(arch.hyper_connection_fields[1])
                if arch.hyper_connection_fields and f.flag(arch.hyper_connection_fields[0]) else 0,
                "laurel_rank": f.opt(arch.laurel_field) if arch.laurel_field else arch.body.laurel_rank,
                "altup_inputs": f.opt(arch.altup_field) if arch.altup_field else arch.body.altup_inputs,
                "attention_residuals": bool(arch.attention_residual_field and f.get(arch.attention_residual_field)),
                "fope_frequencies": _fope(f, arch, head_dim) if arch.attention.fope else 0,
                "q_low_rank": f.opt(arch.attention.q_low_rank_field) if arch.attention.q_low_rank_field else 0,
                **_ngram(f, arch, hidden),
            }
        ),
        "embedding_size": _embedding_width(f, arch, hidden),
        "reading": reading,
    }
    _window(f, arch, facts)
    _per_layer_intermediate(f, arch, facts)
    for field, what in arch.refused_when:
        if f.flag(field):
            raise UnsupportedModelError(f"{what} is not modelled", field=f.prefix + field, source=f.source)
    for field, most, what in arch.refused_over:
        value = f.get(field)
        if isinstance(value, int) and value > most:
            raise UnsupportedModelError(f"{value} ({what}) is not modelled", field=f.prefix + field,
                                        source=f.source)  # fmt: skip
    for field, other, what in arch.refused_unequal:
        if f.get(field) is not None and f.get(other) is not None and f.get(field) != f.get(other):
            raise UnsupportedModelError(f"{field} {f.get(field)} beside {other} {f.get(other)} ({what}) is not modelled",
                                        field=f.prefix + field, source=f.source)  # fmt: skip
    for field, value, what in arch.refused_unless:
        if str(f.get(field)) != value:
            raise UnsupportedModelError(f"{field} {f.get(field)} (only {value}: {what}) is not modelled",
                                        field=f.prefix + field, source=f.source)  # fmt: skip
    not_modelled: list[str] = [*arch.not_modelled, *(note for name, note in arch.not_modelled_when if f.get(name))]
    if multimodal:
        not_modelled.append(VISION_NOT_MODELLED)
    mlp = arch.layers.mlp(f, layers)
    facts["block_words"] = arch.layers.words_stated(f)
    if mlp is not None:
        facts["layer_mlp"] = mlp
    if arch.kind_geometry:
        facts["layer_geometry"] = _kind_geometry(f, arch.kind_geometry, facts)
    per_layer_kv = arch.layers.kv_heads(f, layers, heads)
    if per_layer_kv is not None:
        facts["layer_geometry"] = tuple(
            AttentionGeometry(heads=heads, kv_heads=kv, head_dim=head_dim, v_head_dim=head_dim)
            for kv in per_layer_kv
        )
        attending = [kv for kv, kind in zip(per_layer_kv, kinds, strict=True) if kind is not LayerKind.NONE]
        facts["num_kv_heads"] = max(attending, default=kv_heads)
    if arch.per_layer_config_field is not None and f.get(arch.per_layer_config_field):
        facts["layer_geometry"] = _per_layer_head_dims(f, arch.per_layer_config_field, facts)
    if arch.attention.heads_per_layer_field is not None and f.get(arch.attention.heads_per_layer_field):
        facts["layer_geometry"] = _per_layer_heads(f, arch.attention.heads_per_layer_field, facts)
    if arch.per_layer_input_field is not None:
        facts["per_layer_input_stated"] = f.get(arch.per_layer_input_field) is not None
    if arch.per_layer_input_field is not None and f.opt(arch.per_layer_input_field):
        facts["per_layer_input_size"] = f.opt(arch.per_layer_input_field)
        vocab_field = arch.per_layer_vocab_field
        facts["per_layer_vocab"] = (f.opt(vocab_field) if vocab_field else 0) or facts["vocab_size"]
    widths = arch.layers.widths(f, layers, hidden)
    if widths is not None:
        facts["layer_intermediate"] = widths
        facts["intermediate_size"] = max(widths, default=0)
    if arch.latent is not None:
        latent_rules.latent(f, arch, facts)
    if arch.sparse_index is not None:
        latent_rules.sparse_index(f, arch.sparse_index, facts)
    if arch.compressed is not None:
        latent_rules.compressed(f, arch.compressed, facts)
    if arch.moe is not None and arch.moe.present(f):
        if mlp is None:
            facts["layer_mlp"] = arch.moe.placement.kinds(f, layers)
        if MlpKind.MOE in facts["layer_mlp"]:
            facts["moe"] = arch.moe.spec(f)
    if arch.state is not None:
        facts["state"] = arch.state.spec(f)
    if arch.cross_attention_field is not None:
        facts["cross_attention_layers"] = _cross_attention_layers(f, arch.cross_attention_field, layers)
    if arch.shared_blocks is not None:
        sb = arch.shared_blocks
        width = sb.width_factor * hidden  # the block's input and its attention's width, over the heads
        facts["head_dim"] = facts["v_head_dim"] = width // heads
        facts["shared_block"] = SharedBlockSpec(blocks=f.need(sb.blocks), width=width,
                                                adapter_rank=f.need(sb.adapter_rank),
                                                attention_adapters=f.flag(sb.attention_adapters))  # fmt: skip
    if arch.kv_passes_field is not None:
        facts["kv_passes"] = f.opt(arch.kv_passes_field, 1)
        if facts["kv_passes"] < 1:
            raise f.error(arch.kv_passes_field, "must be at least 1 (a pass over the layers)")
    if arch.kv_pass_window_field is not None and facts.get("kv_passes", 1) > 1:
        window = f.opt(arch.kv_pass_window_field)
        if window < 1 or LayerKind.SLIDING in facts["layer_attention"]:
            raise f.error(arch.kv_pass_window_field, "must be at least 1, over layers of full attention")
        facts["sliding_window"], facts["later_passes_slide"] = window, True
    if arch.encoder_layers_field is not None:
        facts["encoder_layers"] = f.opt(arch.encoder_layers_field)
    facts["mtp_layers"] = next((f.opt(name) for name in arch.mtp_fields if f.get(name) is not None), arch.mtp_unstated)
    if arch.kv_shared_field is not None:
        own_kinds = facts["layer_attention"]
        facts["layer_attention"] = _kv_shared(f, arch.kv_shared_field, own_kinds)
        facts["kv_shared_kinds"] = own_kinds if facts["layer_attention"] != own_kinds else ()
    if arch.kv_shared_field and arch.kv_shared_wide_field and f.flag(arch.kv_shared_wide_field):
        facts["layer_intermediate"] = layer_rules.kv_shared_widths(facts.get("layer_intermediate", ()),
            facts["intermediate_size"], f.opt(arch.kv_shared_field), facts["num_layers"])  # fmt: skip
        facts["intermediate_size"] = max(facts["layer_intermediate"])  # the widest, as DeciLM's widths
    facts["not_modelled"] = tuple(not_modelled)
    facts["unstated_fields"] = tuple(name for name in arch.engine_read_fields if f.get(name) is None)
    facts["config_defaults"] = _config_defaults(f, arch)
    return ModelSpec(**facts)


def _config_defaults(f: Fields, arch: Architecture) -> tuple[ConfigDefault, ...]:
    """Each default the reading used: the class's, or kvtop's own figure where the entry says the class has none."""
    own = dict(arch.own_defaults)
    return tuple(
        ConfigDefault(field=name, value=value, what=own[name], kind=DefaultKind.KVTOP_NOMINAL)
        if name in own
        else ConfigDefault(field=name, value=value, what=f"{arch.config_class}'s class default",
                           kind=DefaultKind.CLASS_DEFAULT)  # fmt: skip
        for name, value in f.defaults_read()
    )


def _kv_heads(f: Fields, arch: Architecture, heads: int) -> int:
    """KV heads: `kv_heads` where its flag is on (Falcon's new decoder: num_kv_heads, before multi_query),
    one under the multi-query flag, else `kv_heads` or every head."""
    g = arch.geometry
    if g.kv_heads is not None and g.kv_heads_if is not None and f.flag(g.kv_heads_if):
        return f.opt(g.kv_heads, heads)
    if g.multi_query_flag is not None and f.flag(g.multi_query_flag):
        return 1
    if g.kv_heads is None or (g.kv_heads_if is not None and not f.flag(g.kv_heads_if)):
        return heads
    if g.kv_heads_required:
        return f.need(g.kv_heads)
    return f.opt(g.kv_heads, heads)


def _cross_attention_layers(f: Fields, field: str, layers: int) -> tuple[int, ...]:
    """The layers `field` lists as attending to an encoder's states (Mllama), each one of the model's."""
    if f.get(field) is None:
        raise f.error(field, f"missing ({with_article(f.model_type)} config names the layers that attend to the image)")
    stated = tuple(sorted(set(f.get(field))))
    if any(index >= layers for index in stated):
        raise f.error(field, f"lists a layer beyond the model's {layers}")
    return stated


def _embedding_width(f: Fields, arch: Architecture, hidden: int) -> int | None:
    """The embedding's width where the entry names a field for it and the config makes it differ from hidden."""
    name = arch.geometry.embedding_width
    width = f.opt(name, hidden) if name else hidden
    return None if width == hidden else width


def _norms(f: Fields, norms: ParallelNorms) -> int:
    """Norms a layer holds where the config decides (see `ParallelNorms`)."""
    if not f.flag(norms.parallel_field):
        return 2
    return f.opt(norms.count_field, 2 if f.flag(norms.two_when) else 1)


def _any_flag(f: Fields, names: tuple[str, ...]) -> bool:
    return any(f.flag(name) for name in names)


def _attention_bias(f: Fields, arch: Architecture) -> bool:
    """q, k, v biases: the family's own, `qkv_bias`, then `attention_bias` (InternLM's `bias` where it is absent)."""
    if arch.attention.qkv_bias or f.flag("qkv_bias") or _any_flag(f, arch.attention.bias_fields[1:]):
        return True
    first = arch.attention.bias_fields[0] if arch.attention.bias_fields else None
    stated = f.get(first) if first else None
    return f.flag("bias") if stated is None else bool(stated)


def _intermediate(f: Fields, arch: Architecture, hidden: int) -> int:
    g = arch.geometry
    value = f.get(g.intermediate) if g.intermediate else None
    if isinstance(value, list):
        return max(value) if value else 0  # the widest; each layer's own is in layer_intermediate
    if value is None:
        return g.intermediate_default_factor * hidden
    return _adjusted_width(f, g.intermediate_adjust, int(value) // g.intermediate_divisor)


def _adjusted_width(f: Fields, adjust: WidthAdjust | None, width: int) -> int:
    """The MLP width the model builds from the stated one where its adjust flag is on (`WidthAdjust`)."""
    if adjust is None or not f.flag(adjust.flag):
        return width
    width = int(2 * width / 3)
    multiplier = f.get(adjust.multiplier)
    if multiplier is not None:
        width = int(multiplier * width)
    step = f.need(adjust.multiple_of)
    return round_up(width, step)


def _per_layer_intermediate(f: Fields, arch: Architecture, facts: dict[str, Any]) -> None:
    """A per-layer `intermediate_size` list (OpenELM-style configs, DeciLM's reading) as each layer's width."""
    name = arch.geometry.intermediate
    if name and isinstance(f.get(name), list):
        widths = f.per_layer(name, facts["num_layers"])
        facts["layer_intermediate"] = tuple(w // arch.geometry.intermediate_divisor for w in widths)


def _layer_kinds(f: Fields, arch: Architecture, layers: int) -> tuple[LayerKind, ...]:
    """`layer_types` as stated, else the entry's layer rule as its config class derives it."""
    words = arch.layer_type_words if arch.layer_type_words is not None else LAYER_TYPE_WORDS
    stated = stated_layer_types(f, layers, words) if arch.layers.reads_layer_types else None
    return stated if stated is not None else arch.layers.attention(f, layers)


def _window(f: Fields, arch: Architecture, facts: dict[str, Any]) -> None:
    kinds = facts["layer_attention"]
    facts["sliding_window_stated"] = bool(f.get(arch.window_field))
    facts["hybrid_swa_stated"] = f.flag("is_hybrid_swa")
    if LayerKind.SLIDING in kinds:
        field = "attention_chunk_size" if arch.chunked_local else arch.window_field
        window = f.opt(field)
        if window < 1:
            raise f.error(field, "missing (the config has sliding-window layers)")
        facts["sliding_window"] = window
    elif arch.layers is ALL_FULL and f.get("layer_types") is None:
        # the config's window where the family gives no pattern (Mistral, Phi-3): kvtop reads those layers as
        # full attention; vLLM windows every layer with it (docs/engines/vllm.md §3.4)
        facts["config_sliding_window"] = f.opt(arch.window_field) or None


def _per_layer_head_dims(f: Fields, field: str, facts: dict[str, Any]) -> tuple[AttentionGeometry, ...]:
    """Each layer's shape with the per-layer overrides (`per_layer_config`: {"05": {"head_dim": 512}}, the layer
    index as a string); an override of anything but head_dim is refused, naming it."""
    kinds = facts["layer_attention"]
    own = AttentionGeometry(heads=facts["num_attention_heads"], kv_heads=facts["num_kv_heads"],
                            head_dim=facts["head_dim"], v_head_dim=facts["v_head_dim"])  # fmt: skip
    geometry = list(facts.get("layer_geometry") or (own,) * len(kinds))
    for key, override in (f.get(field) or {}).items():
        if not key.isdigit() or int(key) >= len(kinds):
            raise f.error(f"{field}.{key}", f"no layer {key} among {len(kinds)}")
        unread = sorted(set(override) - {"head_dim"})
        if unread:
            raise UnsupportedModelError(f"per-layer override of {', '.join(unread)} is not modelled",
                                        field=f"{f.prefix}{field}.{key}", source=f.source)  # fmt: skip
        head_dim = override.get("head_dim")
        if head_dim is not None:
            if not isinstance(head_dim, int) or isinstance(head_dim, bool) or not 0 < head_dim <= 1 << 16:
                raise f.error(f"{field}.{key}.head_dim", f"{head_dim!r} is not a head size")
            layer = int(key)
            geometry[layer] = geometry[layer].model_copy(update={"head_dim": head_dim, "v_head_dim": head_dim})
    return tuple(geometry)


def _norms_by_word(f: Fields, arch: Architecture) -> int:
    """Norms per layer by the config's word where the entry reads one (an unknown word: the body's count)."""
    if arch.norms_by_word is None:
        return arch.body.norms_per_layer
    field, counts = arch.norms_by_word
    return dict(counts).get(str(f.get(field)), arch.body.norms_per_layer)


def _ngram(f: Fields, arch: Architecture, hidden: int) -> dict[str, int]:
    """LongCat-Flash-Lite's n-gram tables (vLLM 0.33.0 longcat_flash_ngram.py NgramEmbedding): split × (neighbours
    − 1) tables, table i of int(ratio × vocab + 2i + 1) rows, hidden ÷ tables wide; none where the ratio is unset."""
    if arch.ngram_fields is None or f.get(arch.ngram_fields[0]) is None:
        return {}
    ratio_field, split_field, neighbour_field = arch.ngram_fields
    tables = f.need(split_field) * (f.need(neighbour_field) - 1)
    if tables < 1 or hidden // tables < 1:
        raise f.error(split_field, "must give at least one n-gram table, each at least one wide")
    m = float(f.get(ratio_field)) * f.need("vocab_size")
    return {"ngram_tables": tables, "ngram_rows": sum(int(m + 2 * i + 1) for i in range(tables)),
            "ngram_width": hidden // tables}  # fmt: skip


def _latent_gate_kind(f: Fields, arch: Architecture) -> str:
    """MLA's g_proj granularity where the entry reads one (`Attention.latent_gate_kind_field`), else ''."""
    field, flag = arch.attention.latent_gate_kind_field, arch.attention.latent_gate_if
    value = f.get(field) if field and (flag is None or f.flag(flag)) else None
    # Hunyuan-V4 spells them "elementwise" / "headwise" (vLLM 0.33.0 models/hy_v4/nvidia/attention.py)
    return {"elementwise": "element_wise", "headwise": "head_wise"}.get(value, value) if isinstance(value, str) else ""


def _head_gate(f: Fields, field: str | None) -> bool:
    """A gate per head (g_proj heads × hidden): vLLM 0.33.0 models/laguna.py builds it where `gating` is true or
    "per-head"; "per-element" (a gate per head dimension, heads × head_dim wide) is not read: refused by name."""
    value = f.get(field) if field else None
    if value == "per-element":
        raise UnsupportedModelError("a per-element attention output gate is not modelled", field=f.prefix + str(field),
                                    source=f.source)  # fmt: skip
    return value is True or value == "per-head"


def _per_layer_heads(f: Fields, field: str, facts: dict[str, Any]) -> tuple[AttentionGeometry, ...]:
    """Each layer's query heads from a list (Laguna: 48 on its full layers, 64 on its sliding ones; vLLM 0.33.0
    models/laguna.py sizes qkv_proj, o_proj and g_proj by `num_attention_heads_per_layer[layer_idx]`)."""
    heads = f.per_layer(field, facts["num_layers"])
    own = facts.get("layer_geometry") or (
        AttentionGeometry(heads=facts["num_attention_heads"], kv_heads=facts["num_kv_heads"],
                          head_dim=facts["head_dim"], v_head_dim=facts["v_head_dim"]),
    ) * facts["num_layers"]  # fmt: skip
    for count, shape in zip(heads, own, strict=True):
        if count % shape.kv_heads:
            raise f.error(field, f"{shape.kv_heads} KV heads cannot serve {count} heads")
    return tuple(shape.model_copy(update={"heads": count}) for count, shape in zip(heads, own, strict=True))


def _kind_geometry(
    f: Fields, overrides: tuple[KindGeometry, ...], facts: dict[str, Any]
) -> tuple[AttentionGeometry, ...]:
    """Each layer's shape: the model's own, or its kind's where the entry gives one."""
    own = AttentionGeometry(
        heads=facts["num_attention_heads"],
        kv_heads=facts["num_kv_heads"],
        head_dim=facts["head_dim"],
        v_head_dim=facts["v_head_dim"],
    )
    by_kind: dict[LayerKind, AttentionGeometry] = {}
    for o in overrides:
        head_dim = f.opt(o.head_dim, own.head_dim) if o.head_dim else own.head_dim
        heads = f.opt(o.heads, own.heads) if o.heads else own.heads
        kv_heads = f.opt(o.kv_heads, own.kv_heads) if o.kv_heads else own.kv_heads
        if kv_heads > heads or heads % kv_heads:
            raise f.error(
                o.kv_heads or "num_key_value_heads", f"{kv_heads} KV heads cannot serve {heads} heads"
            )
        by_kind[o.kind] = AttentionGeometry(
            heads=heads,
            kv_heads=kv_heads,
            head_dim=head_dim,
            v_head_dim=f.opt(o.v_head_dim, head_dim) if o.v_head_dim else head_dim,
            kv_projections=1 if o.k_eq_v_field and f.flag(o.k_eq_v_field) else 2,
            sinks=bool(o.sinks_field and f.flag(o.sinks_field)),
        )
    geometry = tuple(by_kind.get(kind, own) for kind in facts["layer_attention"])
    return () if all(g == own for g in geometry) else geometry


def _kv_shared(f: Fields, field: str, kinds: tuple[LayerKind, ...]) -> tuple[LayerKind, ...]:
    """The last `field` layers read the KV of an earlier layer of their type: attention weights, no KV."""
    shared = f.opt(field)
    if shared >= len(kinds):
        raise f.error(field, f"{shared} KV-shared layers leave none of the {len(kinds)} to hold KV")
    if shared == 0:
        return kinds
    first = len(kinds) - shared
    return tuple(
        LayerKind.SHARED if i >= first and kind in (LayerKind.FULL, LayerKind.SLIDING) else kind
        for i, kind in enumerate(kinds)
    )


def _fope(f: Fields, arch: Architecture, head_dim: int) -> int:
    """FoPE's coefficient width from rope_theta, max_position_embeddings and rope_scaling.num_inv_freq (fope.py)."""
    scaling = f.get("rope_scaling")
    count = scaling.get("num_inv_freq") if isinstance(scaling, dict) else None
    if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 1):
        raise f.error("rope_scaling.num_inv_freq", f"must be a whole number of frequencies or null (got {count!r})")
    theta = f.get("rope_theta")
    if isinstance(theta, bool) or not isinstance(theta, (int, float)) or theta <= 1:
        raise f.error("rope_theta", f"must be a number above 1 (got {theta!r})")
    return fope_frequencies(head_dim, float(theta), f.need(arch.geometry.positions), count)
