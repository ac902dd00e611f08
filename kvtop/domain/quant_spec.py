"""QuantSpec: a checkpoint's weight quantization as kvtop's books read it (bytes per parameter with scales, the
modules it spares); `kvtop.domain.quant` reads it from config.json and the quantization files."""

from __future__ import annotations

import fnmatch
import functools
import re

from pydantic import ConfigDict

from kvtop.domain.fresh_copy import FreshCopyModel
from kvtop.domain.rounding import ceil_div

MTP_PREFIX = "mtp."  # the checkpoints' MTP modules (Qwen3-Next/3.5: `mtp.fc`, `mtp.layers.0...`)
ROUTED_EXPERTS = ".mlp.experts"  # the weights book's name of a layer's routed experts (not `.mlp.shared_experts`)


# Mixtral-style MoE module names as kvtop names them (MiniMax-M3-NVFP4's quantized_layers list
# `block_sparse_moe.experts.N.w1` and `block_sparse_moe.shared_experts.down_proj`; kvtop's book asks for
# `mlp.experts` and `mlp.shared_experts`)
# NemotronH's `backbone.layers.N.mixer.experts.E.up_proj` likewise (its mixer is the layer's one block)
_MOE_NAMES = ((".block_sparse_moe.", ".mlp."), (".block_sparse_moe", ".mlp"), (".mixer.experts", ".mlp.experts"),
              (".mixer.shared_experts", ".mlp.shared_experts"))  # fmt: skip


def module_from_layers(name: str) -> str:
    """A module name from `layers.` on (`model.language_model.layers.0.mlp` → `layers.0.mlp`), a Mixtral-style
    `block_sparse_moe` read as kvtop's `mlp`; an MTP layer's (`mtp.layers.0.mlp`) kept whole, never the target's
    layer 0 (vLLM's Qwen3-Next/3.5 predictor names it so: engines/vllm/mtp_build.py)."""
    at = -1 if name.startswith(MTP_PREFIX) else name.find("layers.")
    name = name[at:] if at >= 0 else name
    for old, new in _MOE_NAMES:
        if old in name:
            return name.replace(old, new, 1)
    return name


