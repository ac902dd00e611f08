"""DeepSeek-V4 on vLLM 0.33.0: its KV cache specs, packed groups and capacity (engines/vllm/dsv4.py, vllm.md §4.7).

Engine figures, from vLLM 0.33.0 building the held-out configs on meta (benchmarks/engine_diff
`registry_sweep.py --engine vllm --only <config> --tps 1,2`: sm90, KV auto, 40 GiB of KV memory
(--kv-cache-memory-bytes 42,949,672,960), max_model_len 32,768, max_num_batched_tokens 8,192, async scheduling):
- each layer's specs: the registry rows tests/data/engine_diff/registry/vllm-0.33.0.json (`layer_specs`);
- the engine core's groups (the runner's `groups`: layers, tokens a block, page bytes), its `num_blocks` and its
  log line, read from that run's answers:
  Flash: (22, 64, 823,680) (21, 64, 786,240) (62, 256, 1,002,240) (42, 4, 870,912) (20, 8, 656,640);
         num_blocks 42,853; "GPU KV cache size: 206,197 tokens, Maximum concurrency for 32,768 tokens per
         request: 6.29x"; the same at TP 2 (every spec has max_tp_shards=1);
  Pro:   (31, 64, 1,160,640) (30, 64, 1,123,200) (91, 256, 1,435,968) (31, 8, 1,017,792) (60, 4, 1,244,160);
         num_blocks 29,909; "GPU KV cache size: 143,914 tokens ... 4.39x".
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.dsv4 import dsv4_packing, layer_specs
from kvtop.domain.errors import UnsupportedModelError
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS, DATA

REGISTRY = DATA / "engine_diff" / "registry" / "vllm-0.33.0.json"
V0330 = ResolvedVersion(text="0.33.0")
ENGINE = {
    "deepseek-ai--DeepSeek-V4-Flash": (
        [(22, 64, 823_680), (21, 64, 786_240), (62, 256, 1_002_240), (42, 4, 870_912), (20, 8, 656_640)],
        42_853, 206_197,
    ),
    "deepseek-ai--DeepSeek-V4-Pro": (
        [(31, 64, 1_160_640), (30, 64, 1_123_200), (91, 256, 1_435_968), (31, 8, 1_017_792), (60, 4, 1_244_160)],
        29_909, 143_914,
    ),
}  # fmt: skip


def _path(name: str) -> str:
    return str(CONFIGS / "heldout" / f"{name}.json")


@pytest.mark.parametrize("name", sorted(ENGINE))
@pytest.mark.parametrize("tp", [1, 2])
def test_each_layers_specs_are_the_engines(name: str, tp: int) -> None:
    rows = json.loads(REGISTRY.read_text())["rows"]
    engine: dict[tuple[str, int, int], int] = {}
    for spec in next(r for r in rows if r["config"] == name and r["tp"] == tp)["stages"][0]["layer_specs"]:
        role = spec["first"].split(".attn", 1)[1].lstrip(".") or "attn"
        key = (role, spec["block_size"], spec["page_size_bytes"])
        engine[key] = engine.get(key, 0) + spec["layers"]
    model = load_model(_path(name))
    ours: dict[tuple[str, int, int], int] = {}
    for layer in range(model.num_layers):
        for s in layer_specs(model, layer):
            ours[(s.role, s.block, s.page_bytes)] = ours.get((s.role, s.block, s.page_bytes), 0) + 1
    assert ours == engine


@pytest.mark.parametrize("name", sorted(ENGINE))
def test_packed_groups_and_blocks_are_the_engines(name: str) -> None:
    groups, num_blocks, tokens = ENGINE[name]
    model = load_model(_path(name))
    packing = dsv4_packing(model, range(model.num_layers), V0330)
    assert [(g.layers, g.block, g.page_bytes) for g in packing.groups] == groups
    assert 40 * (1 << 30) // packing.block_bytes == num_blocks
    # per request: two SWA groups cdiv(127 + 16,384, 64) + 1 = 259, the latents cdiv(32,768, 256) = 128, the
    # ratio-4 states cdiv(7 + 16,384, 4) + 1 = 4,099, the ratio-128 ones cdiv(127 + 16,384, 8) + 1 = 2,065
    assert packing.blocks_per_request(32_768, 16_384) == 2 * 259 + 128 + 4_099 + 2_065
    assert int(num_blocks / packing.blocks_per_request(32_768, 16_384) * 32_768) == tokens


def test_plan_gives_the_engines_blocks_and_logged_tokens(capsys: pytest.CaptureFixture[str]) -> None:
    """Flash at TP 8 on an H100 (what fits there beside the fixed 40 GiB): every spec is whole on every rank
    (max_tp_shards=1), so its blocks are the engine's at TP 1 and 2."""
    _, num_blocks, tokens = ENGINE["deepseek-ai--DeepSeek-V4-Flash"]
    argv = ["plan", "--model", _path("deepseek-ai--DeepSeek-V4-Flash"), "--engine", "vllm", "--engine-version",
            "0.33.0", "--gpu", "H100", "--tp", "8", "--max-model-len", "32768", "--kv-cache-memory-bytes",
            str(40 * (1 << 30)), "--no-calibration-store", "--json"]  # fmt: skip
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["num_blocks"], out["token_capacity"], out["page_size"]) == (num_blocks, tokens, 256)
    assert out["kv_cell"]["bytes_per_token"] == 6_810 * 1_002_240 / 32_768
    # the request in whole figures: 6,810 blocks a max-length request (as above) × the widest page 1,002,240 B
    cell = out["kv_cell"]
    assert (cell["request_pages"], cell["page_bytes"], cell["request_tokens"]) == (6_810, 1_002_240, 32_768)
    assert cell["request_bytes"] == 6_810 * 1_002_240 == 6_825_254_400


