"""`explain`'s torch.compile note says what kvtop's plan of the log's own launch charges, by its runner and release
(compile_charge.py; session 71): it had said 'kvtop's plan sits between a warm and a cold start' after session 70 made
each state's plan a stated one.

What each launch's plan charges follows from vLLM's code, not from the function under test: the runner
(runner_eras.py: VLLM_USE_V2_MODEL_RUNNER defaults to 0 through v0.21.0, so v0.19.0 runs V1; from v0.29.0
config/vllm.py:645 runs V2 wherever Triton imports), the combo-kernel benchmark whose copy of the embedding table the V1
runner charges said cold (vLLM's default from v0.11.1, config/compilation.py:659-667 at v0.11.1; none at v0.11.0), and
the V0 engine before v0.8.0 (vllm/worker/worker.py: no V1 compile). The logs: the served H100 start at v0.19.0
(tests/data/served_model/, Llama-3.1-8B, 'Compiling a graph for compile range (1, 8192) takes 5.10 s'), and the T4
start's lines at v0.30.0 (test_compile_cache.py) with its load, or with v0.8.4's 'Compiling a graph for general shape'
line (the corpus's file60295104134 record's), read at the releases those lines come from.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvtop.cli import main
from kvtop.domain.engines.vllm.compile_cache import (
    COLD_SAID_V1,
    NO_COPY_V1,
    UNSAID_V1,
    WARM_SAID_V2,
)
from kvtop.domain.engines.vllm.compile_charge import (
    COLD_COMPILE,
    NOT_BENCHMARKED_V1,
    V0_PLAN,
    WARM_COMPILE_CACHE,
)
from kvtop.domain.explain import explain
from kvtop.domain.explain_request import ExplainRequest
from kvtop.domain.launch import parse_flags
from kvtop.sources.engine_logs import parse_engine_log
from kvtop.sources.hub import load_model
from tests.conftest import DATA
from tests.engines.vllm.test_compile_cache import CONFIG, GENERAL_LINE, T4_START

H100_LOG = DATA / "served_model" / "vllm-0.19.0-llama-3.1-8b-float32-h100.log"
LLAMA = DATA / "configs" / "meta-llama--Llama-3.1-8B-Instruct.json"
# the T4 start's lines with v0.8.4's cold line in place of its load
COLD_GENERAL = "\n".join(line for line in T4_START.splitlines() if "Directly load" not in line) + f"\n{GENERAL_LINE}"


def _compile_note(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The compile note of `kvtop explain ARGV --json`."""
    assert main(["explain", "--no-calibration-store", "--json", *argv]) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    (note,) = [note for note in notes if note.startswith("torch.compile's cache: measured")]
    return str(note)


def _start_note(capsys: pytest.CaptureFixture[str], *said: str) -> str:
    """The H100 launch's `plan` start note (Llama-3.1-8B, v0.19.0, its flags), said as `said`."""
    args = ["plan", "--no-calibration-store", "--json", "--model", str(LLAMA), "--engine", "vllm", "--gpu", "H100",
            "--engine-version", "0.19.0", *said, "--", "--dtype", "float32", "--max-model-len", "8192",
            "--gpu-memory-utilization", "0.95"]  # fmt: skip
    assert main(args) == 0
    (note,) = json.loads(capsys.readouterr().out)["start_notes"]
    return str(note)


def test_a_v1_cold_start_s_note_says_the_v1_plans_words(capsys: pytest.CaptureFixture[str]) -> None:
    """v0.19.0 runs the V1 runner: said cold, the compile's copy of the table is the profile's peak; not said, nothing
    apart. The note says the plan said as the log measured it, in the words `plan` prints for the same launch said cold
    (the unsaid plan is `plan`'s own start note, not this one's)."""
    note = _compile_note([str(H100_LOG), "--engine", "vllm", "--model", str(LLAMA), "--gpu", "H100"], capsys)
    cold = COLD_SAID_V1.removeprefix("cold, as said (--compile-cache cold): ")  # nobody said it: the log measured it
    assert note == (f"{COLD_COMPILE}; kvtop's plan of this launch at vLLM 0.19.0, said as this start was (plan "
                    f"--compile-cache cold): {cold}")  # fmt: skip
    assert "as said" not in note and cold != COLD_SAID_V1
    assert "not said" not in note  # one note: the log measured cold (session 72: the unsaid plan ran on after it)
    assert "sits between" not in note
    assert _start_note(capsys, "--compile-cache", "cold").startswith(f"torch.compile's cache: {COLD_SAID_V1}; ")
    assert _start_note(capsys).endswith(f"; {UNSAID_V1} (docs/engines/vllm.md §2.6)")


