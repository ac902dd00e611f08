"""What vLLM's runner reads off the engine's own objects (KV cache specs, a model's parameters, its log lines,
its attention backends), as plain rows for the sweep's JSON. Imported by vllm_runner.py inside the engine's venv:
the standard library only (vLLM's objects come in as arguments)."""

from __future__ import annotations

import contextlib
import re
from typing import Any


def spec_row(spec: Any) -> dict[str, Any]:
    inner = getattr(spec, "kv_cache_specs", None)
    kind = type(spec).__name__
    if inner:
        kind += "[" + ",".join(sorted({type(s).__name__ for s in inner.values()})) + "]"
    row = {"kind": kind, "block_size": spec.block_size, "page_size_bytes": spec.page_size_bytes}
    for attr in ("sliding_window", "attention_chunk_size", "dtype", "num_kv_heads", "head_size"):
        value = getattr(spec, attr, None)
        if value is not None:
            row[attr] = value if isinstance(value, int) else str(value)
    return row


def layer_specs(specs: dict[str, Any]) -> list[dict[str, Any]]:
    """A stage's KV specs layer by layer, runs of identical specs merged (layer order kept)."""
    out: list[dict[str, Any]] = []
    for name, spec in specs.items():
        row = spec_row(spec)
        if out and {k: v for k, v in out[-1].items() if k not in ("layers", "first")} == row:
            out[-1]["layers"] += 1
        else:
            out.append({"first": name, "layers": 1, **row})
    return out


def param_bytes(model: Any) -> dict[str, int]:
    """Parameter bytes of a stage's model (on meta: shape × element size), by top-level child; a child that nests
    the text model beside the towers (Idefics3 / SmolVLM: model.text_model, model.vision_model, model.connector)
    by its own children, so the judge tells the towers from the language model (architectures._language_bytes)."""
    names = [name for name, _ in model.named_parameters(remove_duplicate=True)]
    nesting = {name.split(".", 1)[0] for name in names if name.split(".")[1:2] == ["text_model"]}
    # FireRedASR2 (fireredasr2.py: model.encoder, model.encoder_projector) and Fun-ASR (funasr.py: model.encoder)
    # beside the language model model.decoder
    nesting |= {name.split(".", 1)[0] for name in names if name.split(".")[1:2] == ["encoder_projector"]}
    nesting |= {name.split(".", 1)[0] for name in names if name.split(".")[1:3] == ["encoder", "audio_encoder"]}
    # Whisper (whisper.py WhisperModel: model.encoder, whose conv1 is its own, beside model.decoder)
    nesting |= {name.split(".", 1)[0] for name in names if name.split(".")[1:3] == ["encoder", "conv1"]}
    # GLM-4V-9B (glm4v.py GLM4VModel: transformer.vision, its EVA2-CLIP and GLU, beside ChatGLM's transformer.embedding,
    # transformer.encoder and transformer.output_layer)
    nesting |= {name.split(".", 1)[0] for name in names if name.split(".")[1:3] == ["vision", "transformer"]}
    out: dict[str, int] = {}
    for name, param in model.named_parameters(remove_duplicate=True):
        parts = name.split(".")
        child = ".".join(parts[:2]) if parts[0] in nesting and len(parts) > 1 else parts[0]
        out[child] = out.get(child, 0) + param.numel() * param.element_size()
    return out


def tokens_from_log(message: str) -> int | None:

    match = re.search(r"KV cache size: ([\d,]+) tokens", message)
    return int(match.group(1).replace(",", "")) if match else None


def worth_keeping(message: str) -> bool:
    words = (
        "block size",
        "KV cache",
        "padding",
        "Padding",
        "mamba",
        "Mamba",
        "backend",
        "fp8",
        "window",
        "Runner",
    )
    return any(w in message for w in words)


def backends(vllm_config: Any) -> list[str]:
    names = set()
    for layer in vllm_config.compilation_config.static_forward_context.values():
        get = getattr(layer, "get_attn_backend", None)
        if get is not None:
            with contextlib.suppress(Exception):
                names.add(get().get_name())
    return sorted(names)
