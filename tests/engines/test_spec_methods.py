"""A speculative method the engine's release does not take is refused with its flag and the accepted values
(session 46, task G3), for vLLM, LMDeploy and TensorRT-LLM as SGLang already did.

Before: `kvtop plan --engine vllm --speculative-config '{"method": "foo", ...}'`, LMDeploy's
`--speculative-algorithm foo` and TensorRT-LLM's `speculative_config.decoding_type: foo` were planned as a draft
model. Expected values are the engines' own lists, read in their code (cited at each case), never kvtop's tables.
"""

from __future__ import annotations

import pytest

from kvtop.domain.deployment import SpecKind
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.errors import InputError
from kvtop.domain.launch import LaunchSettings


def _setup(engine: str, flags: dict[str, str | bool], version: str | None = None):
    settings = LaunchSettings(engine=engine, engine_version=version, flags=flags)
    return engine_rules(engine).deployment.setup(settings)


def _vllm(method: str) -> dict[str, str | bool]:
    return {"speculative-config": f'{{"method": "{method}", "model": "draft", "num_speculative_tokens": 2}}'}


@pytest.mark.parametrize(
    ("engine", "flags", "flag", "named"),
    [
        ("vllm", _vllm("foo"), "--speculative-config", "eagle3"),
        ("lmdeploy", {"speculative-algorithm": "foo"}, "--speculative-algorithm", "deepseek_mtp"),
        ("trtllm", {"speculative_config.decoding_type": "foo"}, "--speculative_config.decoding_type", "Eagle3"),
    ],
)
def test_an_unknown_method_is_refused_naming_the_flag_and_the_accepted_values(engine, flags, flag, named) -> None:
    with pytest.raises(InputError, match="must be one of") as caught:
        _setup(engine, flags)
    assert caught.value.field == flag
    assert named in str(caught.value) and "'foo'" in str(caught.value)


@pytest.mark.parametrize(
    ("version", "method", "taken"),
    [
        # vllm 0.13.0 config/speculative.py: SpeculativeMethod = Literal["ngram", "medusa", "mlp_speculator",
        # "draft_model", "suffix", EagleModelTypes] (eagle, eagle3 and eight MTP types): no dflash yet
        ("0.13.0", "medusa", True),
        ("0.13.0", "dflash", False),
        # vllm 0.33.0: medusa and mlp_speculator gone; dflash (DFlashModelTypes), ngram_gpu, dspark, custom_class in
        ("0.33.0", "medusa", False),
        ("0.33.0", "dflash", True),
        ("0.33.0", "kimi_k3_mtp", True),
        (None, "medusa", True),  # no release stated: a method some release takes is never refused
        (None, "dflash", True),
        (None, "EAGLE3", False),  # a pydantic Literal: the case is the engine's
    ],
)
def test_vllm_takes_each_releases_methods(version: str | None, method: str, taken: bool) -> None:
    if taken:
        assert _setup("vllm", _vllm(method), version).spec_method == method
    else:
        with pytest.raises(InputError, match=f"got '{method}'"):
            _setup("vllm", _vllm(method), version)


@pytest.mark.parametrize(
    ("version", "method", "outcome"),
    [
        # lmdeploy/cli/utils.py add_spec_group, choices=: v0.11.0 ['eagle', 'eagle3', 'deepseek_mtp'];
        # v0.12.3 adds 'qwen3_5_mtp' (PR #4437); v0.16.0 'hy3_mtp' (PR #4815); v0.10.2 has no such flag
        ("0.12.2", "qwen3_5_mtp", "must be one of eagle, eagle3, deepseek_mtp "),
        ("0.12.3", "qwen3_5_mtp", SpecKind.MTP),
        ("0.15.0", "hy3_mtp", "must be one of eagle, eagle3, deepseek_mtp, qwen3_5_mtp "),
        ("0.16.0", "hy3_mtp", SpecKind.MTP),
        ("0.16.0", "eagle3", SpecKind.DRAFT_MODEL),
        ("0.10.2", "eagle", "this release has no speculative decoding"),
        (None, "EAGLE3", "must be one of"),  # argparse choices compare exactly
    ],
)
def test_lmdeploy_takes_each_releases_choices(version: str | None, method: str, outcome: object) -> None:
    flags: dict[str, str | bool] = {"speculative-algorithm": method}
    if isinstance(outcome, SpecKind):
        assert _setup("lmdeploy", flags, version).spec_kind is outcome
    else:
        with pytest.raises(InputError, match=str(outcome)):
            _setup("lmdeploy", flags, version)


@pytest.mark.parametrize(
    ("method", "kind"),
    [
        # 2025 llm_args.py DecodingBaseConfig.from_dict keys "MTP", "DraftTarget"; 2026 main's Literals
        # "Draft_Target", "Eagle3", "SA": every tree's spelling is taken (no release tag was read)
        ("MTP", SpecKind.MTP),
        ("DraftTarget", SpecKind.DRAFT_MODEL),
        ("Draft_Target", SpecKind.DRAFT_MODEL),
        ("Eagle3", SpecKind.DRAFT_MODEL),
        ("NGram", SpecKind.NGRAM),
    ],
)
def test_trtllm_takes_the_decoding_types_of_the_trees_read(method: str, kind: SpecKind) -> None:
    assert _setup("trtllm", {"speculative_config.decoding_type": method}).spec_kind is kind


