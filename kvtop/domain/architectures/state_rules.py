"""Recurrent state layers as data: the config fields that size one layer's conv and temporal state.

Every kind reduces to `StateSpec`'s terms, as the engines shape it (vLLM `mamba_utils.MambaStateShapeCalculator`,
SGLang `configs/mamba_utils.py`): conv channels `inner + 2 × groups × state` over `kernel − 1` positions, and a
temporal state of `heads × head_dim × state` elements.

- Mamba2 (NemotronH, Granite-4, Falcon-H1, Mamba2): heads × head_dim values, B and C per group.
- Gated DeltaNet (Qwen3-Next, Qwen3.5): q and k per key head (key_dim), v per value head; state v × k per head.
- Mamba1 (Jamba, Mamba, FalconMamba): d_inner = expand × hidden channels, state d_inner × d_state
  (read as d_inner heads of head_dim 1; SGLang's `create_full_rank`).
- Kimi Delta Attention: q, k, v each head × head_dim with a short conv; state head_dim × head_dim per head.
- Short conv (LFM2): the conv state only, hidden × (L_cache − 1).
- Lightning attention (Ling-2.5, MiniCPM-SALA): no conv; a state of head_dim × head_dim per head.
- JetBlock (Jet-Nemotron): sized as Mamba2's by SGLang, value heads × key head per head.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvtop.domain.architectures.fields import Fields
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.model import StateKind, StateSpec
from kvtop.domain.rounding import ceil_div
from kvtop.domain.wording import with_article

_HALF = ("bfloat16", "float16", "bf16", "fp16")


class StateRule:
    def spec(self, f: Fields) -> StateSpec:  # pragma: no cover - every rule overrides it
        raise NotImplementedError


@dataclass(frozen=True)
class Mamba2State(StateRule):
    heads_field: str = "mamba_num_heads"
    head_dim_field: str = "mamba_head_dim"
    groups_field: str = "n_groups"
    state_field: str = "ssm_state_size"
    kernel_field: str = "conv_kernel"
    ssm_dtype_field: str | None = "mamba_ssm_cache_dtype"
    expand_field: str | None = None  # heads from expand × hidden ÷ head_dim when the heads field is absent
    norm_field: str | None = (
        None  # a flag for the gated RMSNorm (Falcon-H1's mamba_rms_norm); None: always one
    )

    def spec(self, f: Fields) -> StateSpec:
        head_dim = f.need(self.head_dim_field)
        if f.get(self.heads_field) is None and self.expand_field is not None:
            heads = f.need(self.expand_field) * f.need("hidden_size") // head_dim
        else:
            heads = f.need(self.heads_field)
        groups = f.need(self.groups_field)
        state = f.need(self.state_field)
        dtype = f.get(self.ssm_dtype_field) if self.ssm_dtype_field else None
        return StateSpec(
            kind=StateKind.MAMBA2,
            conv_dim=heads * head_dim + 2 * groups * state,
            conv_kernel=f.need(self.kernel_field),
            num_heads=heads,
            head_dim=head_dim,
            state_size=state,
            n_groups=groups,
            inner_size=heads * head_dim,
            ssm_dtype_bytes=2 if (dtype or "float32") in _HALF else 4,
            # the file's own field, not a class default (transformers 5.x NemotronHConfig's float32, which the
            # checkpoint's own class that vLLM 0.13.0 runs has not: its release default float16 applies)
            ssm_dtype_stated=self.ssm_dtype_field is not None and f.stated(self.ssm_dtype_field),
            gated_norm=f.flag(self.norm_field) if self.norm_field else True,
        )


@dataclass(frozen=True)
class GatedDeltaNetState(StateRule):
    key_heads_field: str = "linear_num_key_heads"
    key_dim_field: str = "linear_key_head_dim"
    value_heads_field: str = "linear_num_value_heads"
    value_dim_field: str = "linear_value_head_dim"
    kernel_field: str = "linear_conv_kernel_dim"
    ssm_dtype_field: str | None = None  # Qwen3.5's mamba_ssm_dtype (both engines honour it; SGLang from 0.5.9)
    a_log_fp32: bool = True  # False: A_log in the model dtype (vLLM 0.33.0 olmo_gdn_linear_attn.py)

    def spec(self, f: Fields) -> StateSpec:
        key_heads, key_dim = f.need(self.key_heads_field), f.need(self.key_dim_field)
        value_heads, value_dim = f.need(self.value_heads_field), f.need(self.value_dim_field)
        dtype = f.get(self.ssm_dtype_field) if self.ssm_dtype_field else None
        return StateSpec(
            kind=StateKind.GATED_DELTA_NET,
            conv_dim=2 * key_heads * key_dim + value_heads * value_dim,
            conv_kernel=f.need(self.kernel_field),
            num_heads=value_heads,
            head_dim=value_dim,
            state_size=key_dim,
            n_groups=key_heads,
            inner_size=value_heads * value_dim,
            ssm_dtype_bytes=2 if (dtype or "float32") in _HALF else 4,
            ssm_dtype_stated=dtype is not None,
            a_log_fp32=self.a_log_fp32,
        )


@dataclass(frozen=True)
class Mamba1State(StateRule):
    expand_field: str = "mamba_expand"
    state_field: str = "mamba_d_state"
    kernel_field: str = "conv_kernel"
    dt_rank_field: str = "mamba_dt_rank"
    inner_field: str | None = None  # d_inner stated directly (MambaConfig's intermediate_size)
    dt_bc_norms: bool = True  # Jamba's RMSNorms on dt, B and C (JambaMambaMixer)

    def spec(self, f: Fields) -> StateSpec:
        hidden = f.need("hidden_size")
        inner = f.need(self.inner_field) if self.inner_field else f.need(self.expand_field) * hidden
        dt_rank = f.get(self.dt_rank_field)
        return StateSpec(
            kind=StateKind.MAMBA1,
            conv_dim=inner,
            conv_kernel=f.need(self.kernel_field),
            num_heads=inner,
            head_dim=1,
            state_size=f.need(self.state_field),
            n_groups=0,
            inner_size=inner,
            dt_rank=ceil_div(hidden, 16) if dt_rank in (None, "auto") else int(dt_rank),
            dt_bc_norms=self.dt_bc_norms,
        )


@dataclass(frozen=True)
class KimiDeltaState(StateRule):
    """Kimi-Linear's KDA: `linear_attn_config` (num_heads, head_dim, short_conv_kernel_size)."""

    def spec(self, f: Fields) -> StateSpec:
        linear = f.get("linear_attn_config")
        if linear is None:
            raise f.error("linear_attn_config", f"missing ({with_article(f.model_type)} config needs it)")
        heads, head_dim, kernel = linear.num_heads, linear.head_dim, linear.short_conv_kernel_size
        if heads is None or head_dim is None or kernel is None:
            raise f.error("linear_attn_config", "must give num_heads, head_dim and short_conv_kernel_size")
        return StateSpec(
            kind=StateKind.KIMI_DELTA,
            conv_dim=3 * heads * head_dim,
            conv_kernel=kernel,
            num_heads=heads,
            head_dim=head_dim,
            state_size=head_dim,
            n_groups=heads,
            inner_size=heads * head_dim,
            full_rank_gate=bool(linear.use_full_rank_gate),
            kda_layers_listed=bool(linear.kda_layers),
        )