def test_the_table_says_a_request_in_whole_blocks(capsys: pytest.CaptureFixture[str]) -> None:
    """The text says what the engine counts (tokens = int(blocks ÷ blocks a request × max_model_len)), each group's
    blocks of a 32,768-token request as the test above adds them, and no fractional byte a token (6,810 ×
    1,002,240 ÷ 32,768 = 208,290.23 is no figure a pool holds)."""
    argv = ["plan", "--model", _path("deepseek-ai--DeepSeek-V4-Flash"), "--engine", "vllm", "--engine-version",
            "0.33.0", "--gpu", "H100", "--tp", "8", "--max-model-len", "32768", "--kv-cache-memory-bytes",
            str(40 * (1 << 30)), "--no-calibration-store"]  # fmt: skip
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert ("KV per max-length request per rank — ranks 0–7: 6,810 blocks × 1,002,240 B = 6,825,254,400 B "
            "(6.36 GiB) for 32,768 tokens (5 packed KV cache groups: 259 (64-token blocks, window 128) + 259 "
            "(64-token blocks, window 128) + 128 (256-token blocks, full) + 4,099 (4-token blocks, window 8) + "
            "2,065 (8-token blocks, window 128)") in text  # fmt: skip
    assert "tokens = int(blocks ÷ 6,810 × 32,768)" in text
    assert "208,290" not in text


def test_an_earlier_release_and_a_bf16_cache_are_refused_by_name(capsys: pytest.CaptureFixture[str]) -> None:
    model = load_model(_path("deepseek-ai--DeepSeek-V4-Flash"))
    with pytest.raises(UnsupportedModelError, match="not modelled for vLLM 0.20.0"):
        dsv4_packing(model, range(model.num_layers), ResolvedVersion(text="0.20.0"))
    argv = ["plan", "--model", _path("deepseek-ai--DeepSeek-V4-Flash"), "--engine", "vllm", "--engine-version",
            "0.33.0", "--gpu", "H200", "--tp", "8", "--kv-cache-dtype", "bfloat16", "--no-calibration-store"]  # fmt: skip
    assert main(argv) != 0
    assert "only supports an FP8 KV cache" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("flags", "field"),
    [
        (["--gpu", "B200", "--tp", "8"], "--gpu"),  # another backend's layout: not read
        (["--gpu", "H200", "--tp", "4", "--pipeline-parallel-size", "2"], "--pipeline-parallel-size"),
        (["--gpu", "H200", "--tp", "8", "--block-size", "64"], "--block-size"),
    ],
)
def test_what_is_not_read_is_refused_by_name(
    flags: list[str], field: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["plan", "--model", _path("deepseek-ai--DeepSeek-V4-Flash"), "--engine", "vllm", "--engine-version",
            "0.33.0", "--no-calibration-store", *flags]  # fmt: skip
    assert main(argv) != 0
    err = capsys.readouterr().err
    assert field in err and "DeepSeek-V4" in err
