"""The hub, offline and online: a fake hub on a local port stands in for huggingface.co (HF_ENDPOINT).

kvtop runs as a user runs it (a subprocess of `kvtop plan`), so huggingface_hub reads its
endpoint, cache and offline switch from the environment as it does in the field. The
checkpoint is Llama-3.1-8B-Instruct's, described by its published tensor shapes; its expected
size is the `total_size` of the repo's model.safetensors.index.json: 16,060,522,496 bytes.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from kvtop.domain.errors import InputError
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS
from tests.sources.fake_hub import FakeHub, HubFile, HubRepo, safetensors_file

REPO = "meta-llama/Llama-3.1-8B-Instruct"
PUBLISHED_TOTAL_SIZE = 16_060_522_496  # model.safetensors.index.json "metadata": {"total_size": …}
ROOT = Path(__file__).resolve().parents[2]
# SGLang (plan's default engine) holds the rope's cos/sin cache whole on the rank beside the checkpoint, in float32
# on CUDA: 131,072 positions × head_dim 128 × 4 B = 67,108,864 B (engines/sglang/weights_held.py)
SGLANG_ROPE_CACHE = 131_072 * 128 * 4
# SGLang measures the load as free memory before less after, so the unused tails of the segments PyTorch's caching
# allocator opened count (c10/cuda/CUDACachingAllocator.cpp; kvtop/domain/torch_segments.py): every matrix and the rope
# cache are whole 2 MiB multiples (the embedding and LM head 128,256 × 4,096 × 2 B = 1,002 MiB), the 65 norms of
# 4,096 × 2 B (532,480 B) share one 2 MiB small segment, 1,564,672 B of it unused
ALLOCATOR_TAILS = (2 << 20) - 65 * 4_096 * 2


def llama_31_8b_shards() -> dict[str, dict[str, tuple[str, tuple[int, ...]]]]:
    """The four shards' tensors (bf16): 128,256 × 4,096 embeddings and head, 32 layers of GQA 32/8."""

    def layer(i: int) -> dict[str, tuple[str, tuple[int, ...]]]:
        p = f"model.layers.{i}."
        return {
            p + "self_attn.q_proj.weight": ("BF16", (4096, 4096)),
            p + "self_attn.k_proj.weight": ("BF16", (1024, 4096)),
            p + "self_attn.v_proj.weight": ("BF16", (1024, 4096)),
            p + "self_attn.o_proj.weight": ("BF16", (4096, 4096)),
            p + "mlp.gate_proj.weight": ("BF16", (14336, 4096)),
            p + "mlp.up_proj.weight": ("BF16", (14336, 4096)),
            p + "mlp.down_proj.weight": ("BF16", (4096, 14336)),
            p + "input_layernorm.weight": ("BF16", (4096,)),
            p + "post_attention_layernorm.weight": ("BF16", (4096,)),
        }

    shards: dict[str, dict[str, tuple[str, tuple[int, ...]]]] = {}
    for n, layers in enumerate((range(0, 9), range(9, 20), range(20, 31), range(31, 32)), start=1):
        tensors = {name: t for i in layers for name, t in layer(i).items()}
        if n == 1:
            tensors["model.embed_tokens.weight"] = ("BF16", (128256, 4096))
        if n == 4:
            tensors["model.norm.weight"] = ("BF16", (4096,))
            tensors["lm_head.weight"] = ("BF16", (128256, 4096))
        shards[f"model-0000{n}-of-00004.safetensors"] = tensors
    return shards


def llama_repo() -> HubRepo:
    config = (CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json").read_bytes()
    files = {"config.json": HubFile(head=config, size=len(config))}
    weight_map = {}
    for name, tensors in llama_31_8b_shards().items():
        files[name] = safetensors_file(tensors)
        weight_map.update(dict.fromkeys(tensors, name))
    index = json.dumps({"metadata": {"total_size": PUBLISHED_TOTAL_SIZE}, "weight_map": weight_map}).encode()
    files["model.safetensors.index.json"] = HubFile(head=index, size=len(index))
    return HubRepo(files=files)


def kvtop(home: Path, *args: str, endpoint: str, offline: bool = False) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_") and "TOKEN" not in k}
    env.update(HF_HOME=str(home), HF_ENDPOINT=endpoint, PYTHONPATH=str(ROOT), HF_HUB_DISABLE_TELEMETRY="1")
    if offline:
        env["HF_HUB_OFFLINE"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "kvtop", "plan", *args], capture_output=True, text=True, timeout=60, env=env
    )


