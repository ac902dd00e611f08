"""The NVFP4 MoE block-scale copies SGLang holds beside the checkpoint's scales after the load, by release and runner.

`ModelOptNvFp4FusedMoEMethod.create_weights` (srt/layers/quantization/modelopt_quant.py:1428 and :1445, 0.5.9
wheel) registers `w13_blockscale_swizzled` / `w2_blockscale_swizzled` beside the checkpoint's block scales, each
`swizzle_blockscale(...)` of an empty scale tensor ("Only use swizzle_blockscale for shapes"): float8, every local
expert's scale matrix padded to 128 rows and 4 columns. The CUTLASS path fills them and deletes the originals; the
`flashinfer_trtllm` path (`align_fp4_moe_weights_for_flashinfer_trtllm`, srt/layers/moe/moe_runner/
flashinfer_trtllm.py:176-181, 0.5.9) deletes the weights and scales it shuffled but never these copies, so a rank
keeps them after the load, and SGLang's `mem usage` counts them.

Releases (wheels read, docs/engines/sglang.md §20.4): 0.5.0rc2 swizzles only in the CUTLASS branch (no placeholder);
0.5.3, 0.5.6.post2, 0.5.7, 0.5.8, 0.5.9, 0.5.10, 0.5.11 allocate and never free them on the TRT-LLM path; 0.5.12
aliases them to the scales after the load (modelopt_quant.py:1835-1838, 'alias to free the placeholders'); 0.5.13
on skips them. 0.5.1 and 0.5.2 were not read: the rule starts at 0.5.3.

The runner is SGLang's own pick at `auto` (nvfp4_runner.py: per class and release on SM 10.x, e.g. `flashinfer_trtllm`
for DeepseekV3ForCausalLM from 0.5.6 and Qwen3-MoE where config.json states no quant_method from 0.5.8); 0.5.3 sets
no such default, so there `auto` is CUTLASS and nothing leaks.

The CUTLASS path (every other GPU and architecture, e.g. MiniMax-M2.5 NVFP4 on the RTX PRO 6000, SM 12.0) keeps a copy
too from 0.5.10rc0 to 0.5.11: `process_weights_after_loading` swizzles `w13_weight_scale` / `w2_weight_scale` into the
placeholders with `copy_or_rebind_param` and no longer deletes the originals (modelopt_quant.py:1811-1813 / :1849-1851
at 0.5.10rc0, :1828-1830 / :1866-1868 at 0.5.10, :1864-1866 / :1902-1904 at 0.5.11), where 0.5.9 ran
`del layer.w13_weight_scale` / `del layer.w2_weight_scale` before the copy (:1623-1625 / :1662-1664). 0.5.12 writes
the swizzled scales into the originals and aliases the placeholder to them where the shapes agree
(`alias_or_bind_derived_param`, modelopt_quant.py:1866-1872, layers/utils/common.py:74-106 at 0.5.12; the same at
0.5.13, 0.5.23: :3005-3010 / :3046-3051 and common.py:74-106): one copy again. The alias holds only where the padded
shape is the scales' own (`torch.broadcast_to` of the swizzled [E, M↑128, K↑4] onto [E, M, K]); otherwise it falls
back to `copy_or_rebind_param`, which fills the placeholder built by create_weights and keeps it beside the scales
(`unaligned_scales`). So from 0.5.12 a rank holds the copy of w13 only where gemm1 × shard is not a multiple of 128
or hidden ÷ group not of 4, of w2 where hidden is not of 128 or shard ÷ group not of 4 (the corpus's MiniMax-M2.5,
Kimi-K2.5 and DeepSeek-R1 starts and engine-diff's Qwen3-235B: none). A gated expert's w13 rows need padding only where
its w2 columns do too, and then SGLang's own assert fails the load (modelopt_quant.py:3014-3021 at 0.5.23, the same
from 0.5.9: refused on SM 11.x / 12.x by nvfp4_pad.py). Below Blackwell (SM 8.0 – 9.x) 0.5.13 on runs the NVFP4 MoE on Marlin at `auto`
(nvfp4_runner.MARLIN_MOE_ERAS; 0.5.12 and before raise there), whose branch returns before the alias: every placeholder kept.
From 0.5.23 (weights_built.CHECKED_ERAS) the release's classes are counted in weights_built.py instead (the
placeholders the alias frees there: its `released_rows`), so this module adds nothing there.
All wheels read from PyPI (sglang==0.5.9, 0.5.10rc0, 0.5.10, 0.5.11, 0.5.12, 0.5.13); a start of 2026-03-30's nightly
(0.5.10rc0's) printed 181,721 tokens where the book without the copy plans 297,239 and with it 186,647.
"""

from __future__ import annotations

from enum import Enum

from kvtop.domain.engines.sglang.nvfp4_experts import (
    expert_shard,
    gemm1_blocks,
    nvfp4_expert_layers,
    swizzled_scales,
    unaligned_scales,
)
from kvtop.domain.engines.sglang.nvfp4_runner import NvFp4MoeRunner, runner_pick
from kvtop.domain.engines.sglang.weights_built import CHECKED_ERAS
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.weights import WeightRow

_TRTLLM = NvFp4MoeRunner.TRTLLM
LEAK_ERAS: Eras[bool] = Eras((
    Era("", False, "0.5.0rc2: swizzled only in the CUTLASS branch, no placeholder (0.5.1, 0.5.2 not read)"),
    Era("0.5.3", True, "modelopt_quant.py create_weights allocates *_blockscale_swizzled; flashinfer_trtllm.py "
                       "never frees them (read in 0.5.3, 0.5.6.post2, 0.5.7 – 0.5.11; 0.5.9:1428/:1445, :176-181)"),
    Era("0.5.12", False, "modelopt_quant.py:1835-1838 (0.5.12) aliases them to the scales; 0.5.13 on skips them"),
))  # fmt: skip


