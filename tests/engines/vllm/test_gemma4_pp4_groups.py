"""vLLM 0.21.0's Gemma-4-31B at PP 4 (msamuelson-gemma-4-31b-fp8-block-3090x4-pp4-len33024-u95-v0210, 4 × RTX 3090).

The log: 'GPU KV cache size | 160,048 tokens', stage PP0's weights 10.02 GiB and 9.36 GiB of available KV, the launch
`--limit-mm-per-prompt '{"image":0,"audio":0,"video":0}'` ('running in text-only mode').

vLLM 0.21.0's arithmetic (v1/core/kv_cache_utils.py): get_kv_cache_configs :1922 groups the merged specs of every
stage (:1137-1170: 10 full and 50 sliding layers, group_size 10; full in 1 group, sliding in 5 taking layers[i::5]),
`_project_kv_cache_groups_to_worker` :1880 keeps each stage's own; a stage's block is its largest projected group's
layers × the page (:1293). Stage 0 (layers 0-14: full 5 and 11; sliding positions 0-12 over 5 groups: 3, 3, 3, 2, 2)
holds 3 slots a block; the engine core then takes the least block count (:2038). Before the fix kvtop grouped each
stage by its own counts before 0.33.0 and planned 0 tokens with a note on an override the launch never set.
"""

from __future__ import annotations

import json

from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.pp_groups import projected_groups
from kvtop.domain.engines.vllm.tower_limits import TOWERS
from kvtop.sources.hub import load_model
from tests.cli_in_process import run_kvtop
from tests.data_paths import DATA

CONFIG = DATA / "calibration" / "configs" / "RedHatAI--gemma-4-31B-it-FP8-block.RECONSTRUCTED.json"
LOGGED_TOKENS = 160_048
LIMITS = "{\"image\":0,\"audio\":0,\"video\":0}"
CMD = ("vllm serve RedHatAI/gemma-4-31B-it-FP8-block --pipeline-parallel-size 4 --max-model-len 33024 "
       f"--max-num-batched-tokens 4096 --gpu-memory-utilization 0.95 --kv-cache-dtype auto --limit-mm-per-prompt '{LIMITS}'")  # fmt: skip


def _plan(*extra: str, cmd: str = CMD) -> dict:
    ran = run_kvtop("plan", "--model", str(CONFIG), "--engine", "vllm", "--engine-version", "0.21.0", "--gpu",
                    "RTX3090", "--no-calibration-store", "--cmd", cmd, "--json", *extra)  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    return json.loads(ran.stdout)


def test_every_stage_takes_the_whole_models_groups_projected() -> None:
    """(full groups, sliding groups, slots a block) per stage, from the code's arithmetic in the module docstring."""
    model, version = load_model(str(CONFIG)), ResolvedVersion(text="0.21.0")
    assert projected_groups(model, range(0, 15), version) == (1, 5, 3)
    assert projected_groups(model, range(15, 30), version) == (1, 5, 3)  # full 17, 23, 29; sliding positions 12-23


def test_the_logged_stage_figures_give_the_logged_pool() -> None:
    """PP0's logged available KV, 9.36 GiB (two decimals: 9.355-9.365 GiB), given as the pool's memory
    (--kv-cache-memory-bytes: gpu_worker.py's determine_available_memory returns it, the profile skipped) gives the
    logged 160,048 tokens within that rounding: a block is 3 slots × 262,144 B (the module docstring), so
    10,044,854,763 // 786,432 = 12,772 and 10,055,592,181 // 786,432 = 12,786 blocks. (It read the total from the
    RTX 3090's fitted CUDA total with --non-kv-memory 3.01-3.02 GiB; that fit, 23.576667 -> 23.56625 GiB at session
    66's refit, is not this host's: the log does not print its total.)"""
    low_kv, high_kv = int(9.355 * 2**30), int(9.365 * 2**30)
    low, high = (_plan(cmd=f"{CMD} --kv-cache-memory-bytes {kv}") for kv in (low_kv, high_kv))
    assert low["fits"] and high["fits"] and not low["notes"]
    assert (low["num_blocks"], high["num_blocks"]) == (low_kv // 786_432, high_kv // 786_432) == (12_772, 12_786)
    assert low["token_capacity"] <= LOGGED_TOKENS <= high["token_capacity"]
    assert high["token_capacity"] - low["token_capacity"] < 0.002 * LOGGED_TOKENS
    assert {r["kv_pool_bytes"] for r in low["ranks"]} == {low["num_blocks"] * 3 * 262_144}


def test_the_blind_plan_fits_and_its_interval_holds_the_log() -> None:
    """The launch alone planned 0 (does not fit) before; now every stage holds the shared pool."""
    plan = _plan()
    assert plan["fits"] and not plan["notes"]
    assert plan["token_capacity_min"] <= LOGGED_TOKENS <= plan["token_capacity_max"]


def test_gemma4_builds_no_tower_with_every_modality_at_0() -> None:
    """v0.21.0 gemma4_mm.py:958 builds vision_tower and embed_vision under _mark_tower_model({'image', 'video'}),
    the audio tower under 'audio': every one at 0 builds none; an image allowed keeps the vision tower."""
    def unbuilt(limits: str, release: str = "0.21.0") -> bool:
        flags = {"limit-mm-per-prompt": limits}
        return TOWERS.builds_no_tower("Gemma4ForConditionalGeneration", flags, ResolvedVersion(text=release))

    assert unbuilt(LIMITS) and unbuilt(LIMITS, "0.34.0")
    assert not unbuilt('{"image":1,"audio":0,"video":0}')
    assert not unbuilt(LIMITS, "0.20.1")  # not read before 0.21.0


def _ends(plan: dict) -> list[dict[str, int]]:
    """Each stage's embedding and LM-head bytes."""
    rows = ("embedding", "lm_head")
    return [{w["component"]: w["bytes"] for w in r["weights"] if w["component"] in rows} for r in plan["ranks"]]


def test_gemma4_builds_its_embedding_on_every_stage_and_llama_on_the_ends() -> None:
    """v0.21.0 gemma4.py:972 builds embed_tokens with no is_first_rank guard (v0.34.0 :1029 alike), the LM head tied
    to it (:1555-1556): 262,144 × 5,376 × 2 B on each of the 4 stages. llama.py:368-377 builds embed_tokens on the
    first stage (or the last where tied), :533-548 the LM head on the last: 128,256 × 4,096 × 2 B at each end."""
    gemma = _ends(_plan())
    assert gemma == [{"embedding": 262_144 * 5_376 * 2}] * 4
    ran = run_kvtop("plan", "--model", str(DATA / "configs" / "meta-llama--Llama-3.1-8B-Instruct.json"), "--engine",
                    "vllm", "--engine-version", "0.21.0", "--gpu", "H100", "--no-calibration-store", "--cmd",
                    "vllm serve x --pipeline-parallel-size 4 --max-model-len 8192", "--json")  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    head = 128_256 * 4_096 * 2
    assert _ends(json.loads(ran.stdout)) == [{"embedding": head}, {}, {}, {"lm_head": head}]
