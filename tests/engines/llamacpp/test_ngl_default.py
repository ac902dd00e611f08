"""No `-ngl`, and the two `i_gpu_start` rules (docs/engines/llamacpp.md §10): a build before ~b6350 defaults to
0 GPU layers (`llama_model_default_params().n_gpu_layers = 0`), later builds to 999 (every layer); with no build
stated the plan takes the current default and names what an older build does, and `-ngl N` (1 ≤ N ≤ n_layer)
names the older `n_layer − N` rule's figure beside the recent `n_layer + 1 − N`.

Expected bytes are hand arithmetic on Llama-3.1-8B (32 layers, 8 KV heads × 128 = 1024 K and 1024 V elements
a layer, f16 = 2 B): cells × layers × (1024 + 1024) × 2 B."""

from __future__ import annotations

from kvtop.domain.engines.llamacpp.eras import DEFAULT_GPU_LAYERS_ERAS, build_release
from kvtop.domain.engines.llamacpp.placement import cpu_layers, host_bytes, planned
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model import LayerKind
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_model
from tests.data_paths import CONFIGS

MODEL = load_model(str(CONFIGS / "meta-llama--Llama-3.1-8B.json"))
CELLS = {LayerKind.FULL: 32768, LayerKind.SLIDING: 0}


def solve(flags: str):  # type: ignore[no-untyped-def]
    return predict(MODEL, parse_flags("llamacpp", flags.split()), gpu_total_bytes=24 * GIB).engine


def test_the_default_layers_by_build() -> None:
    """0 before ~b6350 (src/llama-model.cpp `n_gpu_layers = 0`), 999 from it (PR #15434); not stated: 999."""
    assert [DEFAULT_GPU_LAYERS_ERAS.at(build_release(b)) for b in (1620, 6349, 6350, 7000, None)] == [0, 0, 999, 999, 999]


def test_no_ngl_before_b6350_keeps_every_layers_kv_and_weights_on_the_host() -> None:
    """b6000, no -ngl: 0 GPU layers, i_gpu_start = n_layer: 32768 × 32 × 2048 × 2 B = 4 GiB of KV on the host."""
    bare = parse_flags("llamacpp", ["-c", "32768", "-np", "1"])
    old = planned(MODEL, bare, 6000)
    assert old.host_layers == tuple(range(32)) and "0 GPU layers" in old.why and not old.assumed
    assert host_bytes(MODEL, old, CELLS, "f16", "f16") == 32768 * 32 * 2048 * 2 == 4 * GIB
    assert cpu_layers(MODEL, bare, 6000) == 32  # the weights too
    new = planned(MODEL, bare, 6400)
    assert new.host_layers == () and not new.assumed and cpu_layers(MODEL, bare, 6400) == 0


def test_no_ngl_and_no_build_plans_on_the_gpu_and_names_the_older_default() -> None:
    """No build stated: every layer on the GPU (4 GiB of KV there), and a note with the older builds' figure:
    all 4,294,967,296 B in host memory, 0 B on the GPU."""
    result = solve("-c 32768 -np 1")
    assert result.kv_pool_bytes == 32768 * 32 * 2048 * 2 == 4 * GIB
    note = next(note for note in result.notes if note.startswith("assumed: no -ngl"))
    assert "0 GPU layers" in note and "~b6350" in note
    assert "there 4,294,967,296 B of KV would be in host memory and 0 B on the GPU" in note
    assert not any("weights of CPU layers" in note for note in result.notes)


def test_ngl_15_names_the_older_rules_host_bytes() -> None:
    """-ngl 15: recent i_gpu_start = 32 + 1 − 15 = 18 layers on the CPU (the plan); older 32 − 15 = 17:
    32768 × 17 × 2048 × 2 = 2,281,701,376 B on the host, 32768 × 15 × 2048 × 2 = 2,013,265,920 B on the GPU."""
    result = solve("-c 32768 -np 1 -ngl 15")
    assert result.kv_pool_bytes == 32768 * 14 * 2048 * 2
    note = next(note for note in result.notes if note.startswith("assumed: -ngl 15"))
    assert "n_layer + 1 − N = 18" in note and "n_layer − N = 17" in note
    assert "there 2,281,701,376 B of KV would be in host memory and 2,013,265,920 B on the GPU" in note


def test_where_the_two_rules_agree_nothing_is_assumed() -> None:
    """-ngl 0: both rules put all 32 layers on the CPU; -ngl 33 and -ngl 99: none; `all`: every layer on the GPU."""
    for flags in ("-ngl 0", "-ngl 33", "-ngl 99", "-ngl all"):
        result = solve(f"-c 32768 -np 1 {flags}")
        assert not any(note.startswith("assumed:") for note in result.notes), flags
    assert solve("-c 32768 -np 1 -ngl 0").kv_pool_bytes == 0


def test_ngl_minus_one_is_the_librarys_default() -> None:
    """common sets `mparams.n_gpu_layers` only when it is not −1 (`common_model_params_to_llama`): `-ngl -1`
    at b6000 is the library's 0 layers, all 32768 × 32 × 2048 × 2 B = 4 GiB on the host; at b6400 none."""
    minus_one = parse_flags("llamacpp", ["-c", "32768", "-np", "1", "-ngl", "-1"])
    assert host_bytes(MODEL, planned(MODEL, minus_one, 6000), CELLS, "f16", "f16") == 4 * GIB
    assert planned(MODEL, minus_one, 6400).host_layers == ()
    assert planned(MODEL, minus_one, None).assumed.startswith("-ngl -1 (the library's default) and no build stated")