def closed_port_endpoint() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"  # nothing listens there once the socket is closed


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr[-400:]
    assert result.stderr.count("\n") == 1, result.stderr
    return result.stderr


def test_weights_come_from_the_headers_by_range_requests_then_the_cache_serves_offline(
    tmp_path: Path,
) -> None:
    with FakeHub({REPO: llama_repo()}) as hub:
        online = kvtop(tmp_path, "--model", REPO, "--json", endpoint=hub.endpoint)
        assert online.returncode == 0, online.stderr[-400:]
        plan = json.loads(online.stdout)
        assert plan["checkpoint_bytes"] == PUBLISHED_TOTAL_SIZE
        # kvtop's own count agrees at TP 1: the checkpoint, plus the rope cache the engine holds beside it and the
        # allocator's segment tails
        held = PUBLISHED_TOTAL_SIZE + SGLANG_ROPE_CACHE + ALLOCATOR_TAILS
        assert plan["ranks"][0]["weights_bytes"] == held == 16_129_196_032
        weights = [r for r in hub.requests if r.path.endswith(".safetensors")]
        assert {r.path.rsplit("/", 1)[-1] for r in weights if r.method == "GET"} == set(llama_31_8b_shards())
        for request in weights:  # header ranges only: huggingface_hub asks for the first 100 kB
            assert request.method == "HEAD" or request.range == "bytes=0-100000", request
        served = len(hub.requests)
        cached = kvtop(tmp_path, "--model", REPO, "--json", endpoint=hub.endpoint, offline=True)
        assert cached.returncode == 0, cached.stderr[-400:]
        assert len(hub.requests) == served  # HF_HUB_OFFLINE: not one request
        again = json.loads(cached.stdout)
        assert again["token_capacity"] == plan["token_capacity"] and again["checkpoint_bytes"] is None


def test_an_unreachable_hub_names_the_preset_a_local_path_and_offline_mode(tmp_path: Path) -> None:
    line = one_line_error(kvtop(tmp_path, "--model", REPO, endpoint=closed_port_endpoint()))
    assert "cannot reach the Hugging Face hub" in line and "ConnectError" in line
    assert "--model llama-3.1-8b" in line and "Llama-3.1-8B-Instruct/config.json" in line
    assert "HF_HUB_OFFLINE=1" in line


def test_a_hub_that_never_answers_is_given_up_at_the_deadline(tmp_path: Path) -> None:
    with FakeHub({}, silent=True) as hub:
        line = one_line_error(kvtop(tmp_path, "--model", REPO, endpoint=hub.endpoint))
    assert "did not answer within 2 s" in line and "--model llama-3.1-8b" in line


def test_offline_and_not_cached_asks_nothing_and_says_what_to_use(tmp_path: Path) -> None:
    with FakeHub({REPO: llama_repo()}) as hub:
        line = one_line_error(kvtop(tmp_path, "--model", REPO, endpoint=hub.endpoint, offline=True))
        assert hub.requests == []
    assert "not in the Hugging Face cache" in line and "--model llama-3.1-8b" in line
    assert "HF_HUB_OFFLINE=1" not in line  # it is already set


@pytest.mark.parametrize(
    ("repos", "needle"),
    [({}, "is not on the hub (or is private: set HF_TOKEN)"), ({REPO: HubRepo(gated=True)}, "is gated")],
)
def test_missing_and_gated_repos_say_which(tmp_path: Path, repos: dict[str, HubRepo], needle: str) -> None:
    with FakeHub(repos) as hub:
        line = one_line_error(kvtop(tmp_path, "--model", REPO, endpoint=hub.endpoint))
    assert needle in line and REPO in line


