"""Which kind each layer is: the rules an architecture entry picks from, each reading named config fields.

A `layer_types` list in the config is read first by every entry (its words are in `LAYER_TYPE_WORDS`); the
rules below derive the kinds the way the family's config class does when the list is absent. A rule that
also decides which layers carry an MLP (Nemotron-H's pattern) says so in `mlp`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from kvtop.domain.architectures.fields import Fields
from kvtop.domain.config_schema_families import BlockConfig
from kvtop.domain.model import LayerKind, MlpKind
from kvtop.domain.rounding import ceil_div, round_up
from kvtop.domain.wording import with_article

FULL, SLIDING, LINEAR, NONE = LayerKind.FULL, LayerKind.SLIDING, LayerKind.LINEAR, LayerKind.NONE

# `layer_types` words across families (transformers' names, Granite-4's, LFM2's, Nemotron-H's block types)
LAYER_TYPE_WORDS: Mapping[str, LayerKind] = {
    "full_attention": FULL,
    "attention": FULL,
    "global": FULL,
    "sliding_attention": SLIDING,
    "chunked_attention": SLIDING,
    "local": SLIDING,
    "linear_attention": LINEAR,
    "mamba": LINEAR,
    "mamba2": LINEAR,
    "conv": LINEAR,
    "kda": LINEAR,
    "mlp": NONE,
    "moe": NONE,
    "indexed_attention": FULL,  # GLM-5 (GlmMoeDsaConfig): DSA layers keep full-length latent KV
    "deepseek_sparse_attention": FULL,
}


class LayerRule:
    """Derives each layer's attention kind (and, for some, its MLP kind) from the config."""

    reads_layer_types: ClassVar[bool] = True  # a stated `layer_types` wins (False: the config class drops it)

    def attention(self, f: Fields, layers: int) -> tuple[LayerKind, ...]:
        return (FULL,) * layers

    def mlp(self, f: Fields, layers: int) -> tuple[MlpKind, ...] | None:
        """The MLP kind of each layer where the pattern decides it; None: the MoE rule does."""
        return None

    def count(self, f: Fields) -> int | None:
        """The layer count where the pattern is the config's only statement of it (NemotronH's block list)."""
        return None

    def kv_heads(self, f: Fields, layers: int, heads: int) -> tuple[int, ...] | None:
        """Each layer's KV heads where the pattern gives them per layer (DeciLM); None: the model's own."""
        return None

    def widths(self, f: Fields, layers: int, hidden: int) -> tuple[int, ...] | None:
        """Each layer's dense MLP width where the pattern gives it per layer (DeciLM); None: the model's own."""
        return None

    def words_stated(self, f: Fields) -> tuple[str, ...]:
        """The block words the config's per-layer list states, sorted (Nemotron-H's layers_block_type; engines
        accept different vocabularies); empty where the rule reads none."""
        return ()


ALL_FULL = LayerRule()


def _window(f: Fields, name: str = "sliding_window") -> int:
    return f.opt(name)


@dataclass(frozen=True)
class Alternate(LayerRule):
    """Sliding on even layers (0, 2, …), full on odd, when a window is set (Gemma2Config, GptOssConfig)."""

    def attention(self, f: Fields, layers: int) -> tuple[LayerKind, ...]:
        if _window(f) < 1:
            return (FULL,) * layers
        return tuple(SLIDING if (i + 1) % 2 else FULL for i in range(layers))


@dataclass(frozen=True)
class EveryNthFull(LayerRule):
    """Full on every n-th layer, sliding between (Gemma3TextConfig: `sliding_window_pattern`; OLMo 3: 4), when the
    window (`window_field`: Plamo3Config's `window_size`) is set."""

    every_field: str | None = "sliding_window_pattern"
    every: int = 6
    window_field: str = "sliding_window"

    def attention(self, f: Fields, layers: int) -> tuple[LayerKind, ...]:
        if _window(f, self.window_field) < 1:
            return (FULL,) * layers
        stated = f.get(self.every_field) if self.every_field else None
        if isinstance(stated, str):  # letters per layer, repeating: L local (sliding), G global (EXAONE-4)
            return tuple(FULL if stated[i % len(stated)] == "G" else SLIDING for i in range(layers))
        every = self.every if stated is None else int(stated)
        return tuple(SLIDING if (i + 1) % every else FULL for i in range(layers))