def _explain_note(text: str, release: str) -> str:
    settings = parse_flags("vllm", ["--dtype", "float16", "--max-model-len", "4096", "--gpu-memory-utilization", "0.85",
                                    "--engine-version", release])  # fmt: skip
    request = ExplainRequest(log=parse_engine_log(text), model=load_model(str(CONFIG)), settings=settings)
    (note,) = [note for note in explain(request).notes if note.startswith("torch.compile's cache: measured")]
    return note


def test_a_v2_warm_start_s_note_says_the_v2_plans_words() -> None:
    """v0.30.0 runs V2 for every model: said warm, none of the figure beside its profile (the note's plan)."""
    assert _explain_note(T4_START, "0.30.0") == (
        f"{WARM_COMPILE_CACHE}; kvtop's plan of this launch at vLLM 0.30.0, said as this start was (plan "
        f"--compile-cache warm): {WARM_SAID_V2.removeprefix('warm, as said (--compile-cache warm): ')}")  # fmt: skip


def test_before_v0_11_1_the_v1_plan_charges_nothing_for_the_compile() -> None:
    """v0.8.4 (V1 from v0.8.0, no combo-kernel default before v0.11.1): nothing charged said cold or not, and the
    note says so rather than the copy of the table a later release's plan charges."""
    note = _explain_note(COLD_GENERAL, "0.8.4")
    assert note == (f"{COLD_COMPILE}; kvtop's plan of this launch at vLLM 0.8.4, said as this start was (plan "
                    f"--compile-cache cold): {NO_COPY_V1}")  # fmt: skip
    assert "embedding table as the profile's peak" not in note


def test_a_v0_start_is_planned_uncompiled() -> None:
    """v0.7.3 runs the V0 engine, which kvtop plans uncompiled: the note says no compile is charged."""
    assert _explain_note(COLD_GENERAL, "0.7.3") == f"{COLD_COMPILE}; {V0_PLAN}"


QWEN3 = DATA / "configs" / "Qwen--Qwen3-8B.json"
COMBO_ON = '{"inductor_compile_config":{"combo_kernels":true,"benchmark_combo_kernel":true}}'
COMBO_OFF = '{"inductor_compile_config":{"combo_kernels":false}}'


def _planned(capsys: pytest.CaptureFixture[str], config: Path, release: str, said: tuple[str, ...],
             flags: list[str]) -> tuple[int, list[str]]:
    """`plan`'s capacity and start notes of one RTX 4090 launch at `release`, the cache's state `said`."""
    args = ["plan", "--no-calibration-store", "--json", "--model", str(config), "--engine", "vllm", "--gpu",
            "RTX 4090", "--engine-version", release, *said, "--", *flags]  # fmt: skip
    assert main(args) == 0
    plan = json.loads(capsys.readouterr().out)
    return int(plan["token_capacity"]), [str(note) for note in plan["start_notes"]]


def _table_copy(config: Path) -> int:
    """The compile's random copy of the embedding table, from the model's config: vocab × hidden × 2 B (bf16)."""
    shape = json.loads(config.read_text())
    return int(shape["vocab_size"]) * int(shape["hidden_size"]) * 2


def _kv_per_token(config: Path) -> int:
    """K and V of every layer, bf16: layers × KV heads × head dim × 2 × 2 B (from the model's config)."""
    shape = json.loads(config.read_text())
    head_dim = shape.get("head_dim") or shape["hidden_size"] // shape["num_attention_heads"]
    return int(shape["num_hidden_layers"]) * int(shape["num_key_value_heads"]) * int(head_dim) * 4