@dataclass(frozen=True)
class BailingKdaState(StateRule):
    """Ling-3's KDA (vLLM 0.33.0 / SGLang 0.5.23 models/bailing_moe_v3.py BailingMoeV3KimiDeltaAttention / BailingKDA):
    num_attention_heads × head_dim, a short conv of short_conv_kernel_size on q, k and v; under no_kda_lora full-rank
    forget and output gates (f_proj, g_proj), else (the engines' default, False) Kimi-Linear's low-rank f_a / g_a
    (head_dim, whole) and f_b / g_b (split): SGLang 0.5.23 kimi_linear.py KimiDeltaAttention (fused_qkvbfg_a_proj,
    fused_fg_b_proj); vLLM 0.33.0 refuses it (engines/vllm/config_checks.py); the state Kimi-Linear's (`MambaStateShapeCalculator.kda_state_shape`). `rope_head_dim`: the width vLLM's
    BailingHybridConfig reads instead of head_dim (`LoadCasts.state_width_from_rope`)."""

    def spec(self, f: Fields) -> StateSpec:
        heads, head_dim = f.need("num_attention_heads"), f.need("head_dim")
        layers, group = f.need("num_hidden_layers"), f.need("layer_group_size")
        if layers % group:  # SGLang asserts it; vLLM makes the layers past the last group MLA
            raise UnsupportedModelError(
                f"{layers} layers in groups of {group} (SGLang 0.5.23 bailing_moe_v3.py asserts num_layers % "
                "layer_group_size == 0; vLLM 0.33.0's _is_kda_layer makes the remainder MLA) is not modelled",
                field=f.prefix + "layer_group_size", source=f.source,
            )  # fmt: skip
        # SGLang 0.5.23 configs/bailing_hybrid.py defaults no_kda_lora=False (vLLM 0.33.0's getattr likewise)
        full_rank = f.flag("no_kda_lora")
        return StateSpec(
            kind=StateKind.KIMI_DELTA,
            conv_dim=3 * heads * head_dim,
            conv_kernel=f.need("short_conv_kernel_size"),
            num_heads=heads,
            head_dim=head_dim,
            state_size=head_dim,
            n_groups=heads,
            inner_size=heads * head_dim,
            full_rank_gate=full_rank,
            full_rank_forget=full_rank,
            rope_head_dim=f.need("qk_rope_head_dim"),
        )