@dataclass(frozen=True)
class AllSliding(LayerRule):
    """Every layer slides when a window is set (MinistralConfig)."""

    def attention(self, f: Fields, layers: int) -> tuple[LayerKind, ...]:
        return ((SLIDING if _window(f) > 0 else FULL),) * layers


@dataclass(frozen=True)
class Qwen2Window(LayerRule):
    """Sliding from layer `max_window_layers` on, if `use_sliding_window` (Qwen2Config); `moe`: Qwen2-MoE's
    variant, sliding on even layers below `max_window_layers`."""

    moe: bool = False

    def attention(self, f: Fields, layers: int) -> tuple[LayerKind, ...]:
        if _window(f) < 1 or not f.flag("use_sliding_window"):
            return (FULL,) * layers
        start = f.opt("max_window_layers")
        if self.moe:
            return tuple(SLIDING if (i + 1) % 2 and i < start else FULL for i in range(layers))
        return tuple(SLIDING if i >= start else FULL for i in range(layers))


@dataclass(frozen=True)
class ChunkedNoRope(LayerRule):
    """Llama4TextConfig: chunked local attention except on NoPE layers (`no_rope_layers` 0, default every 4th)."""

    def attention(self, f: Fields, layers: int) -> tuple[LayerKind, ...]:
        if f.get("attention_chunk_size") is None:
            return (FULL,) * layers
        stated = f.get("no_rope_layers")
        if stated:
            if len(stated) != layers:
                raise f.error("no_rope_layers", f"must list one flag per layer ({layers}), not {len(stated)}")
            flags = tuple(stated)
        else:
            interval = f.need("no_rope_layer_interval")
            flags = tuple(int((i + 1) % interval != 0) for i in range(layers))
        return tuple(FULL if rope == 0 else SLIDING for rope in flags)


@dataclass(frozen=True)
class EveryNthFullOf(LayerRule):
    """`other` layers, with full attention on every `interval_field`-th (Qwen3NextConfig: linear between)."""

    interval_field: str = "full_attention_interval"
    other: LayerKind = LINEAR
    every: int = 0  # a fixed interval where the class reads no field (OlmoHybridConfig: every 4th full)

    def attention(self, f: Fields, layers: int) -> tuple[LayerKind, ...]:
        interval = self.every or f.need(self.interval_field)
        return tuple(FULL if (i + 1) % interval == 0 else self.other for i in range(layers))


@dataclass(frozen=True)
class PeriodOffset(LayerRule):
    """Attention where `i % period == offset`, `other` elsewhere (JambaConfig's attn_layer_period/offset)."""

    period_field: str = "attn_layer_period"
    offset_field: str = "attn_layer_offset"
    other: LayerKind = LINEAR

    def attention(self, f: Fields, layers: int) -> tuple[LayerKind, ...]:
        period, offset = f.need(self.period_field), f.opt(self.offset_field)
        return tuple(FULL if i % period == offset else self.other for i in range(layers))


@dataclass(frozen=True)
class AttentionThenMlp(LayerRule):
    """Full attention with no MLP on even layers, an MLP with no attention on odd ones (SGLang 0.5.23 models/zaya.py
    `_layer_class`, 1414-1418); ZayaConfig drops a stated `layer_types` (its classes read `zaya_layers`)."""

    reads_layer_types: ClassVar[bool] = False

    def attention(self, f: Fields, layers: int) -> tuple[LayerKind, ...]:
        return tuple(FULL if i % 2 == 0 else NONE for i in range(layers))

    def mlp(self, f: Fields, layers: int) -> tuple[MlpKind, ...] | None:
        return tuple(MlpKind.NONE if i % 2 == 0 else MlpKind.MOE for i in range(layers))


