"""Segments a later small allocation pins in vLLM's profile, named by release for either runner
(`profile_run.PROFILE_SPLIT_UNLIMITED`).

vLLM 0.31.0 runs `profile_run` under `_scoped_allocator_max_split(max_split_size_mb=20)` (v1/worker/gpu_worker.py:612-626),
its comment saying why: without a split limit "a later small allocation can be carved out of a freed multi-GiB block
and pin the whole segment past the empty_cache() in memory_profiling, so it is counted as consumed and taken from the
KV cache". v0.30.0 applies the limit to `load_model` only (:499-507; `profile_run` at :568-572), and its budget counts
the free memory the process took (`total_consumed`, utils/mem_utils.py:312-314), as from v0.27.0; v0.26.0's charged
the torch peak's increase (mem_utils.py:311), which no reserved segment raises. The Vote-App start (tests/data/
calibration/vllm.jsonl, Qwen3-8B-AWQ on an RTX 5070 Ti) left 1.09 GiB less KV at v0.30.0 than at v0.31.0 with the
same flags on its EAGLE-3 pair: the size follows the start's allocation order, so the plan names it and charges none.
"""

from __future__ import annotations

from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.engines.vllm.profile_run import PINNED_SEGMENTS, PROFILE_SPLIT_UNLIMITED
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.sources.hub import load_config_file
from tests.data_paths import CONFIGS

QWEN3_8B = load_config_file(CONFIGS / "Qwen--Qwen3-8B.json")


def _version(text: str) -> ResolvedVersion:
    return ResolvedVersion(text=text, source=VersionSource.FLAG, detail=f"--engine-version {text}")


def _graphs(version: str, *extra: str):  # type: ignore[no-untyped-def]
    settings = parse_flags("vllm", ["--engine-version", version, "--max-model-len", "16384",
                                    "--gpu-memory-utilization", "0.80", *extra])  # fmt: skip
    plan = planned_capacity(QWEN3_8B, settings, gpu_total_bytes=gpu_total_bytes("RTX5070-TI"), gpu_name="RTX5070-TI")
    return plan.estimate.term(Term.CUDA_GRAPHS)


def test_named_from_v0_27_to_v0_30() -> None:
    assert [PROFILE_SPLIT_UNLIMITED.at(_version(v)) for v in ("0.26.0", "0.27.0", "0.30.0", "0.31.0", "0.34.0")] == [
        False, True, True, False, False]  # fmt: skip


def test_the_plan_says_it_where_the_release_profiles_so() -> None:
    before, after = _graphs("0.30.0"), _graphs("0.31.0")
    assert before is not None and after is not None
    assert PINNED_SEGMENTS in before.basis and PINNED_SEGMENTS not in after.basis


def test_the_v1_runner_s_plan_says_it_too() -> None:
    # v0.30.0 gpu_worker.py:568-572 runs profile_run outside the split limit whichever runner the worker holds; an
    # n-gram launch runs the V1 runner there (config/vllm.py:2839-2850 at v0.30.0)
    ngram = ("--speculative-config", '{"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4}')
    before, after = _graphs("0.30.0", *ngram), _graphs("0.31.0", *ngram)
    assert before is not None and after is not None
    assert "V2" not in before.label
    assert PINNED_SEGMENTS in before.basis and PINNED_SEGMENTS not in after.basis
