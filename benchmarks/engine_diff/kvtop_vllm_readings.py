"""kvtop's vLLM readings the registry judge sets beside vLLM's own specs (`EngineSpec.plan_readings` names them):
each is called with kvtop's ledger of the case and answers a JSON value, added to kvtop's plan row under its key.

- `spec_window`: the window vLLM's spec of a windowed layer holds (kvtop.domain.engines.vllm.windows), against the
  engine's SlidingWindowSpec.sliding_window / ChunkedLocalAttentionSpec.attention_chunk_size (architectures.py
  `window_differences`).
- `dsv4_specs`: DeepSeek-V4's specs by role (engines/vllm/dsv4.py layer_specs), against architectures._dsv4_roles.
"""

from __future__ import annotations

from typing import Any


def spec_window(ledger: Any) -> int | None:
    """The tokens vLLM's spec of the model's windowed layers holds by kvtop's vLLM rules (None: no window)."""
    from kvtop.domain.engines.vllm.windows import spec_window as window

    return window(ledger.model, ledger.version)


def dsv4_specs(ledger: Any) -> dict[str, int] | None:
    """DeepSeek-V4 on vLLM: kvtop's specs of the model's layers by role, tokens a block, page bytes and window
    (engines/vllm/dsv4.py layer_specs: what its packed groups and capacity are computed from), in
    architectures._dsv4_roles's keys; None for any other model."""
    from kvtop.domain.engines.vllm.dsv4 import layer_specs

    model = ledger.model
    if model.compressed is None:
        return None
    out: dict[str, int] = {}
    for layer in range(model.num_layers):
        for spec in layer_specs(model, layer):
            key = f"{spec.role} {spec.kind} block {spec.block} page {spec.page_bytes}" + (
                f" window {spec.window}" if spec.window else "")
            out[key] = out.get(key, 0) + 1
    return out
