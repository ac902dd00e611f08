"""The capacity waterfall names each deployment feature (issue 30): clean is the launch without them, each
term is what the engine's own rules lose to one feature, added back in order, and the sum stays exact."""

from __future__ import annotations

import json

from kvtop.domain.capacity import CapacityCause, CapacitySource
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model_config import model_from_config
from kvtop.domain.waterfall import RankActual, engine_capacity
from tests.conftest import CONFIGS

H100 = 81559 << 20
LLAMA8B = model_from_config(
    json.loads((CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json").read_text()), source="llama-3.1-8b"
)


def _waterfall(flags: list[str]):  # type: ignore[no-untyped-def]
    settings = parse_flags("sglang", flags, strict=True)
    ledger = predict(LLAMA8B, settings, gpu_total_bytes=H100, gpu_name="H100")
    actual = [RankActual(gpu_index=0, tokens=None, source=CapacitySource.PREDICTED)]
    return ledger, engine_capacity(ledger, [], "sglang:1", actual).waterfalls[0]


def test_each_feature_is_a_term_between_clean_and_the_launch() -> None:
    # 0.5.14: the first release whose target cell makes room for the draft (engines/sglang/draft_cell.py)
    base = ["--mem-fraction-static", "0.85", "--engine-version", "0.5.14"]
    spec = ["--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "/d/e3"]
    lora = ["--enable-lora", "--max-lora-rank", "64"]
    ledger, waterfall = _waterfall(base + spec + lora)
    bare = predict(LLAMA8B, parse_flags("sglang", base, strict=True), gpu_total_bytes=H100, gpu_name="H100")
    spec_only = predict(LLAMA8B, parse_flags("sglang", base + spec, strict=True), gpu_total_bytes=H100, gpu_name="H100")
    assert waterfall.clean_tokens == bare.token_capacity
    assert [t.cause for t in waterfall.terms] == [CapacityCause.SPECULATIVE, CapacityCause.LORA]
    speculative, lora_term = waterfall.terms
    assert speculative.tokens == spec_only.token_capacity - bare.token_capacity < 0
    assert lora_term.tokens == ledger.token_capacity - spec_only.token_capacity < 0
    # the LoRA term holds the slots' bytes (8 × rank 64 on Llama-3.1-8B: tests/domain/test_deployment_terms.py)
    assert lora_term.bytes == 2_684_354_560
    assert waterfall.actual_tokens == ledger.token_capacity
    assert waterfall.clean_tokens + sum(t.tokens for t in waterfall.terms) == waterfall.actual_tokens


def test_a_launch_without_features_keeps_its_waterfall() -> None:
    ledger, waterfall = _waterfall(["--mem-fraction-static", "0.85"])
    assert waterfall.clean_tokens == waterfall.actual_tokens == ledger.token_capacity
    assert waterfall.terms == ()


def test_the_host_tier_takes_no_gpu_tokens() -> None:
    ledger, waterfall = _waterfall(["--mem-fraction-static", "0.85", "--enable-hierarchical-cache"])
    assert ledger.host_tier is not None and waterfall.terms == ()
