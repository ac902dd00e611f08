"""Mixture of experts as data: which layers route to experts, and how big the experts are.

`Moe` names the config fields of one family's experts; its `placement` rule says which layers are MoE
(the rest dense), the way the family's model code decides it: every layer, every `decoder_sparse_step`-th
minus `mlp_only_layers` (Qwen), from `first_k_dense_replace` on every `moe_layer_freq`-th or as a per-layer
list (DeepSeek, GLM, MiMo-V2, MiniMax-M3), every `interleave_moe_layer_step`-th (Llama 4), on a period and
offset (Jamba), or over an index range (ERNIE 4.5).
"""

from __future__ import annotations

from dataclasses import dataclass

from kvtop.domain.architectures.fields import Fields
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.model import MlpKind, MoeSpec
from kvtop.domain.wording import with_article

MOE, DENSE = MlpKind.MOE, MlpKind.DENSE


class Placement:
    """Which layers hold experts."""

    def kinds(self, f: Fields, layers: int) -> tuple[MlpKind, ...]:
        return (MOE,) * layers


EVERY_LAYER = Placement()


@dataclass(frozen=True)
class SparseStep(Placement):
    """Qwen2MoE / Qwen3MoE: MoE where `(i + 1) % decoder_sparse_step == 0` and i not in `mlp_only_layers`."""

    step_field: str = "decoder_sparse_step"
    dense_list_field: str = "mlp_only_layers"
    dense_absent: tuple[int, ...] = ()  # the class's dense layers where the list is absent (IQuest-Q1: layer 0)

    def kinds(self, f: Fields, layers: int) -> tuple[MlpKind, ...]:
        step = f.opt(self.step_field, 1)
        stated = f.get(self.dense_list_field)
        dense_only = set(self.dense_absent if stated is None else stated)
        return tuple(MOE if i not in dense_only and (i + 1) % step == 0 else DENSE for i in range(layers))


@dataclass(frozen=True)
class FirstDense(Placement):
    """DeepSeek-V2/V3 and their kin: dense below `first_k_dense_replace`, then MoE where `i % moe_layer_freq == 0`;
    a `moe_layer_freq` list gives each layer's flag itself (1: MoE), as MiMo-V2 and MiniMax-M3 write it."""

    first_field: str = "first_k_dense_replace"
    freq_field: str = "moe_layer_freq"
    default_first: int = 0  # the dense layers where the config states no first_field (Step3p7TextConfig: 3)

    def kinds(self, f: Fields, layers: int) -> tuple[MlpKind, ...]:
        first = f.opt(self.first_field, self.default_first)
        freq = f.get(self.freq_field)
        if isinstance(freq, list):
            flags = f.per_layer(self.freq_field, layers)
            return tuple(MOE if flag and i >= first else DENSE for i, flag in enumerate(flags))
        step = 1 if freq is None else int(freq)
        return tuple(MOE if i >= first and i % step == 0 else DENSE for i in range(layers))


@dataclass(frozen=True)
class LayerTypes(Placement):
    """A word per layer, "sparse" for MoE (transformers v5's `mlp_layer_types`: AXK1, Laguna); vLLM 0.33.0
    `models/AXK1.py _get_mlp_layer_types` and `models/laguna.py get_mlp_layer_types` build experts exactly
    where the word is "sparse"."""

    types_field: str = "mlp_layer_types"
    absent: Placement | None = None  # the rule where the config states no list (AXK1Config: FirstDense)

    def kinds(self, f: Fields, layers: int) -> tuple[MlpKind, ...]:
        words = f.get(self.types_field)
        if words is None and self.absent is not None:
            return self.absent.kinds(f, layers)
        if not isinstance(words, list) or len(words) < layers:
            raise f.error(self.types_field, f"must name every layer's MLP ({layers})")
        return tuple(MOE if word == "sparse" else DENSE for word in words[:layers])


@dataclass(frozen=True)
class IndexList(Placement):
    """MoE on the layers a comma-separated string names (Step-3.5's published `moe_layers_enum`, "3,4,…,44"):
    vLLM 0.33.0 reads it through transformers' Step3p7TextConfig.__post_init__ (into mlp_layer_types), SGLang
    0.5.23's Step3p5DecoderLayer._is_moe_layer splits it on ","."""

    list_field: str = "moe_layers_enum"
    absent: Placement | None = None  # the rule where the config states no list

    def kinds(self, f: Fields, layers: int) -> tuple[MlpKind, ...]:
        stated = f.get(self.list_field)
        if stated is None and self.absent is not None:
            return self.absent.kinds(f, layers)
        words = [word.strip() for word in str(stated).split(",") if word.strip()]
        if not all(word.isdigit() for word in words):
            raise f.error(self.list_field, "must be layer indices separated by commas")
        moe = {int(word) for word in words}
        return tuple(MOE if i in moe else DENSE for i in range(layers))