@dataclass(frozen=True)
class IndexList(LayerRule):
    """Attention on the layers a list names (0-based, or 1-based where the family counts so), `other`
    elsewhere; an absent list: `absent` on every layer (Falcon-H1's attn_layer_indices: every layer)."""

    list_field: str = "attn_layer_indices"
    one_based: bool = False
    other: LayerKind = LINEAR
    absent: LayerKind = FULL

    def attention(self, f: Fields, layers: int) -> tuple[LayerKind, ...]:
        stated = f.get(self.list_field)
        if stated is None:
            return (self.absent,) * layers
        chosen = {int(i) - (1 if self.one_based else 0) for i in stated}
        if any(i < 0 or i >= layers for i in chosen):
            raise f.error(self.list_field, f"names a layer outside the model's {layers}")
        return tuple(FULL if i in chosen else self.other for i in range(layers))


@dataclass(frozen=True)
class StatedOnly(LayerRule):
    """No pattern of the class's own: the config must list `layer_types` (Lfm2MoeConfig leaves it None, and its
    model, vLLM's and SGLang's index it per layer), else it is refused by name."""

    def attention(self, f: Fields, layers: int) -> tuple[LayerKind, ...]:
        raise f.error("layer_types", f"missing: {f.model_type}'s layers are only what layer_types lists")


@dataclass(frozen=True)
class PerLayerFlags(LayerRule):
    """A list of 0/1 per layer (MiMo-V2's hybrid_layer_pattern: 1 a sliding-window layer, 0 a full one)."""

    list_field: str = "hybrid_layer_pattern"
    one: LayerKind = SLIDING
    zero: LayerKind = FULL

    def attention(self, f: Fields, layers: int) -> tuple[LayerKind, ...]:
        flags = f.per_layer(self.list_field, layers, default=0)
        return tuple(self.one if flag else self.zero for flag in flags)


_NEMOTRON_CHARS: Mapping[str, tuple[LayerKind, MlpKind]] = {
    "M": (LINEAR, MlpKind.NONE),
    "*": (FULL, MlpKind.NONE),
    "-": (NONE, MlpKind.DENSE),
    "E": (NONE, MlpKind.MOE),
}
# SGLang 0.5.23's NemotronHConfig words (configs/nemotron_h.py: mamba, attention, mlp, moe) and transformers 5.x's
# (models/nemotron_h/configuration_nemotron_h.py, which vLLM 0.33.0 loads: linear_attention for a Mamba2 mixer,
# full_attention for attention); SGLang 0.5.23 refuses the latter (engines/sglang/config_checks.py)
_NEMOTRON_WORDS: Mapping[str, tuple[LayerKind, MlpKind]] = {
    "mamba": (LINEAR, MlpKind.NONE),
    "attention": (FULL, MlpKind.NONE),
    "linear_attention": (LINEAR, MlpKind.NONE),
    "full_attention": (FULL, MlpKind.NONE),
    "mlp": (NONE, MlpKind.DENSE),
    "moe": (NONE, MlpKind.MOE),
}


@dataclass(frozen=True)
class BlockPattern(LayerRule):
    """One block type per layer that is either a mixer or an MLP (NemotronHConfig): the pattern string
    (`hybrid_override_pattern`, M * - E) or the list of words (`layers_block_type`, newer configs)."""

    chars_field: str = "hybrid_override_pattern"
    words_field: str = "layers_block_type"
    chars: Mapping[str, tuple[LayerKind, MlpKind]] = field(default_factory=lambda: _NEMOTRON_CHARS)
    words: Mapping[str, tuple[LayerKind, MlpKind]] = field(default_factory=lambda: _NEMOTRON_WORDS)

    def blocks(self, f: Fields, layers: int) -> tuple[tuple[LayerKind, MlpKind], ...]:
        pattern = f.get(self.chars_field)
        if pattern is not None:
            if len(pattern) != layers or set(pattern) - set(self.chars):
                known = " ".join(self.chars)
                raise f.error(self.chars_field, f"must have one of {known} per layer ({layers} layers)")
            return tuple(self.chars[c] for c in pattern)
        words = f.get(self.words_field)
        if words is None:
            raise f.error(self.chars_field, f"missing ({with_article(f.model_type)} config needs its layer pattern)")
        if len(words) != layers or set(words) - set(self.words):
            known = ", ".join(self.words)
            raise f.error(self.words_field, f"must list one of {known} per layer ({layers} layers)")
        return tuple(self.words[w] for w in words)

    def count(self, f: Fields) -> int | None:
        stated = f.get(self.chars_field) or f.get(self.words_field)
        return len(stated) if stated else None

    def words_stated(self, f: Fields) -> tuple[str, ...]:
        if f.get(self.chars_field) is not None:
            return ()
        return tuple(sorted(set(f.get(self.words_field) or ())))

    def attention(self, f: Fields, layers: int) -> tuple[LayerKind, ...]:
        return tuple(kind for kind, _ in self.blocks(f, layers))

    def mlp(self, f: Fields, layers: int) -> tuple[MlpKind, ...] | None:
        return tuple(mlp for _, mlp in self.blocks(f, layers))


