"""SGLang's `--enable-multimodal` read as the switch it is (engines/sglang/multimodal.py, `launch_tokens.switch_in`).

Expected values from SGLang's code, not from kvtop: the flag is argparse's store_true in every release read
(server_args.py :757 at 0.4.9, :4589 at 0.5.13; from 0.5.14 an Optional[bool] field arg_groups/arg_utils.py makes
store_true, :393-395 at 0.5.23), so `Engine(enable_multimodal=False)` leaves it unset as if not given. 0.5.23's
models/mllama4.py builds Llama-4's tower only where `has_vision = has_vision_weights and enable_multimodal`, and
configs/model_config.py serves Gemma-3 text-only (`mm_disabled_models`) unless the flag is set.
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.engines.sglang.multimodal import is_multimodal
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.launch import parse_flags
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.served_model import tower_unbuilt
from tests.data_paths import CONFIGS

V0523 = ResolvedVersion(text="0.5.23")


def _model(name: str) -> ModelSpec:
    return model_from_config(json.loads((CONFIGS / name).read_text()), source=name)


@pytest.mark.parametrize(("flags", "unbuilt"), [([], True), (["--enable-multimodal"], False),
                                                (["--enable-multimodal", "true"], False),
                                                (["--enable-multimodal", "false"], True),
                                                (["--enable-multimodal", "0"], True)])  # fmt: skip
def test_llama4_builds_its_tower_only_with_the_flag_set(flags: list[str], unbuilt: bool) -> None:
    model = _model("meta-llama--Llama-4-Scout-17B-16E-Instruct.json")
    settings = parse_flags("sglang", [*flags, "--engine-version", "0.5.23"])
    assert tower_unbuilt(model, settings, V0523) is unbuilt


@pytest.mark.parametrize(("flags", "multimodal"), [([], False), (["--enable-multimodal"], True),
                                                   (["--enable-multimodal", "false"], False)])  # fmt: skip
def test_gemma3_is_served_multimodal_only_with_the_flag_set(flags: list[str], multimodal: bool) -> None:
    model = _model("google--gemma-3-27b-it.json")
    settings = parse_flags("sglang", [*flags, "--engine-version", "0.5.23"])
    assert is_multimodal(model, settings, V0523) is multimodal