@dataclass(frozen=True)
class Interleaved(Placement):
    """Llama 4: MoE on every `interleave_moe_layer_step`-th layer ((i + 1) % step == 0)."""

    step_field: str = "interleave_moe_layer_step"

    def kinds(self, f: Fields, layers: int) -> tuple[MlpKind, ...]:
        step = f.opt(self.step_field, 1)
        return tuple(MOE if (i + 1) % step == 0 else DENSE for i in range(layers))


@dataclass(frozen=True)
class EveryOther(Placement):
    """LongCat-Flash: a decoder layer's two blocks read as two kvtop layers (Geometry.blocks_per_layer), its one
    MoE on the second (odd) of each pair (vLLM 0.33.0 / SGLang 0.5.23 longcat_flash.py: one LongcatMoe a layer)."""

    def kinds(self, f: Fields, layers: int) -> tuple[MlpKind, ...]:
        return tuple(MOE if i % 2 else DENSE for i in range(layers))


@dataclass(frozen=True)
class PeriodOffset(Placement):
    """Jamba: MoE where `i % expert_layer_period == expert_layer_offset`."""

    period_field: str = "expert_layer_period"
    offset_field: str = "expert_layer_offset"

    def kinds(self, f: Fields, layers: int) -> tuple[MlpKind, ...]:
        period, offset = f.opt(self.period_field, 1), f.opt(self.offset_field)
        return tuple(MOE if i % period == offset else DENSE for i in range(layers))


@dataclass(frozen=True)
class IndexRange(Placement):
    """ERNIE 4.5: MoE on layers start … end (inclusive) every `interval` from start."""

    start_field: str = "moe_layer_start_index"
    end_field: str = "moe_layer_end_index"
    interval_field: str = "moe_layer_interval"

    def kinds(self, f: Fields, layers: int) -> tuple[MlpKind, ...]:
        starts, ends = f.get(self.start_field), f.get(self.end_field)
        if isinstance(starts, list) or isinstance(ends, list):  # one range per expert group (ERNIE-4.5-VL)
            return self._groups(f, layers, starts, ends)
        return self._range(f, layers, f.opt(self.start_field), f.opt(self.end_field, layers - 1))

    def _range(self, f: Fields, layers: int, start: int, end: int) -> tuple[MlpKind, ...]:
        end = layers - 1 if end < 0 else end
        interval = f.opt(self.interval_field, 1)
        return tuple(
            MOE if start <= i <= end and (i - start) % interval == 0 else DENSE for i in range(layers)
        )

    def _groups(self, f: Fields, layers: int, starts: object, ends: object) -> tuple[MlpKind, ...]:
        """Each group's range (vLLM 0.33.0 ernie45_vl_moe.py: a layer is MoE where it is in the text group's
        range, and builds each group's experts where in that group's); kvtop books both groups on the same layers,
        so ranges covering other layers are refused."""
        if not (isinstance(starts, list) and isinstance(ends, list) and len(starts) == len(ends) == 2):
            raise f.error(self.start_field, "must be one [text, vision] pair with moe_layer_end_index")
        ranges = {self._range(f, layers, start, end) for start, end in zip(starts, ends, strict=True)}
        if len(ranges) > 1:
            raise UnsupportedModelError(
                f"{self.start_field} / {self.end_field}: the expert groups cover different layers "
                f"({starts}, {ends}); kvtop books both groups on the same layers",
                field=self.start_field,
            )
        return ranges.pop()


@dataclass(frozen=True)
class SparseOnly(Placement):
    """Command-A MoE: every layer MoE; a `mlp_layer_types` "dense" entry is refused, since the engines disagree on it
    (vLLM 0.33.0 models/cohere2_moe.py builds those layers dense from the list; SGLang 0.5.23 reads
    `first_k_dense_replace`, which transformers' Cohere2MoeConfig pops into the list, so it builds every layer MoE)."""

    list_field: str = "mlp_layer_types"

    def kinds(self, f: Fields, layers: int) -> tuple[MlpKind, ...]:
        if "dense" in (f.get(self.list_field) or ()):
            raise UnsupportedModelError(
                "dense prefix layers of a Command-A MoE are not modelled: vLLM builds them dense, SGLang as MoE",
                field=f.prefix + self.list_field, source=f.source,
            )  # fmt: skip
        return (MOE,) * layers


