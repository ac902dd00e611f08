"""Every engine's flags state the same classes of the flags kvtop does not read (EngineFlags in
kvtop.domain.launch_vocabulary): those with no effect on memory, by kind, and those it does not model. The plan's
"no effect on memory" line, `--help`'s count and `--list-neutral-flags` read these attributes, never a default for
an engine that lacks one. The expected sets are vLLM's and SGLang's tables (flags_neutral.py, flags_unmodelled.py: read off
each wheel's argparse calls), and the empty ones of the engines whose flags were not classified yet."""

from __future__ import annotations

import pytest

from kvtop.domain.engines.registry import ENGINE_IDS, engine_flags
from kvtop.domain.engines.sglang.flags_neutral import NEUTRAL_GROUPS as SGLANG_NEUTRAL_GROUPS
from kvtop.domain.engines.sglang.flags_unmodelled import UNMODELLED as SGLANG_UNMODELLED
from kvtop.domain.engines.vllm.flags_neutral import NEUTRAL_GROUPS
from kvtop.domain.engines.vllm.flags_unmodelled import UNMODELLED
from kvtop.domain.launch import parse_flags
from kvtop.domain.neutral_flags import memory_neutral_flags


@pytest.mark.parametrize("engine", ENGINE_IDS)
def test_each_engine_states_its_classes_and_they_do_not_overlap(engine: str) -> None:
    flags = engine_flags(engine)
    grouped = {flag for group in flags.memory_neutral_groups.values() for flag in group.flags}
    assert grouped == flags.memory_neutral  # one truth: the kinds hold every neutral spelling
    assert flags.memory_neutral <= flags.passthrough  # accepted as typed
    assert not flags.memory_neutral & flags.read_by_rules
    assert not flags.unmodelled & (flags.passthrough | set(flags.spellings))  # typed to kvtop: refused
    assert set(flags.value_placeholders) <= flags.passthrough
    assert set(flags.partly_read) <= flags.unmodelled  # the --cmd note's 'ignored … (read for …)' names them


def test_vllm_and_sglang_classify_their_flags_and_the_other_engines_not_yet() -> None:
    vllm = engine_flags("vllm")
    assert len(vllm.memory_neutral_groups) == len(NEUTRAL_GROUPS) == 10
    assert {flag for flag in vllm.memory_neutral if not flag.startswith("--no-")} == {
        flag for _, group in NEUTRAL_GROUPS.values() for flag in group
    }
    assert set(UNMODELLED) <= vllm.unmodelled and "--cpu-offload-gb" in vllm.unmodelled
    dotted = {f"--limit-mm-per-prompt.{m}{c}": "JSON" for m in ("image", "video", "audio") for c in ("", ".count")}
    assert dict(vllm.value_placeholders) == {"--rope-scaling": "JSON", "--hf-overrides": "JSON", "--limit-mm-per-prompt": "JSON",
                                             **dotted}  # a dotted value is json.loads'd too (mm_limits.FLAGS)
    sglang = engine_flags("sglang")  # engines/sglang/flags_neutral.py, flags_unmodelled.py: its wheels' server_args.py
    assert len(sglang.memory_neutral_groups) == len(SGLANG_NEUTRAL_GROUPS) == 10
    assert "--reasoning-parser" in sglang.memory_neutral and "--enable-symm-mem" in sglang.unmodelled
    assert set(SGLANG_UNMODELLED) <= sglang.unmodelled
    for engine in ("trtllm", "lmdeploy", "llamacpp"):
        flags = engine_flags(engine)
        assert not flags.memory_neutral_groups and not flags.memory_neutral and not flags.unmodelled


def test_an_engine_without_the_classes_names_no_neutral_flag() -> None:
    """SGLang's `--trust-remote-code` is accepted (pass-through) but not classified: not named as neutral."""
    settings = parse_flags("sglang", ["--trust-remote-code"], strict=True)
    assert settings.flags == {"trust-remote-code": True} and memory_neutral_flags(settings) == ()
    vllm = parse_flags("vllm", ["--seed", "42", "--trust-remote-code", "--disable-log-stats"], strict=True)
    assert memory_neutral_flags(vllm) == ("--seed", "--disable-log-stats")
