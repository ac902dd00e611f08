"""SGLang classes that build what the family's own class (transformers') does not, or less (weights_classes.py).

Expected figures: the registry sweep's meta build of transformers' default config by SGLang 0.5.23
(tests/data/engine_diff/registry/sglang-0.5.23.json; `registry_sweep.py --engine sglang --params <config>` for the
shapes), quoted in each test. Never kvtop's own figures.
"""

from __future__ import annotations

import json

from benchmarks.engine_diff.registry_judge import kvtop_answer
from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.data_paths import DATA

HUNYUAN = "default--HunYuanDenseV1ForCausalLM"
AT_0_5_23 = ResolvedVersion(text="0.5.23", source=VersionSource.FLAG)


def test_hunyuan_without_use_qk_norm_builds_no_qk_norms() -> None:
    """transformers' HunYuanDenseV1Config states no use_qk_norm; SGLang 0.5.23's hunyuan.py builds
    query_layernorm / key_layernorm only on it: the meta build lists embed_tokens and lm_head [290944, 4096],
    qkv_proj [12288, 4096], o_proj [4096, 4096], gate_up_proj [22016, 4096], down_proj [4096, 11008], two norms
    [4096] on each of 32 layers and model.norm, bfloat16: 17,719,369,728 B at TP 1, no q/k norm."""
    layer = 12288 * 4096 + 4096 * 4096 + 22016 * 4096 + 4096 * 11008 + 2 * 4096
    assert (2 * 290944 * 4096 + 32 * layer + 4096) * 2 == 17_719_369_728
    for tp in (1, 2):
        row = row_of("sglang", "0.5.23", HUNYUAN, tp)
        plan = kvtop_answer("sglang", "0.5.23", row)
        assert plan["stages"][0]["weights_bytes"] == sum(row["stages"][0]["param_bytes"].values())


def test_hunyuan_stating_use_qk_norm_keeps_them() -> None:
    """With use_qk_norm true (tencent's checkpoints state it) hunyuan.py builds RMSNorm(head_dim) twice a layer:
    32 × 2 × 128 × 2 B = 16,384 B more than without."""
    config = json.loads(
        (DATA / "engine_diff" / "registry" / "configs" / "HunYuanDenseV1ForCausalLM.json").read_text()
    )
    rules = engine_rules("sglang")

    def weighs(cfg: dict[str, object]) -> int:
        model = model_from_config(cfg, source=HUNYUAN)
        parts = rules.stage_parts(model, 0, 1, AT_0_5_23)
        return weights_book(model, ParallelLayout(), range(32), first_stage=True, last_stage=True,
                            parts=parts).total_bytes  # fmt: skip

    assert weighs({**config, "use_qk_norm": True}) - weighs(config) == 32 * 2 * 128 * 2
