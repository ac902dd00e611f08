"""XVERSE-MoE-A4.2B under the class its checkpoint names (XverseForCausalLM, model_type xverse), which both engines
build dense, so its experts cannot load: refused by name, never a dense number for a MoE checkpoint.

Fields: tests/data/configs/recon/recon--xverse--XVERSE-MoE-A4.2B-class.json (the checkpoint's values; SOURCES.md
there: the checkpoint's own config names XverseForCausalLM, so the test names it back). Engine code read by hand:
SGLang 0.5.23 srt/models/xverse.py XverseDecoderLayer builds one XverseMLP whatever num_experts, and
XverseForCausalLM.load_weights does `params_dict[name]` for mlp.experts.N.* / mlp.router (KeyError). vLLM 0.13.0's
registry maps XverseForCausalLM to models/llama.py LlamaForCausalLM (a dense LlamaMLP; LlamaModel.load_weights:
`params_dict[name]`, KeyError); vLLM 0.33.0 no longer registers it (last in 0.23.0)."""

from __future__ import annotations

import json
from pathlib import Path

from kvtop.domain.launch import parse_flags
from kvtop.domain.launch_check import launch_refusals
from kvtop.domain.ledger import predict
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS

H100 = 81_559 << 20
RECON = CONFIGS / "recon" / "recon--xverse--XVERSE-MoE-A4.2B-class.json"


def _config(tmp_path: Path, *, experts: bool) -> str:
    """The checkpoint's fields under its own class; without the expert fields: a dense XVERSE."""
    blocks = json.loads(RECON.read_text()) | {"architectures": ["XverseForCausalLM"]}
    if not experts:
        for field in ("num_experts", "moe_top_k", "num_shared_experts"):
            del blocks[field]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(blocks))
    return str(path)


def _refusals(path: str, engine: str, version: str | None = None) -> tuple[str, ...]:
    settings = parse_flags(engine, [])  # type: ignore[arg-type]
    if version is not None:
        settings = settings.model_copy(update={"engine_version": version})
    ledger = predict(load_model(path), settings, gpu_total_bytes=H100, gpu_name="H100")
    return tuple(f"{r.field}: {r.message} [{r.source}]" for r in launch_refusals(ledger))


def test_the_checkpoints_experts_are_read_under_its_dense_class(tmp_path: Path) -> None:
    model = load_model(_config(tmp_path, experts=True))
    assert model.architecture == "XverseForCausalLM" and model.moe is not None
    # num_experts 64, moe_top_k 6, 2 shared experts of intermediate_size 1,728 each: 3,456 wide together
    assert (model.moe.num_routed_experts, model.moe.experts_per_token) == (64, 6)
    assert (model.moe.expert_intermediate_size, model.moe.shared_intermediate_size) == (1_728, 2 * 1_728)
    assert load_model(_config(tmp_path, experts=False)).moe is None  # a dense XVERSE stays Llama's reading


def test_sglang_refuses_the_experts_it_builds_dense(tmp_path: Path) -> None:
    (refused,) = _refusals(_config(tmp_path, experts=True), "sglang", "0.5.23")
    assert refused.startswith("num_experts: SGLang 0.5.23 builds XverseForCausalLM dense whatever num_experts says")
    assert "(64 here)" in refused and "srt/models/xverse.py" in refused
    assert _refusals(_config(tmp_path, experts=False), "sglang", "0.5.23") == ()


def test_vllm_0_13_builds_it_as_a_dense_llama(tmp_path: Path) -> None:
    (refused,) = _refusals(_config(tmp_path, experts=True), "vllm", "0.13.0")
    assert refused.startswith("num_experts: vLLM 0.13.0 builds XverseForCausalLM dense whatever num_experts says")
    assert "(64 here)" in refused and "models/llama.py" in refused
    assert _refusals(_config(tmp_path, experts=False), "vllm", "0.13.0") == ()


def test_vllm_0_33_no_longer_has_the_class(tmp_path: Path) -> None:
    from kvtop.domain.engines.vllm.architectures import check

    settings = parse_flags("vllm", []).model_copy(update={"engine_version": "0.33.0"})
    ledger = predict(
        load_model(_config(tmp_path, experts=True)), settings, gpu_total_bytes=H100, gpu_name="H100"
    )
    verdict = check(ledger.model, ledger.settings, ledger.version)
    assert verdict.state != "registered" and "supported in vLLM until v0.23.0" in verdict.message
    # the class refusal alone: no dense-build claim about a class it lacks
    (refused,) = launch_refusals(ledger)
    assert refused.field == "--model" and "has no model class for XverseForCausalLM" in refused.message
