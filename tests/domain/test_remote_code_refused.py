"""A class an engine release does not register is refused by `kvtop plan`, not planned, where the checkpoint's remote
code does not rescue it (issue 26): MiniCPM-SALA on vLLM 0.33.0, planned on SGLang 0.5.23, which registers it.

The engines' words are their own: vLLM 0.33.0 registry.py `_raise_for_unsupported` ("Model architectures [...] are
not supported for now."), reached where `_try_resolve_transformers` (model_impl auto) gets no class from the auto_map:
the published modeling_minicpm_sala.py imports `is_torch_fx_available` from transformers.utils.import_utils, which
transformers 5.20.2 (the 0.33.0 wheel's) does not define, so try_get_class_from_dynamic_module returns None.
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from kvtop.domain.engine_architectures import ArchitectureCheck
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model_config import model_from_config
from tests.conftest import CONFIGS
from tests.data_paths import DATA

SALA = CONFIGS / "recon" / "recon--openbmb--MiniCPM-SALA.json"
REGISTRIES = json.loads((DATA / "architectures" / "engine_registries.json").read_text())


def _check(engine: str, release: str) -> ArchitectureCheck:
    model = model_from_config(json.loads(SALA.read_text()), source=str(SALA))
    version = ResolvedVersion(text=release, source=VersionSource.FLAG)
    return engine_rules(engine).architectures.check(model, LaunchSettings(engine=engine, model="m"), version)


def test_vllm_0_33_0_refuses_minicpm_sala_whose_remote_code_it_cannot_import() -> None:
    check = _check("vllm", "0.33.0")
    assert check.refused
    assert check.engine_words == "Model architectures ['MiniCPMSALAForCausalLM'] are not supported for now."
    assert "is_torch_fx_available" in check.message and "vLLM 0.33.0" in check.message
    # 0.13.0's transformers (4.57.6) still defines it: the class's backend flag was not read, so not checked
    assert _check("vllm", "0.13.0").state == "custom_code"
    assert _check("sglang", "0.5.23").state == "registered"  # srt/models/minicpm.py EntryClass


def test_plan_refuses_it_on_vllm_and_plans_it_on_sglang(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--model", str(SALA), "--engine", "vllm"]) == 2
    err = capsys.readouterr().err
    assert "vLLM 0.34.0" in err and "has no model class for MiniCPMSALAForCausalLM" in err
    assert main(["plan", "--model", str(SALA), "--engine", "sglang", "--json"]) == 0
    # 8 InfLLM-v2 (full) layers × 2 × 2 KV heads × 128 × 2 B = 8,192 B a token (sglang-0.5.23.json cell_size 8192)
    assert json.loads(capsys.readouterr().out)["kv_bytes_per_token"] == 8192


@pytest.mark.parametrize(("engine", "keys"), [("vllm", ("vllm_text_generation", "vllm_multimodal")),
                                              ("sglang", ("sglang",))])  # fmt: skip
def test_the_harness_lists_and_kvtops_tables_agree(engine: str, keys: tuple[str, ...]) -> None:
    """One truth: every class the wheels' registries list (engine_registries.json, read by
    benchmarks/engine_registries/read_registries.py) is registered in the engine package's range of the release the
    harness read (its `source`: vLLM 0.33.0, SGLang 0.5.23; vLLM 0.34.0 dropped Keye, so not the newest range)."""
    read = REGISTRIES["source"][engine].split()[1]  # 'vLLM 0.33.0 wheel (PyPI), …' → '0.33.0'
    found = engine_rules(engine).architectures.TABLE.range_for(ResolvedVersion(text=read))
    assert found is not None
    listed = set().union(*(REGISTRIES[key] for key in keys))
    assert listed - found.registered == set()