def test_a_forged_remote_header_names_the_shard_and_the_tensor(tmp_path: Path) -> None:
    repo = llama_repo()
    shard = "model-00004-of-00004.safetensors"
    head = repo.files[shard].head
    header = json.loads(head[8:])
    header["lm_head.weight"]["shape"] = [128256, 4097]  # no longer the bytes its offsets hold
    raw = json.dumps(header).encode()
    repo.files[shard] = HubFile(head=struct.pack("<Q", len(raw)) + raw, size=repo.files[shard].size, lfs=True)
    with FakeHub({REPO: repo}) as hub:
        line = one_line_error(kvtop(tmp_path, "--model", REPO, endpoint=hub.endpoint))
    assert "lm_head.weight: shape [128256, 4097] of BF16 is not the 1,050,673,152 bytes" in line
    assert f"{REPO}/{shard}" in line


def write_checkpoint(folder: Path, shards: dict[str, dict[str, tuple[str, tuple[int, ...]]]]) -> None:
    """Real safetensors files: the header, then the tensor bytes as a sparse hole (nothing written)."""
    folder.mkdir()
    (folder / "config.json").write_bytes((CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json").read_bytes())
    for name, tensors in shards.items():
        file = safetensors_file(tensors)
        with (folder / name).open("wb") as handle:
            handle.write(file.head)
            handle.truncate(file.size)


def test_a_local_checkpoint_folder_is_sized_from_its_headers(tmp_path: Path) -> None:
    write_checkpoint(tmp_path / "Llama-3.1-8B-Instruct", llama_31_8b_shards())
    model = load_model(str(tmp_path / "Llama-3.1-8B-Instruct"))
    assert model.checkpoint_bytes == PUBLISHED_TOTAL_SIZE


@pytest.mark.parametrize(
    ("raw", "needle"),
    [
        (b"\x01\x00", "truncated safetensors file"),
        (struct.pack("<Q", 1 << 62) + b"{}", "header length 4,611,686,018,427,387,904 exceeds"),
        (struct.pack("<Q", 4) + b"\xff\xfe\x00\x01", "not UTF-8"),
        (struct.pack("<Q", 5) + b"[1,2]", "must be a JSON object"),
        (struct.pack("<Q", 2) + b'{"', "malformed JSON"),
    ],
)
def test_a_broken_local_header_is_one_line_naming_the_file(tmp_path: Path, raw: bytes, needle: str) -> None:
    folder = tmp_path / "ckpt"
    write_checkpoint(folder, {})
    (folder / "model.safetensors").write_bytes(raw)
    with pytest.raises(InputError, match=needle) as caught:
        load_model(str(folder))
    assert str(folder / "model.safetensors") in str(caught.value)


@pytest.mark.parametrize(
    ("entry", "needle"),
    [
        ({"dtype": "BF16", "shape": [2, -2], "data_offsets": [0, 8]}, r"w\.shape\[1\]: must be at least 0"),
        ({"dtype": "BF16", "shape": [2, 2], "data_offsets": [8, 0]}, "w: data_offsets end 0 before begin 8"),
        ({"dtype": "BF16", "shape": "2x2", "data_offsets": [0, 8]}, r"w\.shape: must be a list"),
        ({"dtype": 7, "shape": [2], "data_offsets": [0, 4]}, r"w\.dtype: must be a string"),
        (
            {"dtype": "BF16", "shape": [2], "data_offsets": [0, 1e30]},
            r"w\.data_offsets\[1\]: must be an integer",
        ),
        ({"dtype": "BF16", "shape": [2]}, r"w\.data_offsets: missing"),
    ],
)
def test_a_forged_local_tensor_entry_names_the_tensor_and_field(
    tmp_path: Path, entry: dict, needle: str
) -> None:
    folder = tmp_path / "ckpt"
    write_checkpoint(folder, {})
    header = json.dumps({"w": entry}).encode()
    (folder / "model.safetensors").write_bytes(struct.pack("<Q", len(header)) + header + bytes(8))
    with pytest.raises(InputError, match=needle):
        load_model(str(folder))
