"""The Qwen3-VL vision tower's own forward in vLLM's encoder profile (v0.17.0 on), as Qwen3.5 and Qwen3-VL build
it, read in the PyPI wheels of v0.17.0, v0.18.0, v0.19.0, v0.23.0, v0.27.1, v0.28.0, v0.29.0 and v0.30.0
(models/qwen3_vl.py, which models/qwen3_5.py builds: encoder_profile.py `QWEN3_5_TOWERS`).

`profile_run` runs the tower on the dummy batch before the text model's run, so its forward is a peak of its own
(encoder_profile.py `EncoderProfile.peak`). `Qwen3_VisionTransformer.forward` holds the dummy's pixels (already in
the model dtype on the device: `x.to(...)` returns them) and `pos_embeds` (patches × the tower's width) through
every block (`hidden_states = hidden_states + pos_embeds`: v0.17.0 :546, v0.19.0 :634, v0.27.1 :829, v0.28.0 :861,
v0.29.0 and v0.30.0 :867). Its loop `hidden_states = blk(hidden_states, ...)` (v0.17.0 :576, v0.19.0 :639, v0.27.1
:834, v0.28.0 :866, v0.29.0 and v0.30.0 :872) keeps each block's input bound while the block runs; the block rebinds
`x = x + attn(norm1(x))` and runs `x + mlp(norm2(x))` (v0.17.0 :263, v0.19.0 :265, v0.27.1 :474, v0.28.0 :498,
v0.29.0 and v0.30.0 :499), the MLP `linear_fc2(act_fn(linear_fc1(x)))` (v0.17.0 :209, v0.19.0 :211, v0.27.1 :420,
v0.28.0 :433, v0.29.0 and v0.30.0 :434):
fc1 (column-parallel, intermediate ÷ TP wide) is freed once the activation returns, and at TP > 1 fc2's row-parallel
all-reduce writes a new output beside its partial (out of place: v0.19.0 distributed/device_communicators/
pynccl.py:172-173, session 67 E3). The block's peak, in the model dtype over the patches:
- at fc2 (TP t > 1): the block's input, x, the normed input, the activation (intermediate ÷ t), fc2's partial and
  the reduced output: 5 × width + intermediate ÷ t;
- at TP 1, the larger of fc1's step (input, x, normed, fc1's output and the activation: 3 × width + 2 ×
  intermediate) and fc2's (4 × width + intermediate).
Qwen3-VL's own checkpoints run the same tower (v0.17.0 on, `QWEN3_VL_FORWARD_ERAS`) with deepstack levels: at each
index of `deepstack_visual_indexes` a merger's output (the patches ÷ merge² rows × `out_hidden_size`, whole on
every rank: fc2 is row-parallel and reduced) is appended to `deepstack_feature_lists` (qwen3_vl.py v0.17.0
:583-589, v0.27.1 :842-847, v0.30.0 :880-885) and held to the forward's end, so the blocks after the last index run
beside all of them; every published Qwen3-VL checkpoint puts its indexes below the last block ([5, 11, 17] of 24,
[8, 16, 24] of 27), taken here: the levels' outputs are added to the block's peak. A merger's own transient (its
norm, fc1 and activation over the patches ÷ merge² rows × merge² widths) stays below a block's.
Attention's copies (qkv 3 ÷ t widths and the rotated q, k) stay below it at Qwen3.5's widths (1,024 – 1,152, MLP
4,096 – 4,304). From v0.28.0 the patch embedding and the block carry `@support_torch_compile(enable_if=
should_torch_compile_mm_encoder)` (qwen3_vl.py:364-370, :437-447 at v0.28.0), which compiles them only under
`compile_mm_encoder`, False by default (config/compilation.py:535 at v0.28.0, :542 at v0.30.0): the eager forward
counted here is the default's; a compiled tower's (Inductor's fused buffers) is not modelled. V2's profile runs the
same tower on the same dummy (`get_dummy_encoder_profile_inputs`, multimodal/encoder_budget.py:203-220 at v0.29.0;
v1/worker/gpu/mm/encoder_runner.py `profile_encoder_cache`, the same at v0.27.1 – v0.30.0). Not counted: the rotary tables (tens of MiB), the merger's output, the allocator's rounding, an
attention backend that materialises the scores.
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras
from kvtop.domain.engines.vllm.encoder_forward import stated
from kvtop.domain.model import ModelSpec
from kvtop.domain.wording import gib

# Qwen3-VL's own tower forward (Qwen3.5's is counted wherever its family is, v0.17.0 on)
QWEN3_VL_FORWARD_ERAS: Eras[bool] = Eras((
    Era("", False, "Qwen3-VL's tower before v0.17.0 not read for its forward's peak (its attention's copies at "
                   "v0.11.0 – v0.16.x not read): the encoder cache it keeps is counted, the forward not"),
    Era("0.17.0", True, "the Qwen3_VisionTransformer Qwen3.5 builds (qwen3_vl.py, read at v0.17.0, v0.18.0, "
                        "v0.19.0, v0.23.0, v0.27.1, v0.28.0, v0.29.0, v0.30.0), with its deepstack levels"),
))  # fmt: skip
MERGE = 2  # spatial_merge_size where a vision_config leaves it out

# Qwen3_5VisionConfig's widths where a vision_config leaves them out (transformers models/qwen3_5; every published
# Qwen3.5 checkpoint states them)
DEFAULT_WIDTH, DEFAULT_INTERMEDIATE = 1152, 4304


def block_widths(model: ModelSpec, tp: int) -> tuple[int, int, int]:
    """(the tower's width, the MLP's width on a rank, the block's peak in widths: module docstring)."""
    width = stated(model, "hidden_size", DEFAULT_WIDTH)
    mlp = stated(model, "intermediate_size", DEFAULT_INTERMEDIATE) // tp
    peak = 5 * width + mlp if tp > 1 else max(3 * width + 2 * mlp, 4 * width + mlp)
    return width, mlp, peak


def deepstack_bytes(model: ModelSpec, patches: int, levels: int) -> int:
    """The deepstack mergers' outputs held through the blocks after their indexes: `levels` × the patches ÷ merge²
    rows × out_hidden_size, in the model dtype."""
    out = stated(model, "out_hidden_size", model.hidden_size)
    return levels * (patches // stated(model, "spatial_merge_size", MERGE) ** 2) * out * model.dtype_bytes


def qwen3_forward_bytes(model: ModelSpec, patches: int, tp: int, levels: int = 0) -> int:
    """The forward's peak over `patches` patches at tower TP `tp`: the block's peak and `pos_embeds`, in the model
    dtype, and the `levels` deepstack outputs beside them (the pixels are the caller's to add)."""
    width, _, peak = block_widths(model, tp)
    return patches * (peak + width) * model.dtype_bytes + deepstack_bytes(model, patches, levels)


def qwen3_forward_words(model: ModelSpec, patches: int, tp: int, pixels: int, levels: int = 0) -> str:
    """`qwen3_forward_bytes` with the pixels, in words."""
    width, mlp, peak = block_widths(model, tp)
    total = qwen3_forward_bytes(model, patches, tp, levels) + pixels
    deepstack = f", {levels} deepstack outputs ({gib(deepstack_bytes(model, patches, levels))})" if levels else ""
    return (f"the Qwen3-VL tower's forward over {patches:,} patches at TP {tp}: the block's peak {peak:,} widths "
            f"(width {width:,}, MLP {mlp:,} a rank) and pos_embeds {width:,}, {model.dtype_bytes} B each{deepstack}, "
            f"with the pixels ({gib(total)})")  # fmt: skip