def test_a_launch_that_turns_the_benchmark_on_before_v0_11_1_is_charged_and_said_so(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """v0.10.2 sets no combo-kernel default, but a launch's inductor_compile_config naming both on benchmarks them
    (vLLM leaves a named setting to Inductor: config/compilation.py; compile_benchmark.benchmarks_combo_kernels): the
    plan charges the copy said cold, so its note must say so, not 'before v0.11.1 the plan charges nothing'. Qwen3-8B's
    copy is 151,936 × 4,096 × 2 B = 1.159 GiB; the cold plan's 7,072 fewer tokens × 147,456 B = 0.971 GiB lie below it
    (the copy less the counted peak it replaces)."""
    flags = ["--max-model-len", "4096", "--max-num-seqs", "16", "--compilation-config", COMBO_ON]
    unsaid, (unsaid_note,) = _planned(capsys, QWEN3, "0.10.2", (), flags)
    cold, (cold_note,) = _planned(capsys, QWEN3, "0.10.2", ("--compile-cache", "cold"), flags)
    assert (unsaid, cold) == (41_584, 34_512)
    assert 0 < (unsaid - cold) * _kv_per_token(QWEN3) < _table_copy(QWEN3) == 1_244_659_712
    assert cold_note.startswith(f"torch.compile's cache: {COLD_SAID_V1}; ")
    assert f"; {UNSAID_V1} (docs/engines/vllm.md §2.6)" in unsaid_note
    assert NO_COPY_V1 not in cold_note + unsaid_note


def test_a_launch_that_turns_combo_kernels_off_is_charged_nothing_and_said_so(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The reverse at v0.19.0 (vLLM's default on from v0.11.1): `combo_kernels: false` benchmarks nothing, so the plan
    charges nothing said cold (44,832 tokens either way), and its note says nothing is charged, not the copy. Without
    that config the same launch's cold plan is below its unsaid one, by less than Llama-3.1-8B's copy (128,256 × 4,096
    × 2 B = 0.98 GiB)."""
    flags = ["--max-model-len", "8192", "--compilation-config", COMBO_OFF]
    unsaid, (unsaid_note,) = _planned(capsys, LLAMA, "0.19.0", (), flags)
    cold, (cold_note,) = _planned(capsys, LLAMA, "0.19.0", ("--compile-cache", "cold"), flags)
    assert unsaid == cold == 44_832
    assert cold_note.startswith(f"torch.compile's cache: cold, as said (--compile-cache cold): {NOT_BENCHMARKED_V1}")
    assert COLD_SAID_V1 not in cold_note and UNSAID_V1 not in unsaid_note
    default_unsaid, _ = _planned(capsys, LLAMA, "0.19.0", (), flags[:2])
    default_cold, _ = _planned(capsys, LLAMA, "0.19.0", ("--compile-cache", "cold"), flags[:2])
    assert default_unsaid == 44_832 and 0 < (default_unsaid - default_cold) * _kv_per_token(LLAMA) < _table_copy(LLAMA)


def test_before_v0_11_1_the_plan_s_figure_is_the_same_said_cold_or_not(capsys: pytest.CaptureFixture[str]) -> None:
    """v0.8.4 sets no combo-kernel benchmark (COMBO_DEFAULT from v0.11.1): the note's 'charges nothing' is the
    plan's figure, cold = unsaid."""
    flags = ["--max-model-len", "8192"]
    unsaid, _ = _planned(capsys, LLAMA, "0.8.4", (), flags)
    cold, (cold_note,) = _planned(capsys, LLAMA, "0.8.4", ("--compile-cache", "cold"), flags)
    assert unsaid == cold and NO_COPY_V1 in cold_note


def test_a_log_whose_kv_memory_is_given_is_said_charged_nothing_as_its_plan_charges(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The H100 start's launch with --kv-cache-memory-bytes (its non-default args): the plan of that launch makes no
    start note (the given KV memory holds whatever the start paid), so explain's note says nothing is charged."""
    args = "'enable_prefix_caching': False}"
    log = tmp_path / "engine.log"
    log.write_text(H100_LOG.read_text().replace(args, "'enable_prefix_caching': False, 'kv_cache_memory_bytes': "
                                                      "45960000000}", 1))  # fmt: skip
    note = _compile_note([str(log), "--engine", "vllm", "--model", str(LLAMA), "--gpu", "H100"], capsys)
    assert note == (f"{COLD_COMPILE}; kvtop's plan of this launch at vLLM 0.19.0 charges nothing for the compile, "
                    "said or not: its KV memory is given")  # fmt: skip
    assert main(["plan", "--no-calibration-store", "--json", "--model", str(LLAMA), "--engine", "vllm", "--gpu", "H100",
                 "--engine-version", "0.19.0", "--compile-cache", "cold", "--", "--dtype", "float32",
                 "--max-model-len", "8192", "--kv-cache-memory-bytes", "45960000000"]) == 0  # fmt: skip
    assert not [note for note in json.loads(capsys.readouterr().out)["start_notes"] if "torch.compile" in note]