@dataclass(frozen=True)
class Shared:
    """The shared experts' total width: a field (`size_field`), or `count_field` × a size (`size_field`, else
    the routed expert's size); `dense_beside`: the layer's dense MLP runs beside the experts (Gemma-4)."""

    size_field: str | None = None
    count_field: str | None = None
    gate: bool = False  # Qwen's sigmoid gate on the shared expert (a hidden-wide vector)
    same_as_expert: bool = False  # one shared expert as wide as a routed one (Llama 4)
    dense_beside: bool = False
    when_field: str | None = None  # a flag that must be on for the shared experts (HunYuan use_mixed_mlp_moe)
    # `size_field` is the shared experts' total where stated, else `count_field` × the routed expert's size (Param2:
    # vLLM 0.33.0 models/param2moe.py Param2MoEMoEBlock)
    total_else_count: bool = False


@dataclass(frozen=True)
class Moe:
    """One family's experts: the fields that count and size them, and where they are."""

    experts_field: str
    per_token_field: str = "num_experts_per_tok"
    expert_size_field: str = "moe_intermediate_size"
    shared: Shared = Shared()
    placement: Placement = EVERY_LAYER
    expert_bias: bool = False  # gpt-oss experts carry biases
    router_bias: bool = False  # an fp32 routing bias per expert (DeepSeek-V3's e_score_correction_bias)
    router_bias_fp32: bool = True  # False: the bias is the router Linear's own, in the model dtype (gpt-oss)
    router_bias_when: tuple[str, str | bool] | None = (
        None  # … only where this field has this value (topk_method)
    )
    router_fp32: bool = False  # the router matrix in fp32 (GLM-4.5, MiMo-V2: the engines' gate params_dtype)
    latent_size_field: str | None = None  # experts in a latent width (NemotronH moe_latent_size)
    latent_modules: tuple[str, str] = ("fc1_latent_proj", "fc1_latent_proj")  # the projections in and out
    latent_norm_field: str | None = None  # a flag: an RMSNorm on the latent (Kimi-K3 latent_moe_use_norm)
    optional: bool = False  # a dense model when the experts field is absent or null (Gemma-4 31B, MiniCPM)
    dense_at_most: int = 0  # a dense model when the experts field is at most this (HunYuan's num_experts 1)
    extra_norms: int = (
        0  # hidden-wide vectors an MoE layer holds beside its experts (Gemma-4's norms, router scale)
    )
    per_expert_scale: bool = False
    hash_layers_field: str | None = None  # the first N layers route by token id (DeepSeek-V4 num_hash_layers)
    gated_experts: bool = False  # gated experts beside an ungated dense MLP (Moondream3)
    # zero-computation experts: router rows (and score-bias entries) without weights, and the field naming their
    # kind (LongCat-Flash zero_expert_num, zero_expert_type)
    zero_experts_field: str | None = None
    zero_type_field: str | None = None
    # (a field, the other names one family's configs give it …): the first stated is read (Step-3.5: transformers'
    # n_routed_experts, the published moe_num_experts / moe_top_k, AIC's num_experts)
    aliases: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # the experts field and the expert width as [text, vision] lists, two expert groups a layer (ERNIE-4.5-VL): the
    # first read as the routed experts, the second as MoeSpec.second_group_*
    groups: bool = False
    # a router MLP of this field's width in place of the router matrix, its EDA scale and skip route where these flags
    # are on (Zaya's zaya_mlp_expansion, zaya_use_eda, zaya_use_mod: SGLang 0.5.23 models/zaya.py ZayaRouter)
    router_mlp_fields: tuple[str, str, str] | None = None
    expert_size_divisor: int = 1  # the expert width is the field ÷ this (Zaya: ffn_hidden_size // 2, zaya.py 1230)

    def _name(self, f: Fields, field: str) -> str:
        """`field`, or the first of its aliases the config states where it does not state `field` itself."""
        others = dict(self.aliases).get(field, ())
        return next((name for name in (field, *others) if f.get(name) is not None), field)

    def present(self, f: Fields) -> bool:
        """Whether this config has experts at all (an optional layout is absent without its count)."""
        stated = f.get(self._name(f, self.experts_field))
        if self.dense_at_most and isinstance(stated, int) and stated <= self.dense_at_most:
            return False
        return not self.optional or bool(stated)

    def _groups(self, f: Fields) -> tuple[tuple[int, int], tuple[int, int]]:
        """((experts, width) of the first group, of the second) from the [text, vision] lists."""
        counts, widths = f.get(self.experts_field), f.get(self.expert_size_field)
        if isinstance(counts, int) and not isinstance(counts, bool) and isinstance(widths, list):
            # one count for both groups beside a [text, vision] width pair: transformers' converted layout of the
            # family (ERNIE-4.5-VL's Ernie4_5_VLMoeTextConfig, model_type ernie4_5_vl_moe_text, transformers 5.20:
            # moe_num_experts int, MoE layers from mlp_layer_types, the tower's fields renamed) — a layout, not a type
            # slip, so it is named not modelled rather than refused as "must be one pair" (#26 config type audit)
            raise UnsupportedModelError(
                f"one expert count ({counts}) for both expert groups beside {with_article(self.expert_size_field)} pair is a "
                f"converted layout kvtop does not model: it reads the checkpoint's own format, one [text, vision] "
                f"pair for each (with each group's layer range)",
                field=f.prefix + self.experts_field,
                source=f.source,
            )
        for name, value in ((self.experts_field, counts), (self.expert_size_field, widths)):
            if not isinstance(value, list) or len(value) != 2:
                raise f.error(name, "must be one [text, vision] pair")
        assert isinstance(counts, list) and isinstance(widths, list)
        return (counts[0], widths[0]), (counts[1], widths[1])

    def spec(self, f: Fields) -> MoeSpec:
        second = (0, 0)
        if self.groups:
            (experts, expert_size), second = self._groups(f)
        else:
            experts = f.need(self._name(f, self.experts_field))
            expert_size = f.need(self._name(f, self.expert_size_field)) // self.expert_size_divisor
        per_token = f.need(self._name(f, self.per_token_field))
        if per_token > experts or experts < 1:
            raise f.error(self.per_token_field, f"{per_token} experts per token out of {experts}")
        return MoeSpec(
            num_routed_experts=experts,
            experts_per_token=per_token,
            expert_intermediate_size=expert_size,
            shared_intermediate_size=self._shared_size(f, expert_size),
            shared_expert_gate=self.shared.gate and self._shared_size(f, expert_size) > 0,
            expert_bias=self.expert_bias,
            router_bias=self.router_bias
            or (
                self.router_bias_when is not None
                and f.get(self.router_bias_when[0]) == self.router_bias_when[1]
            ),
            router_bias_fp32=self.router_bias_fp32,
            router_fp32=self.router_fp32,
            latent_size=f.opt(self.latent_size_field) if self.latent_size_field else 0,
            latent_modules=self.latent_modules,
            latent_norm=bool(self.latent_norm_field and self.latent_size_field and f.opt(self.latent_size_field)
                             and f.flag(self.latent_norm_field)),  # fmt: skip
            extra_norms=self.extra_norms,
            per_expert_scale=self.per_expert_scale,
            experts_beside_mlp=self.shared.dense_beside,
            hash_layers=f.opt(self.hash_layers_field) if self.hash_layers_field else 0,
            gated_experts=self.gated_experts,
            zero_experts=f.opt(self.zero_experts_field) if self.zero_experts_field else 0,
            zero_expert_type=str(f.get(self.zero_type_field) or "") if self.zero_type_field else None,
            second_group_experts=second[0],
            second_group_intermediate_size=second[1],
            **self._router_mlp(f),
        )

    def _router_mlp(self, f: Fields) -> dict[str, int | bool]:
        if self.router_mlp_fields is None:
            return {}
        width, eda, skip = self.router_mlp_fields
        return {"router_mlp": f.need(width), "router_mlp_eda": f.flag(eda), "router_mlp_skip": f.flag(skip)}

    def _shared_size(self, f: Fields, expert_size: int) -> int:
        s = self.shared
        if s.dense_beside:
            return f.need("intermediate_size")
        if s.same_as_expert:
            return expert_size
        if s.when_field is not None and not f.flag(s.when_field):
            return 0
        if s.total_else_count and s.size_field and s.count_field:
            return f.opt(s.size_field) or f.opt(s.count_field) * expert_size
        size = f.opt(s.size_field) if s.size_field else expert_size
        if s.count_field is not None:
            return f.opt(s.count_field) * size
        return size if s.size_field else 0
