"""A warm torch.compile cache, named where a vLLM log shows it (kvtop/domain/engines/vllm/compile_cache.py).

The lines are a public start's own: Qwen2.5-1.5B-Instruct on a T4 at v0.30.0 (eslam-ahmed43/llm-lab
`logs/vllm_server.log` at 0f01b470, search-index id 70287254902; tests/data/calibration/SOURCES.md), trimmed to the
lines `explain` reads, and the Colab L4 start's v0.8.5.post1 line (orca3-llm-model-inference-ch06-qwen2.5-7b-l4-v085
in tests/data/calibration/vllm.jsonl). The cold messages are the corpus's cold starts' own, as their records quote them:
v0.30.0's 'Compiling a graph for compile range (1, 2048) takes 38.44 s' (aarush-inference-benchmark-qwen3-8b-l4-v0300-
cold) and v0.8.4's 'Compiling a graph for general shape takes 30.69 s' (file60295104134-qwen2.5-7b-2xrtx3090-tp2-v084-
llm), behind the T4 start's and the L4 line's prefixes.
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.compilation import level
from kvtop.domain.engines.vllm.compile_cache import COLD_COMPILE_CHARGE, DISABLED_LOGGED, compile_cache_state
from kvtop.domain.engines.vllm.compile_charge import COLD_COMPILE, WARM_COMPILE_CACHE
from kvtop.domain.engines.vllm.log_records import VllmRankLog
from kvtop.domain.explain import explain
from kvtop.domain.explain_request import ExplainRequest
from kvtop.domain.explanation import Explanation
from kvtop.domain.launch import parse_flags
from kvtop.domain.wording import GIB
from kvtop.sources.engine_logs import parse_engine_log
from kvtop.sources.hub import load_model
from kvtop.ui.planning import PlanOutcome
from kvtop.ui.widgets.plan_result import outcome_table
from tests.conftest import DATA

T4_START = """\
(APIServer pid=670) INFO 10-01 22:40:55 [api_utils.py:286] non-default args: {'model_tag': 'Qwen/Qwen2.5-1.5B-Instruct', 'model': 'Qwen/Qwen2.5-1.5B-Instruct', 'dtype': 'float16', 'max_model_len': 4096, 'gpu_memory_utilization': 0.85, 'enable_prefix_caching': False}
(EngineCore pid=691) INFO 10-01 22:41:12 [gpu_worker.py:441] Using V2 Model Runner
(EngineCore pid=691) INFO 10-01 22:41:19 [model_runner.py:428] Model loading took 2.98 GiB memory and 6.428712 seconds
(EngineCore pid=691) INFO 10-01 22:41:21 [decorators.py:313] Directly load AOT compilation from path /root/.cache/vllm/torch_compile_cache/torch_aot_compile/989225d99d4c230c4690b775f4dc70a07c830a45e3d16ba2334754c12737ff3d/rank_0_0/model
(EngineCore pid=691) INFO 10-01 22:41:21 [monitor.py:53] torch.compile took 0.24 s in total
(EngineCore pid=691) INFO 10-01 22:41:33 [model_runner.py:1066] Graph capturing finished in 10 secs, took 0.28 GiB
(EngineCore pid=691) INFO 10-01 22:41:34 [gpu_worker.py:640] Available KV cache memory: 8.67 GiB
(EngineCore pid=691) INFO 10-01 22:41:34 [kv_cache_utils.py:2395] GPU KV cache size: 324,704 tokens, Maximum concurrency for 4,096 tokens per request: 79.27x
"""
COLD = "\n".join(line for line in T4_START.splitlines() if "Directly load" not in line and "torch.compile took" not in line)
L4_LINE = (
    "(VllmWorker rank=0 pid=1234) INFO 05-01 10:00:00 [backends.py:121] Directly load the compiled graph(s) for shape "
    "None from the cache, took 6.702 s"
)
RANGE_LINE = (
    "(EngineCore pid=691) INFO 10-01 22:41:21 [backends.py:422] Compiling a graph for compile range (1, 2048) takes "
    "38.44 s"
)
GENERAL_LINE = "(VllmWorker rank=0 pid=1234) INFO 05-01 10:00:00 [backends.py:421] Compiling a graph for general shape takes 30.69 s"
COMPILED = COLD.replace("Graph capturing finished", "\n".join((RANGE_LINE, "(EngineCore pid=691) INFO 10-01 22:41:33 [model_runner.py:1066] Graph capturing finished")), 1)
CONFIG = DATA / "calibration" / "configs" / "Qwen--Qwen2.5-1.5B-Instruct.RECONSTRUCTED.json"


def _explain(text: str) -> Explanation:
    settings = parse_flags("vllm", ["--dtype", "float16", "--max-model-len", "4096", "--gpu-memory-utilization", "0.85",
                                    "--engine-version", "0.30.0"])  # fmt: skip
    return explain(ExplainRequest(log=parse_engine_log(text), model=load_model(str(CONFIG)), settings=settings))


def _notes(text: str) -> tuple[str, ...]:
    return _explain(text).notes


def _said(notes: tuple[str, ...], measured: str) -> bool:
    """Whether a note opens with the measured words `measured` (`explain`'s compile note goes on to say what the
    plan of the log's launch charges: tests/engines/vllm/test_compile_note_by_runner.py)."""
    return any(note.startswith(f"{measured}; ") for note in notes)


def test_both_spellings_of_the_warm_cache_line_are_read() -> None:
    """v0.30.0's decorators.py:313-315 'Directly load AOT compilation from path %s' and v0.8.5.post1's
    backends.py:119-121 'Directly load the compiled graph(s) for shape %s from the cache, took %.3f s'."""
    for text, mark in ((T4_START, "Directly load AOT compilation"), (L4_LINE, "Directly load the compiled graph")):
        record = parse_engine_log(text).first(VllmRankLog, lambda r: r.compile_cache_loads or None)
        assert record == (mark,)
    assert parse_engine_log(COLD).first(VllmRankLog, lambda r: r.compile_cache_loads or None) is None


def test_explain_names_a_warm_compile_cache_and_only_then() -> None:
    """The T4 start's log names its warm cache: `explain` says so (not modelled) beside its rebuild of 324,704 tokens;
    the same lines without it say nothing of the cache."""
    assert _said(_notes(T4_START), WARM_COMPILE_CACHE)
    assert not _said(_notes(COLD), WARM_COMPILE_CACHE)


def _state(text: str) -> str | None:
    return compile_cache_state(parse_engine_log(text))


def test_each_spelling_of_a_cold_compile_reads_as_cold() -> None:
    """v0.30.0's 'Compiling a graph for compile range %s takes %.2f s' and v0.8.4's 'for general shape' are a cold
    start; a load with no compile is warm; neither line says nothing (the T4 start's lines without its load)."""
    assert _state(RANGE_LINE) == "cold"
    assert _state(GENERAL_LINE) == "cold"
    assert _state(T4_START) == "warm"
    assert _state(COLD) is None


def test_a_compile_beside_a_load_is_cold() -> None:
    """A start that loaded one graph and compiled another ran Inductor inside its profile: cold."""
    assert _state("\n".join((L4_LINE, GENERAL_LINE))) == "cold"


def test_explain_names_a_cold_compile_and_only_then() -> None:
    """The T4 start's lines with the cold start's compile line in place of its load: `explain` names the cold compile
    (not modelled), not the warm cache; without either line it names neither."""
    notes = _notes(COMPILED)
    assert _said(notes, COLD_COMPILE)
    assert not _said(notes, WARM_COMPILE_CACHE)
    assert not _said(_notes(COLD), COLD_COMPILE)
    assert not _said(_notes(T4_START), COLD_COMPILE)


PLAN = ("--model", str(CONFIG), "--engine", "vllm", "--gpu", "L4", "--max-model-len", "4096")
CACHE_LINE = "torch.compile's cache: not known before a start"


def _plan(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["plan", "--no-calibration-store", *PLAN, *args]) == 0
    return capsys.readouterr().out


def test_the_cold_excess_is_the_nine_pairs_of_section_2_6() -> None:
    """docs/engines/vllm.md §2.6's pairs, cold less warm a GPU: 0.46, 0.47, 0.77, 0.78, 0.98, 0.99, 1.0, 1.74, 2.6 GiB:
    the least 0.46, the median (the fifth of nine) 0.98, the most 2.6."""
    assert (COLD_COMPILE_CHARGE.least_bytes, COLD_COMPILE_CHARGE.median_bytes, COLD_COMPILE_CHARGE.most_bytes) == (
        round(0.46 * GIB), round(0.98 * GIB), round(2.6 * GIB))  # fmt: skip
    assert COLD_COMPILE_CHARGE.pairs == 9 and COLD_COMPILE_CHARGE.median() == "0.98 GiB"
    for note in (WARM_COMPILE_CACHE, COLD_COMPILE):  # `explain`'s notes say the plan's figures, not their own
        assert "0.46–2.60 GiB a GPU on 9 pairs of one launch in kvtop's corpus, median 0.98 GiB" in note


def test_a_compiled_plan_names_the_cold_compile_in_its_tokens(capsys: pytest.CaptureFixture[str]) -> None:
    """v0.30.0 on an L4 (V1, -O2 by default: compiled): `plan`'s text (among what the plan assumes) and its JSON name
    the cache, with the median 0.98 GiB in whole vLLM blocks as the capacity counts them: 28,672 B a token (Qwen2.5-1.5B: 28 layers × 2 (K, V) ×
    2 KV heads × 128 × 2 B) × 16 tokens
    = 458,752 B a block; round(0.98 GiB) = 1,052,266,988 B holds 2,293 blocks = 36,688 tokens (the old rate-times-GiB
    rounding said 36,700, a figure no block count makes)."""
    text = _plan(capsys, "--engine-version", "0.30.0")
    rate = float(next(line for line in text.splitlines() if line.startswith("Exchange rate")).split()[2].replace(",", ""))
    said = [line for line in text.splitlines() if CACHE_LINE in line]
    assert len(said) == 1 and said[0].startswith(f"  {CACHE_LINE} (not modelled)")
    assert text.index("what the plan assumes") < text.index(CACHE_LINE) < text.index("Budget (")
    assert rate == pytest.approx(GIB / 28_672, abs=1)  # the plan's cell: 2**30 B ÷ 28,672 B
    assert "median 0.98 GiB, ≈ 36,688 tokens of this plan" in said[0]
    assert "0.46–2.60 GiB a GPU" in said[0] and "docs/engines/vllm.md §2.6" in said[0]
    out = json.loads(_plan(capsys, "--engine-version", "0.30.0", "--json"))
    assert [note for note in out["start_notes"] if CACHE_LINE in note] == [said[0].strip()]
    assert not any(CACHE_LINE in note for note in out["not_modelled"])


def test_a_pipeline_plan_keeps_the_line(capsys: pytest.CaptureFixture[str]) -> None:
    """PP 2 (v0.30.0, L4): every stage is re-solved at the least stage's block count (vLLM's §4 shared count, kvtop's
    arithmetic, not the operator's --num-gpu-blocks-override), and the line stays, in the PP 2 plan's own tokens: a stage
    holds half the layers, 14,336 B a token × 16 = 229,376 B a block; 1,052,266,988 B holds 4,587 blocks = 73,392."""
    text = _plan(capsys, "--engine-version", "0.30.0", "--pp", "2")
    rate = float(next(line for line in text.splitlines() if line.startswith("Exchange rate")).split()[2].replace(",", ""))
    said = [line for line in text.splitlines() if CACHE_LINE in line]
    assert rate == pytest.approx(GIB / 14_336, abs=1)
    assert len(said) == 1 and "median 0.98 GiB, ≈ 73,392 tokens of this plan" in said[0]
    given = _plan(capsys, "--engine-version", "0.30.0", "--pp", "2", "--num-gpu-blocks-override", "2000")
    assert CACHE_LINE not in given  # the operator's count holds whatever the start paid


def test_an_eager_or_uncompiled_plan_does_not(capsys: pytest.CaptureFixture[str]) -> None:
    """--enforce-eager (mode NONE, config/vllm.py:1548 at v0.30.0), -O0 (v0.12.0 on: mode NONE where none is stated),
    a compilation config mode 0, a V0 release (v0.6.6: no V1 compile) and a given --kv-cache-memory-bytes (no
    profile sizes the pool) plan no such line."""
    for args in (("--engine-version", "0.30.0", "--enforce-eager"), ("--engine-version", "0.30.0", "-O0"),
                 ("--engine-version", "0.30.0", "--compilation-config", '{"mode": 0}'),
                 ("--engine-version", "0.30.0", "--kv-cache-memory-bytes", "8G"),
                 ("--engine-version", "0.6.6")):  # fmt: skip
        assert CACHE_LINE not in _plan(capsys, *args), args


def test_before_v0_12_minus_o0_is_compilation_level_0() -> None:
    """Before v0.12.0 `-O` is the compilation config (arg_utils.py:934 at v0.11.0): `-O0` / `-O 0` its level 0,
    NO_COMPILATION, read as compiling nothing; `-O3` (level 3, PIECEWISE) and a JSON object are no optimization level."""
    at = ResolvedVersion(text="0.11.0")
    assert level({"O0": True}, at) == 0 and level({"O": "0"}, at) == 0
    assert level({"O3": True}, at) is None and level({"O": '{"level": 3}'}, at) is None
    assert level({"compilation-config": "0"}, at) == 0  # CompilationConfig.from_cli: a digit is the level
    assert level({"O3": True}, ResolvedVersion(text="0.12.0")) == 3


def test_the_planner_names_it_with_plans_words() -> None:
    """The planner's table, under its fresh-start line, says the plan's same words (`CapacityPlan.start_notes`)."""
    settings = parse_flags("vllm", ["--engine-version", "0.30.0", "--max-model-len", "4096"], strict=True)
    plan = planned_capacity(load_model(str(CONFIG)), settings, gpu_total_bytes=22 * GIB, gpu_name="L4")
    said = [note for note in plan.start_notes if CACHE_LINE in note]
    assert len(said) == 1
    outcome = PlanOutcome(before=plan.ledger, after=plan.ledger, settings=settings, after_plan=plan)
    table = outcome_table(outcome, None).plain
    assert said[0] in table.replace("\n", " ")
    # under its own label, not a blank indent under 'fresh start' (session 70's operator read it as a stray indent)
    (line,) = [line for line in table.splitlines() if CACHE_LINE in line]
    assert line.startswith("start note") and line.split(None, 2)[2].startswith(CACHE_LINE)


def test_explain_on_a_logged_state_says_measured_not_the_plans_line() -> None:
    """A log that names its state: `explain` says it measured (cold or warm), never the plan's 'not known before a
    start'; its ledger, solved from the log's KV memory, carries no cold-start charge."""
    for text, said in ((COMPILED, COLD_COMPILE), (T4_START, WARM_COMPILE_CACHE)):
        result = _explain(text)
        assert _said(result.notes, said) and said.startswith("torch.compile's cache: measured")
        assert not any(CACHE_LINE in note for note in result.notes)
        assert result.ledger is not None and result.ledger.engine.start_cache is None


# v0.30.0's line where the cache is off (compilation/backends.py:1091-1092: `logger.info_once("vLLM's torch.compile cache
# is disabled.")`), in the T4 start's prefix, before its compile
DISABLED_LINE = "(EngineCore pid=691) INFO 10-01 22:41:20 [backends.py:1092] vLLM's torch.compile cache is disabled."


def test_explain_names_a_disabled_cache_beside_the_cold_compile() -> None:
    """A log whose line says the cache is off: `explain`'s compile note is the cold one with what turns the cache off
    (VLLM_DISABLE_COMPILE_CACHE=1, by release); the same log without the line says the cold note alone."""
    disabled = COMPILED.replace(RANGE_LINE, f"{DISABLED_LINE}\n{RANGE_LINE}", 1)
    notes = _explain(disabled).notes
    assert any(note.startswith(f"{COLD_COMPILE}; ") and note.endswith(f"; {DISABLED_LOGGED}") for note in notes)
    assert "VLLM_DISABLE_COMPILE_CACHE=1" in DISABLED_LOGGED and "backends.py" in DISABLED_LOGGED
    plain = _explain(COMPILED).notes
    assert _said(plain, COLD_COMPILE) and not any(DISABLED_LOGGED in note for note in plain)
