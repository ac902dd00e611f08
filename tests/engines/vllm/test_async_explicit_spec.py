"""An explicit --async-scheduling beside --speculative-config, by release (batching_async.EXPLICIT_SPEC_ERAS). Expected
values are the `if self.scheduler_config.async_scheduling:` branch of each wheel's config/vllm.py: EagleModelTypes only
at v0.11.1-v0.15.1 (:380-393 at v0.11.1, :571-581 at v0.14.0), + draft_model from v0.16.0 (:622-635), + ngram_gpu from
v0.18.0 (:696-711), + dspark from v0.25.0 (:971-987), + dflash in the words at v0.31.0 (:1554-1571; DFlashModelTypes
is EagleModelTypes, config/speculative.py:55-58 at v0.22.0), the V1 model runner's alone at v0.33.0 (:1651-1666,
:1676-1680), no check at v0.34.0 (:1598-1609)."""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.batching_async import async_scheduling
from kvtop.domain.errors import InputError
from kvtop.domain.launch import parse_flags
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from tests.data_paths import CONFIGS

LLAMA8B = model_from_config(json.loads((CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json").read_text()),
                            source="meta-llama--Llama-3.1-8B-Instruct.json")  # fmt: skip
DRAFT = "meta-llama/Llama-3.2-1B"


def explicit(method: str, version: str, *flags: str, llm: ModelSpec = LLAMA8B, **more: object) -> bool:
    """`vllm serve <llm> --async-scheduling --speculative-config {method, …more} <flags>`; a draft_model gets a draft."""
    spec = {"method": method, "num_speculative_tokens": 2, **({"model": DRAFT} if method == "draft_model" else {}),
            **more}
    settings = parse_flags("vllm", ["--async-scheduling", "--speculative-config", json.dumps(spec), *flags],
                           strict=True)  # fmt: skip
    return async_scheduling(settings, ResolvedVersion(text=version), llm)[0]


@pytest.mark.parametrize(("method", "version", "taken"), [
    ("eagle3", "0.11.1", True),
    ("deepseek_mtp", "0.13.0", True),  # MTPModelTypes are EagleModelTypes
    ("ngram", "0.11.1", False),
    ("draft_model", "0.15.1", False),
    ("draft_model", "0.16.0", True),  # :624-625 `!= "draft_model"`; the default keeps it only from v0.28.0
    ("draft_model", "0.27.1", True),
    ("ngram_gpu", "0.17.1", False),
    ("ngram_gpu", "0.18.0", True),  # :699 NgramGPUTypes
    ("ngram_gpu", "0.20.0", True),
    ("dspark", "0.24.0", False),
    ("dspark", "0.25.0", True),  # :975 `!= "dspark"`
    ("dspark", "0.26.0", True),
    ("dflash", "0.22.0", True),  # EagleModelTypes (DFlashModelTypes) before the v0.31.0 words name it
    ("ngram", "0.32.0", False),
    ("suffix", "0.30.0", False),
])  # fmt: skip
def test_the_methods_an_explicit_async_scheduling_takes_by_release(method: str, version: str, taken: bool) -> None:
    if taken:
        assert explicit(method, version) is True
        return
    with pytest.raises(InputError, match=f"refuses --async-scheduling with --speculative-config method {method}"):
        explicit(method, version)


@pytest.mark.parametrize(("version", "words"), [
    ("0.11.1", "'Currently, async scheduling is only supported with EAGLE/MTP kind of speculative decoding'"),
    ("0.14.0", "'Currently, async scheduling is only supported with EAGLE/MTP kind of speculative decoding.'"),
    ("0.16.0", "'Currently, async scheduling is only supported with EAGLE/MTP/Draft Model kind of speculative "
               "decoding.'"),
    ("0.18.0", "'Currently, async scheduling is only supported with EAGLE/MTP/Draft Model/NGram GPU kind of "
               "speculative decoding'"),
    ("0.25.0", "'Currently, async scheduling is only supported with EAGLE/MTP/Draft Model/NGram GPU/DSpark kind of "
               "speculative decoding'"),
    ("0.31.0", "'Currently, async scheduling is only supported with EAGLE/MTP/Draft Model/NGram GPU/DSpark/DFlash "
               "kind of speculative decoding'"),
])  # fmt: skip
def test_the_refusal_is_in_vllms_words(version: str, words: str) -> None:
    """The ValueError's string literals, joined as Python joins them, in each era's first wheel."""
    with pytest.raises(InputError) as err:
        explicit("ngram", version)
    assert words in str(err.value)


@pytest.mark.parametrize(("version", "words"), [
    ("0.11.2", "'async scheduling for EAGLE/MTP kind of speculative decoding is enabled, but "
               "disable_padded_drafter_batch=True disable_padded_drafter_batch=True is not supported for this "
               "situation now. please set disable_padded_drafter_batch=Fasle'"),  # :386-393, its typo kept
    ("0.14.0", "'Async scheduling is not compatible with disable_padded_drafter_batch=True.'"),  # :577-581
    ("0.32.0", "'Async scheduling is not compatible with disable_padded_drafter_batch=True.'"),  # :1576-1580
])  # fmt: skip
def test_disable_padded_drafter_batch_is_refused_with_an_eagle_method(version: str, words: str) -> None:
    with pytest.raises(InputError) as err:
        explicit("eagle3", version, disable_padded_drafter_batch=True)
    assert words in str(err.value)


def test_v0330_refuses_under_the_v1_model_runner_alone_before_its_pp_check() -> None:
    """v0.33.0's v1_async_sched_incompat (:1651-1666) names the method first, then disable_padded_drafter_batch, then
    PP; a launch on the V2 model runner (runner_eras.runs_v2) is taken. suffix keeps the V1 runner (spec_methods
    .keeps_v1_runner, v0.33.0 :3066-3068) so vLLM refuses it, in the words of :1677-1680, at PP 2 as at PP 1; ngram
    runs V2 from v0.32.0 and is taken, where v0.32.0's explicit branch refused it under either runner."""
    for pp in ("1", "2"):
        with pytest.raises(InputError, match="'Async scheduling is not supported by the V1 model runner with "
                                             "suffix-based speculative decoding.'"):
            explicit("suffix", "0.33.0", "--pp", pp)
    assert explicit("ngram", "0.33.0") is True
    assert explicit("eagle3", "0.33.0", disable_padded_drafter_batch=True) is True


def test_v0340_has_no_speculative_check() -> None:
    """v0.34.0's explicit branch checks ROCm DeepEP DBO and the executor alone (config/vllm.py:1598-1609)."""
    assert explicit("ngram", "0.34.0") is True
    assert explicit("eagle3", "0.34.0", disable_padded_drafter_batch=True) is True


def test_kvtop_plan_refuses_it_for_a_model_without_windows(capsys: pytest.CaptureFixture[str]) -> None:
    """Llama-3.1-8B has no windowed layer, so its budget never reads the batches in flight: the plan still refuses
    what vLLM 0.20.0 refuses (budget.py refuse_explicit_async), and plans the same launch at v0.33.0 (V2 runner)."""
    config = str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")
    args = ["plan", "--model", config, "--engine", "vllm", "--gpu", "H100", "--async-scheduling",
            "--speculative-config", '{"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4}']
    assert main([*args, "--engine-version", "0.20.0"]) != 0
    assert "NGram GPU kind of speculative decoding'" in capsys.readouterr().err
    assert main([*args, "--engine-version", "0.33.0"]) == 0


def test_dflash_keeps_the_default_on_before_v0310_too() -> None:
    """The default path tests `method not in get_args(EagleModelTypes)` (config/vllm.py:976-979 at v0.24.0), and
    EagleModelTypes holds DFlashModelTypes (config/speculative.py:55-58 at v0.22.0): dflash keeps async scheduling on
    at v0.24.0, not only from v0.31.0, where the words first name it; suffix turns it off."""
    def default(method: str) -> bool:
        flags = ["--speculative-config", json.dumps({"method": method, "num_speculative_tokens": 2})]
        return async_scheduling(parse_flags("vllm", flags, strict=True), ResolvedVersion(text="0.24.0"), LLAMA8B)[0]

    assert default("dflash") is True
    assert default("suffix") is False
