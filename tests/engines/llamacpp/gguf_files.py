"""Small GGUF files for the tests, written with llama.cpp's own `gguf.GGUFWriter` (metadata only, or a tiny
tensor), from the metadata real models' GGUF files carry (tests/data/llamacpp/SOURCES.md)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

gguf = pytest.importorskip("gguf")

# general.architecture, then the keys after its prefix, as the real files state them
LLAMA_31_8B = ("llama", {"block_count": 32, "context_length": 131072, "embedding_length": 4096,
                         "feed_forward_length": 14336, "attention.head_count": 32, "attention.head_count_kv": 8,
                         "vocab_size": 128256, "rope.dimension_count": 128})  # fmt: skip
GEMMA2_2B = ("gemma2", {"block_count": 26, "context_length": 8192, "embedding_length": 2304,
                        "feed_forward_length": 9216, "attention.head_count": 8, "attention.head_count_kv": 4,
                        "attention.key_length": 256, "attention.value_length": 256,
                        "attention.sliding_window": 4096, "vocab_size": 256000})  # fmt: skip
QWEN3_8B = ("qwen3", {"block_count": 36, "context_length": 40960, "embedding_length": 4096,
                      "feed_forward_length": 12288, "attention.head_count": 32, "attention.head_count_kv": 8,
                      "attention.key_length": 128, "attention.value_length": 128, "vocab_size": 151936})  # fmt: skip
GEMMA3_27B = ("gemma3", {"block_count": 62, "context_length": 131072, "embedding_length": 5376,
                         "feed_forward_length": 21504, "attention.head_count": 32, "attention.head_count_kv": 16,
                         "attention.key_length": 128, "attention.value_length": 128,
                         "attention.sliding_window": 1024, "vocab_size": 262208})  # fmt: skip


def write_gguf(path: Path, model: tuple[str, dict[str, int]], name: str, *, tensor_bytes: int = 0) -> Path:
    arch, keys = model
    writer = gguf.GGUFWriter(str(path), arch)
    writer.add_name(name)
    for key, value in keys.items():
        writer.add_uint32(f"{arch}.{key}", value)
    if tensor_bytes:
        writer.add_tensor("output.weight", np.zeros(tensor_bytes // 2, dtype=np.float16))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path
