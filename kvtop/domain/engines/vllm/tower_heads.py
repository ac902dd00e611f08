"""Tower attention vLLM cannot split over this TP (docs/engines/vllm.md §3.6): a tower whose attention divides its
head counts by TP with `dist_utils.divide` (`TowerSpec.divided_heads`) asserts "{heads} is not divisible by {tp}"
while the model is built. `--mm-encoder-tp-mode data` does not help: the one such tower's class (MiMo-V2.5's) has no
`supports_encoder_tp_data`, so vLLM's ModelConfig turns the flag back to "weights" (config/model.py; the classes that
take it: architectures.DATA_PARALLEL_ENCODER).

v0.33.0 models/mimo_v2_omni.py MiMoVisionAttention.__init__: `divide(num_heads, tp_size)` and
`divide(num_kv_heads, tp_size)`, tp_size 1 only where is_vit_use_data_parallel() (asked without the head count,
so only the flag: no fallback) — MiMo-V2.5's 32 heads and 8 KV heads: TP 16 asserts "8 is not divisible by 16".
v0.13.0 has no mimo_v2_omni.py (no tower states divided heads there).
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.errors import InputError
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec

DIVIDED_HEADS_CHECKED_ERAS: Eras[bool] = Eras((
    Era("", False, "no tower built with divided heads (no models/mimo_v2_omni.py through v0.20.2)"),
    Era("0.21.0", True, "first in v0.21.0: models/mimo_v2_omni.py:156-157 MiMoVisionAttention.__init__ "
                        "(distributed/utils.py divide), the same at v0.33.0 :173-174"),
))  # fmt: skip


def check_tower_heads(model: ModelSpec, layout: ParallelLayout, version: ResolvedVersion) -> None:
    """Raise InputError where the tower's attention cannot divide its heads over TP (module docstring)."""
    tower, tp = model.tower, layout.tp
    if tower is None or tp == 1 or not DIVIDED_HEADS_CHECKED_ERAS.at(version):
        return
    broken = next((heads for heads in tower.divided_heads if heads % tp), None)
    if broken is not None:
        raise InputError(
            f"vLLM {version.label} cannot split {model.architecture}'s {tower.config_class} attention over tp {tp}: it "
            f"divides the tower's heads {'/'.join(map(str, tower.divided_heads))} by TP and asserts '{broken} is not "
            f"divisible by {tp}'; use a TP that divides them (--mm-encoder-tp-mode data does not apply: "
            "vLLM takes it only for classes with supports_encoder_tp_data)",
            field="--tp",
        )