class QuantSpec(FreshCopyModel):
    """How a checkpoint stores its linear weights."""

    model_config = ConfigDict(frozen=True)

    method: str = "none"  # none | fp8 | nvfp4 | mxfp4 | int4 | int8 (AWQ/GPTQ/compressed-tensors)
    weight_bits: int = 16
    group_size: int | None = None  # weights sharing one scale along the input dim
    block: tuple[int, int] | None = None  # FP8 block scales (rows, cols)
    scale_bytes: int = 0  # bytes per scale
    zero_point_bits: int = 0  # asymmetric int formats store a zero point per group
    per_tensor: bool = False  # one scale per matrix (FP8 per-tensor), not one per output row
    activation_scale_bytes: int = 0  # a static activation scale per matrix (ModelOpt FP8's fp32 input_scale)
    global_scale_bytes: int = 0  # a per-tensor scale over the group scales (NVFP4's fp32 weight_scale_2)
    # an input_scale per matrix though the activations stay in the model dtype (ModelOpt W4A16_NVFP4); its width is
    # the engine's (`StageParts.unused_input_scale_bytes`)
    unused_input_scale: bool = False
    # compressed-tensors weight-only int (WNA16: no input_activations): vLLM builds its MoE with
    # CompressedTensorsWNA16MoEMethod, whose experts hold shape tensors (`StageParts.wna16_expert_scalars`)
    weight_only_int: bool = False
    # a second level of scales over the first (bitsandbytes double quantization: an fp32 scale per 256 absmax)
    second_group: int = 0
    second_scale_bytes: int = 0
    # what each matrix's state holds beside its scales, whole (bitsandbytes 4-bit's QuantState on the GPU: the fp32
    # code of 16 values, and under double quantization the nested code of 256 and the fp32 offset)
    state_bytes: int = 0
    act_order: bool = False  # GPTQ desc_act: quantized in activation order (a g_idx in the checkpoint)
    excluded: tuple[str, ...] = ()  # module name patterns left at the checkpoint dtype
    quantizes_embedding: bool = False
    kv_cache_quant_algo: str | None = None  # e.g. "FP8" from the checkpoint
    # hf_quant_config.json's kv_cache_quant_algo beside a config.json ModelOpt MIXED_PRECISION block (with NVFP4
    # layers) that states no KV algorithm: an engine that falls back to the file then reads it
    # (`KvStorage.reads_mixed_quant_file_kv`; SGLang 0.5.23 weight_utils.get_quant_config)
    quant_file_kv_cache_quant_algo: str | None = None
    # who wrote the format, as the checkpoint names it: modelopt, fp8, fbgemm_fp8, mxfp4, awq, gptq,
    # compressed-tensors, quark (engines check some against the GPU: docs/engines/sglang.md §4.5)
    scheme: str = ""
    source: str = "config.json"
    # config.json's top-level `quantization_config.quant_method` as written ('' where that block states none; None
    # where config.json has no top-level block): the string SGLang's server arguments take without `--quantization`
    # (`get_quantization_config(hf_config)`, sglang/nvfp4_runner.py), compared as written
    config_quant_method: str | None = None
    # the block was read from ModelOpt's separate hf_quant_config.json because config.json states none (ModelOpt
    # 0.29.0 and before): SGLang's server arguments then see no quant_method (sglang/nvfp4_runner.py
    # `states_quant_block`), though its ModelConfig reads the file
    from_quant_file: bool = False
    # ModelOpt MIXED_PRECISION: each quantized module's own format, by its name from `layers.` on
    # (`quantized_layers`); a module it does not list stays at the checkpoint dtype
    mixed: tuple[tuple[str, QuantSpec], ...] = ()
    # ModelOpt's fields with nothing that claims them for ModelOpt: no `modelopt*` quant_method, and not under a
    # `quantization` section beside ModelOpt's producer (a bare top-level `quant_algo`, or an hf_quant_config.json
    # that names no producer); an engine may find no quantization method in them (its `LoadCasts`)
    modelopt_unclaimed: bool = False
    # the checkpoint states a KV-cache scheme of its own outside ModelOpt's fields (compressed-tensors'
    # `kv_cache_scheme`): its attention layers load KV scales (an engine may refuse fp8_e5m2 KV beside them)
    kv_scheme_stated: bool = False
    # the format the checkpoint states that the engine serving it does not apply, and why ('': none); the weights
    # and the KV cache are then the model dtype's
    ignored: str = ""
    # NVFP4 read from hf_quant_config.json's nested `quantization` section, which states no group_size (nor
    # config_groups): kvtop and vLLM take NVFP4's 16; SGLang's nested reading needs one (sglang/checks.py)
    nested_group_size_missing: bool = False
    # the routed experts' own format where the checkpoint stores them apart from its other linear layers (a
    # hybrid FP8 checkpoint's NVFP4 experts; DeepSeek-V4's `expert_dtype: fp4`, MXFP4): `format_of` gives it
    # for a routed-expert module (`.mlp.experts`), the rest of the checkpoint keeps this spec's
    routed_experts: QuantSpec | None = None
    # compressed-tensors config_groups of different weight formats: each group's targets (`re:` a regular expression
    # matched from the name's start, `Linear` every linear module, else a module's name) and its format, in the
    # config's order; a module no target names stays at the checkpoint dtype (vLLM 0.33.0 compressed_tensors.py
    # get_scheme_dict / utils.find_matched_target: the first target that matches the layer's name)
    targeted: tuple[tuple[tuple[str, ...], QuantSpec], ...] = ()
    # what of the checkpoint's format kvtop cannot read exactly, and the field that states it ('': all read): the
    # weights book refuses it by name (`targeted` groups where the engine's module names are not known)
    unread: str = ""
    unread_field: str = ""

    @property
    def quantized(self) -> bool:
        return self.method != "none"

    def format_of(self, module_names: tuple[str, ...]) -> QuantSpec | None:
        """The format a module (any of its representative names) is stored in; None: the checkpoint dtype."""
        if self.routed_experts is not None and any(ROUTED_EXPERTS in name for name in module_names):
            return self.routed_experts.format_of(module_names)
        if self.targeted:
            if self.spares(module_names):
                return None
            return next((fmt for name in module_names for targets, fmt in self.targeted
                         if any(_targets(target, name) for target in targets)), None)  # fmt: skip
        if self.mixed:
            for name in module_names:
                found = self._mixed_index.get(module_from_layers(name))
                if found is not None:
                    return found
            return None
        if not self.quantized or self.spares(module_names):
            return None
        return self

    @functools.cached_property  # frozen: built once (a MIXED_PRECISION checkpoint lists thousands of modules)
    def _mixed_index(self) -> dict[str, QuantSpec]:
        """`mixed` by every name a module of it answers to: the module itself and each dotted prefix of it (the
        `layers.` name of a module inside it), the first module in `mixed`'s order winning, as a scan of `mixed`
        for `module == key or module.startswith(key + ".")` finds it; each book asks per layer and probe."""
        index: dict[str, QuantSpec] = {}
        for module, fmt in self.mixed:
            parts = module.split(".")
            for end in range(1, len(parts) + 1):
                index.setdefault(".".join(parts[:end]), fmt)
        return index

    def matrix_bytes(self, rows: int, cols: int, dtype_bytes: int) -> int:
        """Bytes of one (rows × cols) weight matrix stored in this format, scales included."""
        params = rows * cols
        if not self.quantized:
            return params * dtype_bytes
        data = params * self.weight_bits // 8
        if self.per_tensor:
            scales = 1
        elif self.block is not None:
            scales = ceil_div(rows, self.block[0]) * ceil_div(cols, self.block[1])
        elif self.group_size:
            scales = rows * ceil_div(cols, self.group_size)
        else:  # per-channel: one scale per output row
            scales = rows
        zeros = scales * self.zero_point_bits // 8
        second = ceil_div(scales, self.second_group) * self.second_scale_bytes if self.second_group else 0
        return (data + scales * self.scale_bytes + zeros + second + self.activation_scale_bytes
                + self.global_scale_bytes + self.state_bytes)  # fmt: skip

    @property
    def tensor_scale_bytes(self) -> int:
        """The bytes of one matrix's scalar scales (per-tensor weight scale, static input scale): every rank that
        holds a shard of the matrix holds them whole (PerTensorScaleParameter), so they never split over TP."""
        if not self.quantized:
            return 0
        fixed = self.activation_scale_bytes + self.global_scale_bytes + self.state_bytes
        return (self.scale_bytes if self.per_tensor else 0) + fixed

    def spares(self, module_names: tuple[str, ...]) -> bool:
        """True if the checkpoint leaves a module (any of its representative names) unquantized. A `re:` pattern is
        matched on a layer's own name, as compressed-tensors matches it (vLLM 0.33.0 and SGLang 0.5.23
        compressed_tensors/utils.py should_ignore_layer: the layer's name, or each shard's of a fused one), so not on a
        name asked that is the parent of another name asked (a module holding the layer: `re:.*mlp\\.shared_expert$`
        spares no shared-expert projection)."""
        return any(_spared(self.excluded, name, not _parent(name, module_names)) for name in module_names)