@dataclass(frozen=True)
class HybridBlockWords(BlockPattern):
    """Zamba2's `layers_block_type` (vLLM 0.33.0 zamba2.py): "hybrid" a shared transformer block beside a Mamba2
    mixer, the rest a Mamba2 mixer; its words are not NemotronH's, so they are not the block words an engine's
    NemotronH config check reads (`ModelSpec.block_words` stays empty)."""

    def words_stated(self, f: Fields) -> tuple[str, ...]:
        return ()


@dataclass(frozen=True)
class RepeatedBlock(LayerRule):
    """IQuest-Q1 (SGLang 0.5.23 configs/iquest_q1.py IQuestQ1Config): `first_layers_types`, then
    `hybrid_layers_types_block` × `num_hybrid_layers_block`, then `last_layers_types` (each absent: the class's
    lists here); every layer full where `use_hybrid_layers` or `use_sliding_window` is off. The class pops a stated
    `layer_types` and derives its own, so a stated list is not read."""

    reads_layer_types: ClassVar[bool] = False
    first: tuple[str, ...] = ("full_attention",)
    block: tuple[str, ...] = ("full_attention", "sliding_attention", "sliding_attention", "sliding_attention")
    last: tuple[str, ...] = ("full_attention", "full_attention", "full_attention")

    def attention(self, f: Fields, layers: int) -> tuple[LayerKind, ...]:
        if not f.flag("use_hybrid_layers", True) or not f.flag("use_sliding_window", True):
            return (FULL,) * layers
        block = list(f.get("hybrid_layers_types_block") or self.block) * f.need("num_hybrid_layers_block")
        words = [*(f.get("first_layers_types") or self.first), *block, *(f.get("last_layers_types") or self.last)]
        if len(words) != layers:
            raise f.error("num_hybrid_layers_block", f"the layer pattern has {len(words)} layers, not {layers}")
        kinds = {"full_attention": FULL, "sliding_attention": SLIDING}
        unknown = sorted(set(words) - set(kinds))
        if unknown:
            raise f.error("hybrid_layers_types_block", f"unknown layer type {unknown[0]!r}")
        return tuple(kinds[word] for word in words)


@dataclass(frozen=True)
class KimiLinearLayers(LayerRule):
    """Kimi-Linear: full (MLA) attention on `linear_attn_config.full_attn_layers` (1-based), KDA elsewhere."""

    def attention(self, f: Fields, layers: int) -> tuple[LayerKind, ...]:
        linear = f.get("linear_attn_config")
        if linear is None or linear.full_attn_layers is None:
            raise f.error(
                "linear_attn_config", f"missing full_attn_layers ({with_article(f.model_type)} config needs it)"
            )
        full = {i - 1 for i in linear.full_attn_layers}
        return tuple(FULL if i in full else LINEAR for i in range(layers))


def _ffn_width(ffn_mult: float, hidden: int) -> int:
    """DeciLM's `_ffn_mult_to_intermediate_size`: 2/3 × mult × hidden, rounded up to a multiple of 256."""
    width = int(2 * ffn_mult * hidden / 3)
    return round_up(width, 256)


