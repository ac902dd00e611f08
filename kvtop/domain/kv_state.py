"""A linear-attention / Mamba layer's fixed state per request (conv + temporal), per rank: the KV book's "state" pool."""

from __future__ import annotations

from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec


def state_bytes_per_request(
    model: ModelSpec,
    layout: ParallelLayout,
    unstated_ssm_dtype_bytes: int | None = None,
    conv_extra_rows: int = 0,
    conv_bytes: int = 2,
    launch_ssm_bytes: int | None = None,
) -> int:
    """Conv (`conv_bytes` an element, bf16 unless the launch names a dtype) + temporal (ssm dtype) state of one request
    in one linear layer, per rank; the SSM state's bytes an element are the launch's (`launch_ssm_bytes`,
    `KvStorage.launch_ssm_dtype_bytes`) where it names one, else the engine's (`KvStorage.unstated_ssm_dtype_bytes`)
    where the config states no dtype, and the conv window keeps `conv_extra_rows` more rows where the engine says
    (`KvStorage.conv_extra_rows`)."""
    s = model.state
    if s is None:
        return 0
    ssm_bytes = s.ssm_dtype_bytes
    if unstated_ssm_dtype_bytes is not None and not s.ssm_dtype_stated:
        ssm_bytes = unstated_ssm_dtype_bytes
    ssm_bytes = launch_ssm_bytes if launch_ssm_bytes is not None else ssm_bytes
    tp = layout.attn_tp
    groups = s.n_groups
    while groups % tp and groups < tp * s.n_groups:  # groups are extended to divide over TP
        groups += 1
    conv_dim = s.inner_size + 2 * groups * s.state_size
    conv = conv_dim // tp * (s.conv_kernel - 1 + conv_extra_rows) * conv_bytes
    temporal = s.num_heads // tp * s.head_dim * s.state_size * ssm_bytes
    return conv + temporal + s.whole_conv * 2  # a whole second conv buffer, one position (Zaya's CCA)