@functools.lru_cache(maxsize=65_536)
def _targets(target: str, name: str) -> bool:
    """Whether a compressed-tensors target names a linear module (compressed_tensors' is_equal_or_regex_match on the
    layer's name; `Linear` matches every linear layer's class, as vLLM's find_matched_target tries it last)."""
    if target.startswith("re:"):
        return re.match(target[3:], name) is not None
    return target in ("Linear", name)


def _parent(name: str, names: tuple[str, ...]) -> bool:
    """Whether `name` is a dotted prefix of another of `names` (a module holding that one)."""
    return any(other.startswith(name + ".") for other in names)


@functools.lru_cache(maxsize=256)
def _exclusion_index(
    excluded: tuple[str, ...],
) -> tuple[frozenset[str], tuple[re.Pattern[str], ...], tuple[re.Pattern[str], ...]]:
    """(the plain module names, the wildcard patterns compiled, the `re:` ones): a 94-layer checkpoint lists hundreds.
    A `re:` entry is a regular expression matched from the name's start (compressed-tensors' `_is_equal_or_regex_match`,
    vLLM 0.33.0 quantization/compressed_tensors/utils.py: Kimi-K2.5's `re:.*self_attn.*`)."""
    plain = frozenset(p for p in excluded if not p.startswith("re:") and not any(c in p for c in "*?["))
    globs = tuple(re.compile(f"(?:{fnmatch.translate(p)})|(?:{fnmatch.translate(p + '.*')})")
                  for p in excluded if p not in plain and not p.startswith("re:"))  # fmt: skip
    return plain, globs, tuple(re.compile(p[3:]) for p in excluded if p.startswith("re:"))


@functools.lru_cache(maxsize=65_536)
def _spared(excluded: tuple[str, ...], name: str, layer: bool = True) -> bool:
    """Whether `name` is an excluded module or inside one (the name itself or a dotted prefix of it), or matches
    an excluded wildcard pattern, or (`layer`: the name is a layer's own) an excluded `re:` pattern."""
    plain, globs, regexes = _exclusion_index(excluded)
    parts = name.split(".")
    if any(".".join(parts[:end]) in plain for end in range(1, len(parts) + 1)):
        return True
    return any(pattern.match(name) for pattern in (*globs, *(regexes if layer else ())))


NO_QUANT = QuantSpec()
