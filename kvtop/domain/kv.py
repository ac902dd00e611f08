"""The KV book: bytes per token per rank, per pool (full, sliding window, DSA index, state, ring, cross).

Per layer and token, MHA/GQA/MQA keep `kv_heads_per_rank × (head_dim + v_head_dim)` elements
(K and V widths may differ); MLA keeps one latent of `kv_lora_rank + qk_rope_head_dim`,
never divided by attention TP; DSA adds the indexer key. Linear-attention / Mamba layers
keep a fixed state per request instead (kv_state.py), and a circular buffer (kv_ring.py) one page per request.
An encoder-decoder's cross-attention layers keep the encoder's tokens (`KvStorage.encoder_decoder`).
FP8 is one byte per element; FP4 is half a byte plus a one-byte scale per 16 elements; MXFP8 one
byte plus a scale per 32. INT8 / INT4 (LMDeploy's `quant_policy` 8 / 4) are one byte / half a byte per
element, plus a scale and a zero point in the model's dtype per token, per head, for K and for V where the
engine keeps them (`KvStorage`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.gpus import NO_GPU, CapabilityFamily
from kvtop.domain.kv_state import state_bytes_per_request
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import AttentionKind, LayerKind, ModelSpec
from kvtop.domain.rounding import ceil_div

PoolName = Literal["full", "swa", "dsa_index", "state", "ring", "cross"]
KvFormat = Literal["bf16", "fp16", "fp32", "fp8_e4m3", "fp8_e5m2", "fp8_ds_mla", "fp4", "mxfp8", "int8", "int4"]
# the two FP8 element formats of a plain KV cache (1 B an element); `fp8_ds_mla` is DeepSeek-V3.2's packed row, apart
FP8_KV_FORMATS: tuple[KvFormat, ...] = ("fp8_e4m3", "fp8_e5m2")
# … and with it every FP8 KV format (1 B an element), the packed DSA row included
ANY_FP8_KV_FORMATS: tuple[KvFormat, ...] = (*FP8_KV_FORMATS, "fp8_ds_mla")

KV_FORMAT_ALIASES: dict[str, KvFormat] = {
    "bf16": "bf16", "bfloat16": "bf16", "fp16": "fp16", "float16": "fp16", "half": "fp16",
    "fp32": "fp32", "float32": "fp32", "fp8": "fp8_e4m3", "fp8_e4m3": "fp8_e4m3", "fp8_e4m3fn": "fp8_e4m3",
    "fp8_ds_mla": "fp8_ds_mla", "fp8_e5m2": "fp8_e5m2", "fp4": "fp4", "nvfp4": "fp4", "fp4_e2m1": "fp4",
    "mxfp8": "mxfp8", "int8": "int8", "int4": "int4",
}  # fmt: skip
_ELEMENT_BYTES: dict[KvFormat, int] = {
    "bf16": 2,
    "fp16": 2,
    "fp32": 4,
    "fp8_e4m3": 1,
    "fp8_e5m2": 1,
    "fp8_ds_mla": 1,
    "fp4": 1,
    "mxfp8": 1,
    "int8": 1,
    "int4": 1,  # half a byte: `_int_layer_bytes` packs two per byte
}
TORCH_DTYPE: dict[KvFormat, str] = {
    "bf16": "bfloat16", "fp16": "float16", "fp32": "float32", "fp8_e4m3": "float8_e4m3fn",
    "fp8_e5m2": "float8_e5m2", "fp8_ds_mla": "uint8", "fp4": "uint8", "mxfp8": "float8_e4m3fn",
    "int8": "uint8", "int4": "uint8",
}  # fmt: skip


class KvStorage(BaseModel):
    """How one engine stores KV bytes where engines differ (each engine package supplies one).

    kvtop's KV arithmetic is the same for every engine except for these choices; an engine that
    stores KV another way is a new value here, never an `if engine == …` in the arithmetic.
    """

    model_config = ConfigDict(frozen=True)

    fp4_scales_per_head: bool = False  # each head's K and V packed apart (k//2 + k//16 B), not the total
    fp4_dequant_workspace: bool = False  # one shared FP8 dequant row per token (MHA/GQA only)
    ds_mla_on_fp8_dsa: bool = False  # FP8 KV on a DSA model stores the 656 B `fp8_ds_mla` latent
    raw_fp8_dsa_family: CapabilityFamily = NO_GPU  # … except on these GPUs: the raw 576 B latent (trtllm)
    # classes whose KV-shared layers the pool still sizes, each in its own kind's pool (SGLang's Gemma-3n and Gemma-4)
    shared_layers_keep_kv: frozenset[str] = frozenset()
    # … only on these GPUs (by compute-capability major), where it is the `fp8_ds_mla` format (vLLM: Hopper, SM90)
    fp8_dsa_ds_mla_family: CapabilityFamily = NO_GPU
    honours_checkpoint_kv_dtype: bool = False  # `auto` follows a checkpoint's `kv_cache_quant_algo: FP8`
    # … except for these classes, whose model object holds no `quant_config` for the engine to read it from
    # (SGLang 0.5.23 kv_cache_dtype.configure_kv_cache_dtype reads getattr(model, "quant_config"))
    checkpoint_kv_unread_by: frozenset[str] = frozenset()
    # … and reads it from hf_quant_config.json where config.json's MIXED_PRECISION block states no KV algorithm
    # (`QuantSpec.quant_file_kv_cache_quant_algo`: SGLang falls back to the file, vLLM does not)
    reads_mixed_quant_file_kv: bool = False
    auto_fp8_dsa_family: CapabilityFamily = NO_GPU  # GPUs where `auto` KV is FP8 for DSA models
    auto_fp8_dsa: bool = False  # … and on every GPU (LMDeploy's PyTorch engine v0.11.1 – v0.16.x, by model type)
    # `auto` on a DSA model is the engine's DSA default (FP8 on `auto_fp8_dsa_family`, else the model dtype),
    # decided before the checkpoint's `kv_cache_quant_algo` is read (so FP8 in the checkpoint does not count)
    dsa_default_before_checkpoint: bool = False
    # the engine's own names of KV formats, e.g. LMDeploy's quant_policy ("8" → int8); read before kvtop's
    format_names: tuple[tuple[str, str], ...] = ()
    int_kv_scale_zero: bool = False  # int8/int4 KV keep a scale and a zero (model dtype) per token, head, K/V
    mla_latent_as_k_and_v: bool = False  # the MLA latent is stored twice, as K and as V (TurboMind < v0.12.2)
    kv_heads_round_up: bool = False  # KV heads per rank ceil(kv_heads / tp), not max(1, kv_heads // tp)
    # model classes whose latent attention the engine runs as plain attention: every head's K and V, each
    # qk_nope + qk_rope wide (V padded), heads split by TP (vLLM's MiniCPM3Attention)
    mla_as_heads: frozenset[str] = frozenset()
    # bytes of one SSM state element when the config names no dtype (None: the StateSpec's, float32)
    unstated_ssm_dtype_bytes: int | None = None
    # bytes of a conv-state element (16-bit; vLLM's: the served model's under `auto`, else --mamba-cache-dtype's) and
    # of an SSM-state one where the launch names it (--mamba-ssm-cache-dtype, mamba_dtype.py; None: the config's, else
    # `unstated_ssm_dtype_bytes`)
    conv_state_dtype_bytes: int = 2
    launch_ssm_dtype_bytes: int | None = None
    conv_extra_rows: int = 0  # conv-state rows a state layer keeps beyond kernel − 1 (vLLM GDN: one per draft token)
    # a draft's KV layers join the full-attention pool as layers of their own (vLLM's KV cache spec), rather
    # than inflating the cell by `draft_layers / layers` (SGLang, docs/engines/sglang.md §6.1)
    draft_kv_as_layers: bool = False
    # bytes per K and per V element where the engine stores K and V apart in block formats of its own
    # (llama.cpp's ggml types, `-ctk`/`-ctv`: q8_0 is 34 B per 32 elements); None: the KV format's
    element_bytes: tuple[float, float] | None = None
    # bytes of one DeepSeek-V4 latent row (window or compressed entry) where the engine stores compressed attention
    # (SGLang: FlashMLA's V4 layout, 584 B); 0: the engine has no compressed-attention pools kvtop models
    compressed_latent_bytes: int = 0
    # a model of full-attention and no-op layers only (DeciLM's no-op blocks; no window, no state) holds a KV row
    # in every layer of the stage, each of the attention layers' shape (SGLang's plain MHA pool)
    pool_holds_no_op_layers: bool = False
    # cross-attention layers (Mllama's `ModelSpec.cross_attention_layers`) keep their encoder tokens' KV in the one
    # token pool as full-attention layers (SGLang); False: the engine's cross-attention cache is not modelled
    cross_attention_in_pool: bool = False
    # an encoder-decoder's cross-attention KV (Whisper: `ModelSpec.encoder_layers`, `BodyShape.cross_attention`):
    # "one_pool" the encoder's and the cross-attention layers are more layers of the one token pool, each the
    # decoder's row (SGLang 0.5.23: num_attention_layers = encoder_layers + 2 × decoder_layers); "cross_pool" the
    # cross-attention layers a pool of their own whose tokens a request holds are the encoder's, not its length
    # (vLLM 0.33.0 CrossAttentionSpec, engines/vllm/encdec.py); "": not modelled (ENCODER_DECODER_NOT_MODELLED)
    encoder_decoder: Literal["", "one_pool", "cross_pool"] = ""
    # GPUs without bf16 where `auto` on a bf16 model is fp16 (vLLM from v0.9.0 falls back to float16 below SM80:
    # engines/vllm/dtype_fallback.py); NO_GPU: the model's dtype on every GPU
    auto_fp16_family: CapabilityFamily = NO_GPU


class KvPool(BaseModel):
    """One pool of one rank: its layers and what one token (or one request) costs in it."""

    model_config = ConfigDict(frozen=True)

    name: PoolName  # cross: an encoder's tokens a request
    layers: int
    bytes_per_token: int = 0  # for token pools, all its layers together
    bytes_per_layer_token: float = 0.0
    bytes_per_request: int = 0  # for the state pool (conv + ssm state of one request); the ring pool's one page
    row_shape: tuple[int, ...] = ()  # per layer, per token: (heads, width) as the engine allocates
    tensors_per_layer: int = 1  # K and V = 2, MLA latent = 1
    torch_dtype: str = "bfloat16"
    # of `layers`, a draft model's own whose KV shape (heads, width) is not the target's: vLLM gives them a KV spec of
    # their own, so beside a hybrid's state groups they group as a kind of their own (engines/vllm/dflash.py)
    own_spec_layers: int = 0

    @property
    def per_request(self) -> bool:
        """A fixed page each request holds whatever its length (a state, a ring), not bytes per token."""
        return self.name in ("state", "ring")


class KvBook(BaseModel):
    """Everything one rank's KV cache costs, per token (and per request for a state or a ring: each engine's budget
    counts the pools it models and refuses a book with another by name, `refuse_uncounted_pools`)."""

    model_config = ConfigDict(frozen=True)

    kv_format: KvFormat
    kv_heads_per_rank: int  # 1 for MLA (a single latent)
    pools: tuple[KvPool, ...]
    workspace_bytes_per_token: int = 0  # SGLang FP4's shared dequant row
    draft_layers: int = 0  # MTP / EAGLE draft layers whose KV shares the token count (SGLang)
    target_layers: int = 0  # the attention layers the draft inflation is measured against

    def pool(self, name: str) -> KvPool | None:
        return next((p for p in self.pools if p.name == name), None)

    @property
    def full_bytes_per_token(self) -> int:
        """Full-attention layers plus the DSA index: what every cached token costs at full length.

        With draft layers the cell is inflated as SGLang does it (docs/engines/sglang.md §6.1):
        `int(cell × (1 + draft_layers / layers))`, room for the draft's own pool.
        """
        cell = (
            sum(p.bytes_per_token for p in self.pools if p.name in ("full", "dsa_index"))
            + self.workspace_bytes_per_token
        )
        if self.draft_layers and self.target_layers:
            return int(cell * (1 + self.draft_layers / self.target_layers))
        return cell

    @property
    def swa_bytes_per_token(self) -> int:
        pool = self.pool("swa")
        return pool.bytes_per_token if pool else 0

    @property
    def state_bytes_per_request(self) -> int:
        pool = self.pool("state")
        return pool.bytes_per_request if pool else 0


# What each pool holds, said where an engine's budget does not count it (`refuse_uncounted_pools`)
POOL_HOLDS: dict[PoolName, str] = {
    "full": "full-attention KV per token",
    "swa": "sliding-window KV per token",
    "dsa_index": "the DSA indexer's keys per token",
    "state": "a linear-attention / Mamba state per request",
    "ring": "a circular buffer's page per ring layer per request (vLLM 0.33.0 CircularBufferSpec, kv_ring.py)",
    "cross": "cross-attention KV per encoder token, as many a request as its encoder's tokens",
}
POOL_NOT_MODELLED = (
    "the {name} pool ({holds}: {size}) is not modelled by {engine}'s budget: its capacity would leave those bytes out"
)


def refuse_uncounted_pools(kv: KvBook, counted: frozenset[PoolName], engine: str, source: str | None = None) -> None:
    """Refuse, by name, a book holding a pool `engine`'s budget does not count (`counted`), rather than solve a
    capacity that silently leaves its bytes out: a per-request pool has 0 B per token, so no sum would notice."""
    for pool in kv.pools:
        if pool.name not in counted:
            size = f"{pool.bytes_per_request:,} B a request" if pool.per_request else f"{pool.bytes_per_token:,} B a token"
            message = POOL_NOT_MODELLED.format(name=pool.name, holds=POOL_HOLDS[pool.name], size=size, engine=engine)
            raise UnsupportedModelError(message, field="kv pools", source=source)


def kv_dtype_bytes(fmt: KvFormat) -> int:
    """Bytes of one element of the KV format's torch dtype (`TORCH_DTYPE`: a packed FP4 / INT4 pair is one uint8),
    what an engine's cache spec multiplies its widths by."""
    return _ELEMENT_BYTES[fmt]