@dataclass(frozen=True)
class ShortConvState(StateRule):
    """LFM2's gated short convolution: hidden channels over `conv_L_cache − 1` positions, no temporal state."""

    kernel_field: str = "conv_L_cache"

    def spec(self, f: Fields) -> StateSpec:
        hidden = f.need("hidden_size")
        return StateSpec(
            kind=StateKind.SHORT_CONV,
            conv_dim=hidden,
            conv_kernel=f.need(self.kernel_field),
            num_heads=0,
            head_dim=0,
            state_size=0,
            n_groups=0,
            inner_size=hidden,
        )


@dataclass(frozen=True)
class LightningState(StateRule):
    """Lightning attention (MiniMax's kernel): q, k, v of `heads` × `head_dim` each, no conv, a state of
    head_dim × head_dim per head (vLLM 0.33.0 mamba_utils.py `linear_attention_state_shape`: (heads ÷ TP, head_dim,
    head_dim); SGLang 0.5.23 configs/bailing_hybrid.py `mamba2_cache_params`: Mamba2StateShape with no conv
    (conv_kernel 1, n_groups 0), state_size = head_dim). Read as a Mamba2 state of no conv: conv_kernel 1, the
    temporal state heads × head_dim × head_dim.

    `rope_field`: the width an engine reads instead of head_dim where its config class replaces it (StateSpec's
    rope_head_dim; None: no engine does)."""

    heads_field: str = "num_attention_heads"
    head_dim_field: str = "head_dim"
    qk_norm_field: str | None = "use_qk_norm"
    rope_field: str | None = "qk_rope_head_dim"
    gate_field: str | None = None  # a flag for the output gate projection (None: always one)
    norm_field: str | None = None  # a flag for the output norm (None: always one)
    # the fields read where heads_field / head_dim_field are absent (MiniCPMHybridConfig: lightning_nh falls back
    # to num_attention_heads, lightning_head_dim to head_dim)
    heads_fallback: str | None = None
    head_dim_fallback: str | None = None

    def _read(self, f: Fields, name: str, fallback: str | None) -> int:
        return f.need(fallback) if fallback is not None and f.get(name) is None else f.need(name)

    def spec(self, f: Fields) -> StateSpec:
        heads = self._read(f, self.heads_field, self.heads_fallback)
        head_dim = self._read(f, self.head_dim_field, self.head_dim_fallback)
        return StateSpec(
            kind=StateKind.LIGHTNING,
            conv_dim=0,
            conv_kernel=1,
            num_heads=heads,
            head_dim=head_dim,
            state_size=head_dim,
            n_groups=0,
            inner_size=heads * head_dim,
            qk_norm=f.flag(self.qk_norm_field) if self.qk_norm_field else False,
            gate_proj=f.flag(self.gate_field) if self.gate_field else True,
            gated_norm=f.flag(self.norm_field) if self.norm_field else True,
            rope_head_dim=f.need(self.rope_field) if self.rope_field else 0,
        )


