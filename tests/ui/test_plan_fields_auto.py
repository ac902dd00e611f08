"""Which blank fields' placeholders offer 'auto: …' (`plan_fields.offers_auto`): those where 'auto' typed reads as the
blank. vLLM reads --max-model-len 'auto' as -1 (auto-fit to memory) from v0.14.0 (kvtop/domain/engines/vllm/
human_ints.py AUTO_ERAS), which kvtop refuses as not modelled: its context field says 'default: …'. At v0.13.0 the
word is no count vLLM reads, and the planner reads it as the blank, as it does for SGLang."""

from __future__ import annotations

from kvtop.ui.plan_fields import offers_auto, pick_hint


def test_vllms_context_length_offers_no_auto_from_the_release_that_reads_it() -> None:
    assert not offers_auto("vllm", "context_length", None)
    assert not offers_auto("vllm", "context_length", "0.14.0")
    assert offers_auto("vllm", "context_length", "0.13.0")
    assert pick_hint("vllm", "context_length", None, "131072") == "default: 131072"


def test_the_other_auto_fields_offer_it() -> None:
    assert offers_auto("sglang", "context_length", None)
    assert offers_auto("vllm", "memory_fraction", None)
    assert pick_hint("sglang", "memory_fraction", "0.5.9", "0.818") == "auto: 0.818"
    assert pick_hint("llamacpp", "memory_fraction", None, None) == "no share"
    assert not offers_auto("sglang", "tp", None)  # not a field of `AUTO_KEYS`
