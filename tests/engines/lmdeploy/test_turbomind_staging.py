"""What torch's cache keeps of TurboMind's conversion of a Hugging Face checkpoint, v0.6.2 – v0.8.x
(docs/engines/lmdeploy.md §15.1).

Expected values are LMDeploy's converter done by hand (read at main 3f414b595, the build of case 3411, and at v0.6.2,
v0.7.0, v0.7.3, v0.8.0): for one layer's MLP the reader puts w1, w2 and w3 whole on the first GPU
(`policy.to_cuda`), `module.py Ffn._export` clones each by its zero pad (`pad_out_dims`/`pad_in_dims`; torch's
`constant_pad_nd` returns `clone()` when no pad is positive) and `export_weight` makes one rank slice contiguous
(`.cuda().contiguous()` of a transposed view) while all six are live. The LM head's slice needs a segment of its own
only where it is larger than an MLP matrix; a smaller one is carved from the layers' freed segments.
"""

from __future__ import annotations

from kvtop.domain.engines.lmdeploy.budget_turbomind import layer_staging_bytes, staging_leftover_bytes
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.launch import LaunchSettings
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS

INTERNVL25_8B = CONFIGS.parent / "calibration" / "configs" / "OpenGVLab--InternVL2_5-8B-MPO.RECONSTRUCTED.json"
QWEN25_72B = CONFIGS / "Qwen--Qwen2.5-72B.json"


def _staging(config: object, version: str, tp: int) -> tuple[int, int]:
    model = load_model(str(config))
    resolved = ResolvedVersion(text=version)
    return layer_staging_bytes(model, LaunchSettings(engine="lmdeploy"), resolved, tp), staging_leftover_bytes(
        model, LaunchSettings(engine="lmdeploy"), resolved, tp
    )


def test_case_3411_one_mlp_staged_whole_and_cloned() -> None:
    """InternLM2.5-7B's MLP (intermediate 14,336, hidden 4,096, bf16): a matrix is 117,440,512 B (112 MiB); 3 read
    whole + 3 clones + 1 slice at TP 1 = 822,083,584 B (784 MiB). The attention: wqkv (32 + 2 × 8 heads × 128 =
    6,144 rows) and wo (4,096) of 4,096 columns, read whole and copied once: 2 × 10,240 × 4,096 × 2 = 167,772,160 B."""
    assert _staging(INTERNVL25_8B, "0.7.2.post1", 1) == (822_083_584, 167_772_160)


def test_the_mlp_is_read_whole_whatever_the_tp() -> None:
    """Qwen2.5-72B (intermediate 29,568, hidden 8,192, bf16) at TP 8: 6 × 29,568 + 3,696 rows (one rank's slice)
    = 181,104 × 8,192 × 2 = 2,967,207,936 B on the first GPU; the attention 2 × (64 + 8 + 8 + 64) × 128 × 8,192 × 2
    = 603,979,776 B."""
    assert _staging(QWEN25_72B, "0.8.0", 8) == (2_967_207_936, 603_979_776)


def test_nothing_before_v0_6_2_or_from_v0_9() -> None:
    assert _staging(INTERNVL25_8B, "0.6.1", 1) == (0, 0)
    assert _staging(INTERNVL25_8B, "0.9.0", 1) == (0, 0)


def test_an_moe_models_layer_staging_is_not_modelled() -> None:
    """Qwen3-30B-A3B's layers are all MoE (128 experts of 768 rows; its config's intermediate_size 6,144 is no layer's):
    the dense reader's `Ffn._export` charge does not describe them, so nothing is charged for the layers. The export
    charge is then the LM head's slice alone, 2 copies at v0.8.0: 2 × 151,936 × 2,048 × 2 B = 1,244,659,712 B (it was
    that + 7 × 6,144 × 2,048 × 2 = 176,160,768 B of a dense MLP no layer has)."""
    from kvtop.domain.launch import parse_flags
    from kvtop.domain.ledger import predict

    model = load_model(str(CONFIGS / "Qwen--Qwen3-30B-A3B.json"))
    assert _staging(CONFIGS / "Qwen--Qwen3-30B-A3B.json", "0.8.0", 1)[0] == 0
    settings = parse_flags("lmdeploy", ["--backend", "turbomind", "--engine-version", "0.8.0"])
    ledger = predict(model, settings, gpu_total_bytes=80 << 30, gpu_name="A100-80GB")
    step = next(step for step in ledger.engine.steps if "staging" in step.label)
    assert step.bytes == -2 * 151_936 * 2_048 * 2 == -1_244_659_712
    assert "an MoE model's layer staging (its experts' shapes, not read): not modelled" in step.note