JET = "efficient_attention_config.jet"


@dataclass(frozen=True)
class JetBlockState(StateRule):
    """Jet-Nemotron's JetBlock (SGLang 0.5.23 models/jet_nemotron.py; its state configs/jet_nemotron.py
    `mamba2_cache_params`): `efficient_attention_config.jet`'s num_heads of head_dim keys and int(head_dim × expand_v)
    values; SGLang sizes its state as Mamba2's (Mamba2StateShape.create: intermediate_size the value width, n_groups
    num_heads, state_size head_dim, conv over value + 2 × key channels of which the dynamic conv uses the last value
    width), the temporal state heads × value head × key head."""

    def spec(self, f: Fields) -> StateSpec:
        heads, head_k = f.need(f"{JET}.num_heads"), f.need(f"{JET}.head_dim")
        expand = f.get(f"{JET}.expand_v")
        if expand is None:
            raise f.error(f"{JET}.expand_v", f"missing ({with_article(f.model_type)} config needs it)")
        head_v = int(head_k * expand)  # JetBlock.__init__: int(head_k_dim * expand_v), truncated
        return StateSpec(
            kind=StateKind.JET,
            conv_dim=heads * head_v + 2 * heads * head_k,
            conv_kernel=f.need(f"{JET}.conv_size"),
            num_heads=heads,
            head_dim=head_v,
            state_size=head_k,
            n_groups=heads,
            inner_size=heads * head_v,
            dconv_reduction=f.need(f"{JET}.dconv_generator_reduction"),
        )


@dataclass(frozen=True)
class CcaState(StateRule):
    """Zaya's compressed convolutional attention (SGLang 0.5.23 configs/zaya.py `mamba2_cache_params`, 246-303):
    on every CCA layer a conv buffer of (num_attention_heads + num_key_value_heads) × head_dim channels split by TP
    over cca_time0 + cca_time1 − 2 positions, a second of hidden_size × 1 whole on every rank (`whole_conv`: it
    feeds the replicated value projections), no temporal state ((1, 1, 0)); both in the conv dtype (bf16)."""

    time0_field: str = "cca_time0"
    time1_field: str = "cca_time1"

    def spec(self, f: Fields) -> StateSpec:
        heads, kv_heads, head_dim = f.need("num_attention_heads"), f.need("num_key_value_heads"), f.need("head_dim")
        time0, time1 = f.need(self.time0_field), f.need(self.time1_field)
        return StateSpec(
            kind=StateKind.CCA,
            conv_dim=(heads + kv_heads) * head_dim,
            conv_kernel=time0 + time1 - 1,  # the state keeps conv_kernel − 1 = (time0 − 1) + (time1 − 1) positions
            num_heads=kv_heads,  # the heads TP must split, never replicate (models/zaya.py 465-475 asserts it)
            head_dim=head_dim,
            state_size=0,
            n_groups=kv_heads,
            inner_size=(heads + kv_heads) * head_dim,
            whole_conv=f.need("hidden_size"),
            conv_kernels=(time0, time1),
        )