def _ds_mla_layout(model: ModelSpec, fmt: KvFormat, storage: KvStorage, gpu_name: str | None = None) -> bool:
    """Whether the MLA latent is stored as fp8 NoPE + fp32 scale per 128 + bf16 RoPE (656 B).

    Engines with `ds_mla_on_fp8_dsa` use it for FP8 KV on a DSA model, where `fp8_ds_mla` names
    that same FP8 (docs/engines/sglang.md §6.1), except on `raw_fp8_dsa_family` (SGLang's trtllm DSA
    backends keep the raw latent, §6.1.1); the others only for `--kv-cache-dtype fp8_ds_mla`
    (docs/engines/vllm.md §3; their plain fp8 is 576 × 1 B).
    """
    if model.mla is None:
        return False
    if storage.ds_mla_on_fp8_dsa:
        if storage.raw_fp8_dsa_family.holds(gpu_name):
            return fmt == "fp8_ds_mla"
        return fmt in ANY_FP8_KV_FORMATS and model.attention_kind is AttentionKind.DSA
    return fmt == "fp8_ds_mla"


def _attention_layer_bytes(
    model: ModelSpec, heads: int, dims: tuple[int, int], fmt: KvFormat, storage: KvStorage, gpu_name: str | None
) -> tuple[float, tuple[int, ...], int]:
    """(bytes per layer per token, row shape, tensors per layer) for one attention layer of `dims` (K, V)."""
    latent = _stores_latent(model, storage)
    if storage.element_bytes is not None and not latent:
        k_bytes, v_bytes = storage.element_bytes
        return heads * (dims[0] * k_bytes + dims[1] * v_bytes), (heads, dims[0]), 2
    if fmt in ("int8", "int4"):
        return _int_layer_bytes(model, heads, dims, fmt, storage)
    if latent and model.mla is not None:
        width = model.mla.latent_width
        if storage.mla_latent_as_k_and_v and fmt in ("bf16", "fp16", "fp32"):
            return float(2 * width * _ELEMENT_BYTES[fmt]), (1, width), 2
        if _ds_mla_layout(model, fmt, storage, gpu_name):
            rank = model.mla.kv_lora_rank  # fp8 latent + fp32 scale per 128 + bf16 rope
            return (
                float(rank + rank // 128 * 4 + model.mla.qk_rope_head_dim * 2),
                (1, rank + rank // 128 * 4 + model.mla.qk_rope_head_dim * 2),
                1,
            )
        if fmt == "fp4":
            return width / 2 + width // 16, (1, width // 2 + width // 16), 1
        if fmt == "mxfp8":
            return float(width + width // 32), (1, width + width // 32), 1
        return float(width * _ELEMENT_BYTES[fmt]), (1, width), 1
    k, v = dims
    per: float
    if fmt == "fp4":
        if storage.fp4_scales_per_head:
            per = heads * (k // 2 + k // 16 + v // 2 + v // 16)
        else:
            per = heads * (k + v) / 2 + heads * (k + v) / 16
        return float(per), (heads, k // 2 + k // 16), 2
    if fmt == "mxfp8":
        return float(heads * (k + v) + heads * (k + v) / 32), (heads, k + k // 32), 2
    return float(heads * (k + v) * _ELEMENT_BYTES[fmt]), (heads, k), 2


def _stores_latent(model: ModelSpec, storage: KvStorage) -> bool:
    """The engine caches the MLA latent (not every head's K and V: `KvStorage.mla_as_heads`)."""
    return model.mla is not None and model.architecture not in storage.mla_as_heads


def _int_layer_bytes(
    model: ModelSpec, heads: int, dims: tuple[int, int], fmt: KvFormat, storage: KvStorage
) -> tuple[float, tuple[int, ...], int]:
    """INT8 / INT4 KV of one attention layer: the packed elements, plus a scale and a zero in the model's
    dtype per token, head and K/V where the engine keeps them (docs/engines/lmdeploy.md §2.1, §4.1)."""
    params = 2 * model.dtype_bytes if storage.int_kv_scale_zero else 0

    def packed(width: int) -> int:
        return width if fmt == "int8" else width // 2

    if _stores_latent(model, storage) and model.mla is not None:
        width = model.mla.latent_width
        copies = 2 if storage.mla_latent_as_k_and_v else 1
        return float(copies * (packed(width) + params)), (1, packed(width)), copies
    k, v = dims
    return float(heads * (packed(k) + packed(v) + 2 * params)), (heads, packed(k)), 2


def kv_book(
    model: ModelSpec,
    layout: ParallelLayout,
    layers: Sequence[int],
    fmt: KvFormat,
    storage: KvStorage,
    *,
    draft_layers: int = 0,
    draft_layer_bytes: float | None = None,
    draft_row_shape: tuple[int, ...] | None = None,
    gpu_name: str | None = None,
) -> KvBook:
    """The KV book of one rank sizing `layers` (a pipeline stage's, or more where the engine sizes more); `draft_layers`: MTP layers loaded;
    `draft_layer_bytes`: one draft layer's bytes per token on the rank, where the draft is a model of its own whose heads
    may differ from the target's (None: the target's first full layer's), and `draft_row_shape` its (heads, width) where
    known (a shape other than the target's: `KvPool.own_spec_layers`); `gpu_name`: the GPU, where the engine's
    storage depends on it (`KvStorage.raw_fp8_dsa_family`)."""
    if model.compressed is not None:
        return _compressed_book(model, layers, fmt, storage, draft_layers)
    if not storage.cross_attention_in_pool and any(i in model.cross_attention_layers for i in layers):
        raise UnsupportedModelError(CROSS_NOT_MODELLED, field="cross_attention_layers", source=model.source)
    if model.body.cross_attention and not storage.encoder_decoder:
        raise UnsupportedModelError(ENCODER_DECODER_NOT_MODELLED, field="is_encoder_decoder", source=model.source)
    latent = _stores_latent(model, storage)

    def heads_of(layer: int) -> int:
        if latent:
            return 1
        kv_heads = model.geometry(layer).kv_heads
        if storage.kv_heads_round_up:  # TensorRT-LLM's manager: (kv_heads + tp − 1) // tp (docs/engines/trtllm.md §1.2)
            return ceil_div(kv_heads, layout.attn_tp)
        return layout.kv_heads_per_rank(kv_heads)

    by_geometry: dict[tuple[int, int, int], tuple[float, tuple[int, ...], int]] = {}

    def layer_bytes(layer: int) -> tuple[float, tuple[int, ...], int]:
        g = model.geometry(layer)
        # plain attention over a latent model's heads: V padded to K's width (vLLM MiniCPM3Attention)
        key = (heads_of(layer), g.head_dim, g.v_head_dim if latent or model.mla is None else g.head_dim)
        if key not in by_geometry:
            by_geometry[key] = _attention_layer_bytes(model, key[0], (key[1], key[2]), fmt, storage, gpu_name)
        return by_geometry[key]

    dtype = "uint8" if _ds_mla_layout(model, fmt, storage, gpu_name) else TORCH_DTYPE[fmt]
    pools: list[KvPool] = []
    # a looped model's attention layers keep KV once per pass (Nanbeige); the passes after the first windowed
    # where the model says so (IQuest-LoopCoder: ModelSpec.later_passes_slide)
    passes = range(1 if model.later_passes_slide else model.kv_passes)
    later = range(model.kv_passes - 1 if model.later_passes_slide else 0)
    kinds = pooled_kinds(model, storage)
    full_layers = [i for _ in passes for i in layers if kinds[i] is LayerKind.FULL]
    sliding_layers = [i for _ in passes for i in layers if kinds[i] is LayerKind.SLIDING]
    sliding_layers += [i for _ in later for i in layers if kinds[i] is LayerKind.FULL]
    no_op = [i for i in layers if model.layer_attention[i] is LayerKind.NONE and not model.has_state(i)]
    plain = not any(model.layer_attention[i] is LayerKind.SLIDING or model.has_state(i) for i in layers)
    held_no_op = len(no_op) if storage.pool_holds_no_op_layers and plain and full_layers else 0
    # drafts an engine stores as extra full layers (docs/engines: the draft's KV beside the target's)
    as_layers = draft_layers if storage.draft_kv_as_layers and full_layers else 0
    # an encoder-decoder's encoder and cross-attention layers, as the engine holds them (KvStorage.encoder_decoder)
    one_pool = model.encoder_layers + len(full_layers) if model.body.cross_attention else 0
    cross = [("cross", full_layers)] if model.body.cross_attention and storage.encoder_decoder == "cross_pool" else []
    one_pool = one_pool if storage.encoder_decoder == "one_pool" else 0
    for name, members in (("full", full_layers), ("swa", sliding_layers), *cross):
        if not members:
            continue
        each = [layer_bytes(i) for i in members]
        extra = held_no_op + one_pool if name == "full" else 0
        drafts = as_layers if name == "full" else 0
        draft_cell = each[0][0] if draft_layer_bytes is None else draft_layer_bytes
        total = sum(per for per, _, _ in each) + extra * each[0][0] + drafts * draft_cell
        held = len(members) + extra + drafts
        own = drafts if draft_row_shape is not None and draft_row_shape != each[0][1] else 0
        pools.append(
            KvPool(name=name, layers=held, bytes_per_token=int(total), bytes_per_layer_token=total / held,
                   row_shape=each[0][1], tensors_per_layer=each[0][2], torch_dtype=dtype, own_spec_layers=own)
        )  # fmt: skip
    full = len(full_layers)
    indexed = sum(1 for i in full_layers if model.indexed(i))
    if model.dsa_index_head_dim and indexed:
        index = model.index_key_bytes
        pools.append(
            KvPool(name="dsa_index", layers=indexed, bytes_per_token=index * indexed,
                   bytes_per_layer_token=float(index), row_shape=(1, index), tensors_per_layer=1, torch_dtype="uint8")
        )  # fmt: skip
    linear = sum(1 for i in layers if model.has_state(i))
    if linear and model.state is not None:
        state = state_bytes_per_request(model, layout, storage.unstated_ssm_dtype_bytes, storage.conv_extra_rows,
                                        storage.conv_state_dtype_bytes, storage.launch_ssm_dtype_bytes)  # fmt: skip
        pools.append(KvPool(name="state", layers=linear, bytes_per_request=state * linear))
    first = full_layers[0] if full_layers else (layers[0] if layers else 0)
    heads = heads_of(first) if first < model.num_layers else 1
    workspace = 0
    if fmt == "fp4" and storage.fp4_dequant_workspace and model.mla is None:
        workspace = heads * model.geometry(first).head_dim * 2  # one shared FP8 dequant row per token
    return KvBook(
        kv_format=fmt, kv_heads_per_rank=heads, pools=tuple(pools), workspace_bytes_per_token=workspace,
        draft_layers=draft_layers if full and not as_layers else 0, target_layers=full,
    )  # fmt: skip


def pooled_kinds(model: ModelSpec, storage: KvStorage) -> tuple[LayerKind, ...]:
    """Each layer's kind as the engine pools it: a KV-shared layer holds no KV, unless the engine pools it anyway
    (`KvStorage.shared_layers_keep_kv`), in the pool of the kind the config's pattern gives it (`kv_shared_kinds`;
    full where the model does not say)."""
    if model.architecture not in storage.shared_layers_keep_kv:
        return model.layer_attention
    own = model.kv_shared_kinds or tuple(LayerKind.FULL for _ in model.layer_attention)
    return tuple(own[i] if kind is LayerKind.SHARED else kind for i, kind in enumerate(model.layer_attention))


CROSS_NOT_MODELLED = (
    "cross-attention KV (Mllama's image layers, an encoder's tokens per request) is not modelled for this engine"
)
# An encoder-decoder's KV (Whisper): the decoder's self-attention KV per token beside its cross-attention KV over the
# encoder's states, a fixed number a request. vLLM 0.33.0 gives the cross-attention layers their own KV cache group
# (v1/kv_cache_interface.py CrossAttentionSpec: cdiv(max_num_encoder_input_tokens, block) pages a request, which
# config/scheduler.py sets to max_num_batched_tokens; the self-attention's page size) drawing on one block pool, and
# logs capacity as num_blocks ÷ (both groups' pages a request) × max_model_len (v1/core/kv_cache_utils.py
# get_max_concurrency_for_kv_cache_config); SGLang 0.5.23 whisper.py gives the encoder's, the decoder's and the
# cross-attention layers each a layer of its one token pool (configs/model_config.py num_attention_layers =
# encoder_layers + 2 × decoder_layers): `KvStorage.encoder_decoder` says which; an engine with neither refuses.
ENCODER_DECODER_NOT_MODELLED = (
    "an encoder-decoder's KV is not modelled for this engine: the decoder's cross-attention KV over the encoder's "
    "states (a fixed number of encoder tokens a request; kvtop models vLLM 0.33.0's CrossAttentionSpec group and "
    "SGLang 0.5.23's one token pool, not this engine's)"
)
COMPRESSED_NOT_MODELLED = (
    "compressed attention (DeepSeek-V4 compress_ratios: a latent per 4 or 128 tokens by layer, compressor states, "
    "indexer keys and a sliding-window cache per layer) is not modelled for this engine"
)


def _compressed_book(
    model: ModelSpec, layers: Sequence[int], fmt: KvFormat, storage: KvStorage, draft_layers: int = 0
) -> KvBook:
    """DeepSeek-V4's pools on one rank (one latent row a token, never split over TP): every layer keeps its window's
    raw latents ("swa"); a layer of ratio r one compressed row per r tokens, a ratio-4 layer also an index key per 4
    ("full": per token, the rows' share). The engine sizes them its own way (SGLang: engines/sglang/dsv4.py)."""
    c = model.compressed
    assert c is not None
    row = storage.compressed_latent_bytes
    if not row:
        raise UnsupportedModelError(COMPRESSED_NOT_MODELLED, field="compress_ratios", source=model.source)
    index = c.index_head_dim + c.index_head_dim // 128 * 4  # FP8 key + an fp32 scale per 128
    compressed = [i for i in layers if c.ratios[i]]
    per_token = sum(row / c.ratios[i] + (index / 4 if c.ratios[i] == 4 else 0) for i in compressed)
    pools = [KvPool(name="swa", layers=len(layers), bytes_per_token=row * len(layers), bytes_per_layer_token=float(row),
                    row_shape=(1, row), torch_dtype="uint8")]  # fmt: skip
    if compressed:
        pools.insert(0, KvPool(name="full", layers=len(compressed), bytes_per_token=int(per_token),
                               bytes_per_layer_token=per_token / len(compressed), row_shape=(1, row),
                               torch_dtype="uint8"))  # fmt: skip
    # the draft's layers kept on the book (not in its pools): the engine's pool sizes them its own way, or refuses
    return KvBook(kv_format=fmt, kv_heads_per_rank=1, pools=tuple(pools), target_layers=len(compressed),
                  draft_layers=draft_layers)  # fmt: skip