@pytest.mark.parametrize(
    ("version", "method", "outcome"),
    [
        # sglang 0.5.6.post2 server_args.py: --speculative-algorithm choices=["EAGLE", "EAGLE3", "NEXTN", "STANDALONE",
        # "NGRAM"]: no DFLASH yet
        ("0.5.6.post2", "NEXTN", SpecKind.MTP),
        ("0.5.6.post2", "DFLASH", "must be one of EAGLE, EAGLE3, NEXTN, STANDALONE, NGRAM "),
        # 0.5.23 speculative/spec_info.py SpeculativeAlgorithm.from_string: name.upper() among the enum's names
        # (DFLASH, UNO, DSPARK, EAGLE, EAGLE3, FROZEN_KV_MTP, STANDALONE, NGRAM) or the alias NEXTN
        ("0.5.23", "dflash", SpecKind.MTP),  # no draft path given: the model's own layers (its term not modelled)
        ("0.5.23", "ngram", SpecKind.NGRAM),
        # LOOKAHEAD: an earlier tree's spec_info.py from_string name_map (NONE, EAGLE, EAGLE3, STANDALONE, LOOKAHEAD),
        # NGRAM's name before it; neither wheel read takes it (0.5.23: ValueError "Unknown speculative algorithm")
        ("0.5.23", "LOOKAHEAD", "must be one of"),
        ("0.5.6.post2", "LOOKAHEAD", "must be one of"),
        ("0.5.2", "LOOKAHEAD", SpecKind.NGRAM),
        (None, "LOOKAHEAD", SpecKind.NGRAM),  # no release stated: a name some release takes is never refused
        (None, "WARP", "no release kvtop read takes it"),
        (None, "FROZEN_KV_MTP", SpecKind.MTP),  # no release stated: a name some release takes is never refused
    ],
)
def test_sglang_takes_each_releases_algorithms(version: str | None, method: str, outcome: object) -> None:
    flags: dict[str, str | bool] = {"speculative-algorithm": method}
    if isinstance(outcome, SpecKind):
        assert _setup("sglang", flags, version).spec_kind is outcome
    else:
        with pytest.raises(InputError, match=str(outcome)) as caught:
            _setup("sglang", flags, version)
        assert caught.value.field == "--speculative-algorithm"


@pytest.mark.parametrize("method", ["NONE", "none", "None"])
def test_sglang_0_5_23_reads_none_in_any_case_as_no_speculation(method: str) -> None:
    # sglang 0.5.23 speculative/spec_info.py: SpeculativeAlgorithm has a NONE member and from_string does
    # cls[name.upper()], so "none" in any case is SpeculativeAlgorithm.NONE (is_none(): no draft, no speculation)
    setup = _setup("sglang", {"speculative-algorithm": method}, "0.5.23")
    assert setup.spec_method is None and setup.spec_kind is None and setup.draft_model is None


def test_sglang_0_5_6_post2_refuses_none() -> None:
    # sglang 0.5.6.post2 server_args.py: argparse choices=["EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM"]
    with pytest.raises(InputError, match="must be one of EAGLE, EAGLE3, NEXTN, STANDALONE, NGRAM "):
        _setup("sglang", {"speculative-algorithm": "NONE"}, "0.5.6.post2")


@pytest.mark.parametrize(
    ("method", "kind", "label"),
    [
        # 2025 llm_args.py from_dict: "Lookahead" (LookaheadDecodingConfig: the target's own lookahead windows and
        # n-gram pool, no draft model); 2026 main: "SA" (suffix automaton of the tokens so far, no model) and
        # "User_Provided" (a drafter object the user's code passes): none is a draft model's weights and KV
        ("Lookahead", SpecKind.NGRAM, "Lookahead decoding buffers, no draft model (Lookahead)"),
        ("SA", SpecKind.NGRAM, "suffix-automaton drafting state, no draft model (SA)"),
        ("User_Provided", SpecKind.DRAFT_MODEL, "the user-provided drafter's memory (User_Provided)"),
        ("Eagle3", SpecKind.DRAFT_MODEL, "draft weights and KV (Eagle3)"),
    ],
)
def test_trtllm_words_each_drafters_not_modelled_term_as_what_it_is(method: str, kind: SpecKind, label: str) -> None:
    import json

    from kvtop.domain.deployment import TermState
    from kvtop.domain.launch import parse_flags
    from kvtop.domain.ledger import predict
    from kvtop.domain.model_config import model_from_config
    from tests.conftest import CONFIGS

    assert _setup("trtllm", {"speculative_config.decoding_type": method}).spec_kind is kind
    name = "meta-llama--Llama-3.1-8B-Instruct.json"
    model = model_from_config(json.loads((CONFIGS / name).read_text()), source=name)
    settings = parse_flags("trtllm", [f"--speculative_config.decoding_type={method}"], strict=True)
    ledger = predict(model, settings, gpu_total_bytes=80 << 30, gpu_name="H100")
    found = [t for t in ledger.terms if t.label.endswith(f"({method})")]
    assert [t.label for t in found] == [label] and found[0].state is TermState.NOT_MODELLED