@dataclass(frozen=True)
class DeciBlocks(LayerRule):
    """DeciLM / Nemotron-NAS `block_configs`: per layer, attention with heads ÷ n_heads_in_group KV heads or a
    no-op (or a linear replacement: no KV), and an MLP of its own width (`ffn_mult`) or none."""

    def _blocks(self, f: Fields, layers: int) -> list[BlockConfig]:
        blocks = f.get("block_configs")
        if blocks is None or len(blocks) != layers:
            raise f.error("block_configs", f"must list one block per layer ({layers})")
        return list(blocks)

    def attention(self, f: Fields, layers: int) -> tuple[LayerKind, ...]:
        out = []
        for block in self._blocks(f, layers):
            a = block.attention
            out.append(NONE if a.no_op or a.replace_with_linear else FULL)
        return tuple(out)

    def mlp(self, f: Fields, layers: int) -> tuple[MlpKind, ...] | None:
        out = []
        for block in self._blocks(f, layers):
            ffn = block.ffn
            out.append(MlpKind.NONE if ffn.no_op or ffn.replace_with_linear else MlpKind.DENSE)
        return tuple(out)

    def kv_heads(self, f: Fields, layers: int, heads: int) -> tuple[int, ...] | None:
        out = []
        for block in self._blocks(f, layers):
            group = block.attention.n_heads_in_group
            out.append(heads // group if group else heads)
        return tuple(out)

    def widths(self, f: Fields, layers: int, hidden: int) -> tuple[int, ...] | None:
        out = []
        for block in self._blocks(f, layers):
            mult = block.ffn.ffn_mult
            out.append(_ffn_width(mult, hidden) if mult else 0)
        return tuple(out)


def stated_layer_types(
    f: Fields, layers: int, words: Mapping[str, LayerKind]
) -> tuple[LayerKind, ...] | None:
    """`layer_types` as the config lists it, or None when it does not."""
    stated = f.get("layer_types")
    if stated is None:
        return None
    if len(stated) != layers:
        raise f.error("layer_types", f"must list one type per layer ({layers}), not {len(stated)}")
    try:
        return tuple(words[item] for item in stated)
    except KeyError as missing:
        raise f.error("layer_types", f"unknown layer type {missing}") from None


_MIXER_WORDS: Mapping[str, LayerKind] = {
    "minicpm4": FULL, "minicpm": FULL, "standard": FULL, "attention": FULL, "attn": FULL,
    "lightning": LINEAR, "lightning_attn": LINEAR, "lightning-attn": LINEAR,
}  # fmt: skip


@dataclass(frozen=True)
class RepeatedWords(LayerRule):
    """One word per layer from a list the class repeats to the layer count (SGLang 0.5.23 configs/minicpm.py
    MiniCPMHybridConfig: `(mixer_types × repeats)[:num_hidden_layers]`, its aliases; absent: every layer `absent`;
    a list longer than the layers or an unknown word is refused, as the class raises)."""

    list_field: str = "mixer_types"
    words: Mapping[str, LayerKind] = field(default_factory=lambda: _MIXER_WORDS)
    absent: LayerKind = FULL

    def attention(self, f: Fields, layers: int) -> tuple[LayerKind, ...]:
        stated = f.get(self.list_field)
        if not stated:
            return (self.absent,) * layers
        if len(stated) > layers or set(stated) - set(self.words):
            raise f.error(self.list_field, f"must list at most {layers} of {' '.join(self.words)}")
        repeats = ceil_div(layers, len(stated))
        return tuple(self.words[w] for w in (list(stated) * repeats)[:layers])


def kv_shared_widths(widths: tuple[int, ...], width: int, shared: int, layers: int) -> tuple[int, ...]:
    """Each layer's dense MLP width where the KV-shared layers' is doubled (Gemma-4's `use_double_wide_mlp`):
    the last `shared` layers build 2 × their width, where any are shared (`layer_idx >= first_kv_shared_layer_idx
    > 0`). vLLM gemma4.py Gemma4DecoderLayer, every release with Gemma-4: v0.19.0 :476-487, v0.20.0 :594-605,
    v0.21.0 :593-604, v0.23.0 / v0.24.0 :596-607, v0.27.1 :609-620, v0.28.0 :589-600, v0.30.0 :609-621, v0.31.0
    :596-607, v0.33.0 :595-606, v0.34.0 :617-628; SGLang gemma4_causal.py Gemma4DecoderLayer, 0.5.11 :418-422 (its
    first Gemma-4) to 0.5.23 :586-590 (0.5.12, 0.5.13, 0.5.17, 0.5.20 alike)."""
    first = layers - shared
    each = widths or (width,) * layers
    return tuple(2 * w if 0 < first <= i else w for i, w in enumerate(each))