class KeptCopies(str, Enum):
    """Which swizzled block-scale copies the CUTLASS NVFP4 MoE keeps beside the scales after the load."""

    NONE = "none"
    ALL = "all"  # every placeholder filled beside the originals
    UNALIGNED = "unaligned"  # only where the alias cannot hold (the padded shape is not the scales')


CUTLASS_KEEP_ERAS: Eras[KeptCopies] = Eras((
    Era("", KeptCopies.NONE, "0.5.9's CUTLASS branch deletes w13/w2_weight_scale before filling the placeholders "
                             "(modelopt_quant.py:1623-1625, :1662-1664)"),
    Era("0.5.10rc0", KeptCopies.ALL, "copy_or_rebind_param fills the placeholders, the originals kept "
                                     "(modelopt_quant.py:1811-1813, :1849-1851 at 0.5.10rc0; read in 0.5.10, 0.5.11)"),
    Era("0.5.12", KeptCopies.UNALIGNED, "alias_or_bind_derived_param writes the swizzled scales into the originals "
                                        "and aliases the placeholder where the shapes agree, else fills it "
                                        "(modelopt_quant.py:1866-1872 / :1907-1911, layers/utils/common.py:74-106 at "
                                        "0.5.12; :2059-2065 / :2100-2106 at 0.5.13; :3005-3010 / :3046-3051 at 0.5.23, "
                                        "counted there by weights_built.py)"),
))  # fmt: skip


def leaked_scale_bytes(
    model: ModelSpec, layout: ParallelLayout, layers: range, gpu_name: str | None, version: ResolvedVersion,
    quantization: str | None = None,
) -> int:
    """Bytes a rank keeps under the TRT-LLM MoE (the never-freed placeholders); `quantization`: the launch's flag.
    The release and the model's MoE are checked before the runner is asked (`runner_pick` walks the release's class
    table)."""
    if not LEAK_ERAS.at(version) or model.moe is None or runner_pick(model, gpu_name, version, quantization).runner is not _TRTLLM:
        return 0
    return _swizzled_copy_bytes(model, layout, layers)


def kept_scale_bytes(
    model: ModelSpec, layout: ParallelLayout, layers: range, gpu_name: str | None, version: ResolvedVersion,
    quantization: str | None = None,
) -> int:
    """Bytes a rank keeps off the TRT-LLM MoE (the filled placeholders beside the originals): every one at
    0.5.10rc0 – 0.5.11 and under Marlin, from 0.5.12 those the alias cannot hold (from 0.5.23 in weights_built.py).
    The release and the model's MoE are checked before the runner is asked."""
    kept = CUTLASS_KEEP_ERAS.at(version)
    if kept is KeptCopies.NONE or CHECKED_ERAS.at(version) or model.moe is None:
        return 0
    runner = runner_pick(model, gpu_name, version, quantization).runner
    if runner is _TRTLLM:
        return 0
    unaligned_only = kept is KeptCopies.UNALIGNED and runner is not NvFp4MoeRunner.MARLIN
    return _swizzled_copy_bytes(model, layout, layers, unaligned_only=unaligned_only)


def _swizzled_copy_bytes(model: ModelSpec, layout: ParallelLayout, layers: range, unaligned_only: bool = False) -> int:
    """Over the rank's MoE layers with ModelOpt NVFP4 experts, local experts × (w13's padded (2 × shard) ×
    (hidden ÷ group) + w2's padded hidden × (shard ÷ group)) × the scale's bytes (float8: 1)."""
    moe = model.moe
    if moe is None:
        return 0
    local, width, gemm1 = moe.num_routed_experts // layout.ep, expert_shard(moe, layout), gemm1_blocks(model)
    nbytes = 0
    for _, fmt in nvfp4_expert_layers(model, layers):
        if not fmt.group_size:
            continue
        entries = (unaligned_scales if unaligned_only else swizzled_scales)(gemm1, width, model.hidden_size, fmt.group_size)
        nbytes += local * entries * fmt.scale_bytes
    return nbytes


def leak_rows(
    model: ModelSpec, layout: ParallelLayout, layers: range, gpu_name: str | None, version: ResolvedVersion,
    quantization: str | None = None,
) -> tuple[WeightRow, ...]:
    """The book's row for the copy a rank holds beside the scales (none where it holds none)."""
    leaked = leaked_scale_bytes(model, layout, layers, gpu_name, version, quantization)
    if leaked > 0:
        return (WeightRow(component="leaked_blockscale_swizzled", params=0, bytes=leaked, shards=1, bytes_per_param=0.0,
                          note="SGLang 0.5.3 – 0.5.11's NVFP4 MoE: w13/w2_blockscale_swizzled placeholders never freed "
                               "under its default flashinfer_trtllm runner (modelopt_quant.py:1428/:1445, "
                               "moe_runner/flashinfer_trtllm.py:176-181 at 0.5.9; freed from 0.5.12)"),)  # fmt: skip
    kept = kept_scale_bytes(model, layout, layers, gpu_name, version, quantization)
    if kept > 0:
        return (WeightRow(component="kept_blockscale_swizzled", params=0, bytes=kept, shards=1, bytes_per_param=0.0,
                          note="SGLang 0.5.10rc0's NVFP4 MoE on CUTLASS: the swizzled block scales kept beside "
                               "w13/w2_weight_scale (modelopt_quant.py:1811-1813/:1849-1851 at 0.5.10rc0; deleted at "
                               "0.5.9; from 0.5.12 aliased to them where the padded shape is theirs, kept elsewhere)"),)  # fmt: skip
    return ()
