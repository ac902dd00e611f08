"""How TurboMind splits the MLP beside the routed experts under `--ep` (`EngineRules.mlp_split`; docs/engines/lmdeploy.md
§16.1). Read in the PyPI wheels 0.14.0, 0.15.0, 0.16.0, 0.17.0 and 0.18.0.

* Before 0.15.0 TurboMind does not read `--ep`: cli/serve.py (0.14.0:231) passes `ep=args.ep` to
  `PytorchEngineConfig` only, `TurbomindEngineConfig` has no `ep`. Every part splits over TP.
* From 0.15.0 `TurbomindEngineConfig.ep` (messages.py:307; cli/serve.py:279 passes it) goes to
  `derive_parallel_config` (turbomind/parallel_config.py, the same file in 0.15.0–0.18.0): the devices are
  `dp × attn_tp × cp == outer_dp × ep × mlp_tp`, `attn_tp` or `mlp_tp` equal to tp, both dividing it, the smallest
  `outer_dp` first. So at dp 1 `mlp_tp = tp ÷ ep` (1 at ep == tp), and at ep == tp × dp one engine of tp × dp ranks
  with `mlp_tp` 1. Each rank holds ep's share of the routed experts (builders/moe.py `MoeBuilder.range`), each
  expert split over `mlp_tp` — the book's split over max(tp, ep) — while every `FfnBuilder` of a model class takes
  `tp=self._mlp_tp` in 0.15.0–0.17.0: the shared experts and every dense FFN layer (a dense model's too) split over
  `mlp_tp`, whole on every rank at ep == tp (models/qwen2.py, qwen3.py, glm4_moe_lite.py, llama.py, internlm2.py).
* 0.18.0 adds `dense_tp` (turbomind/model_loader.py:53-60: `min(mlp_tp × ep, gpu_count)`, one node's ranks) for
  the dense FFN layers of a MoE model in two classes (models/qwen3.py:124-143 keyed on any MoE layer,
  models/glm4_moe_lite.py:144-148); the shared experts, a dense model's FFN and other classes keep `mlp_tp`.
"""

from __future__ import annotations

from math import gcd

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.errors import LayoutError
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.layout import MlpSplit
from kvtop.domain.model import ModelSpec

# Whether TurboMind reads --ep
TURBOMIND_EP_ERAS: Eras[bool] = Eras((
    Era("", False, "cli/serve.py 0.14.0:231 passes ep=args.ep to PytorchEngineConfig only (TurbomindEngineConfig has no ep)"),
    Era("0.15.0", True, "cli/serve.py 0.15.0:279 TurbomindEngineConfig(ep=args.ep); turbomind.py:91 "
        "derive_parallel_config(dp, tp, ep, cp) (turbomind/parallel_config.py, alike through 0.18.0)"),
))  # fmt: skip

# The classes whose dense FFN layers (in a model with MoE layers) split over `dense_tp` = min(mlp_tp × ep, the node's
# GPUs) rather than `mlp_tp`; the class names as the config's `architectures` lists them
DENSE_TP_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset(), "models/*.py 0.15.0–0.17.0: every FfnBuilder(tp=self._mlp_tp)"),
    Era("0.18.0", frozenset({"Qwen3MoeForCausalLM", "Glm4MoeLiteForCausalLM"}),
        "turbomind/model_loader.py:53-60 dense_tp; models/qwen3.py:124-143, models/glm4_moe_lite.py:144-148"),
))  # fmt: skip


def mlp_tp_and_devices(dp: int, tp: int, ep: int, cp: int) -> tuple[int, int] | None:
    """TurboMind's `mlp_tp` and device count for the launch's sizes, every device it asks for present: the first
    layout `derive_parallel_config` accepts, scanning the devices down from dp × tp × gcd(cp, ep) and `outer_dp`
    up over dp's divisors (turbomind/parallel_config.py `_try_layout`); None where none is valid (it asserts)."""
    total = dp * tp * gcd(cp, ep)
    for devices in (d for d in range(total, 0, -1) if total % d == 0):
        if devices % (dp * cp):
            continue
        attn_tp = devices // (dp * cp)
        if tp % attn_tp:
            continue
        for outer_dp in (x for x in range(1, dp + 1) if dp % x == 0):
            if devices % (outer_dp * ep):
                continue
            mlp_tp = devices // (outer_dp * ep)
            if tp % mlp_tp or (attn_tp != tp and mlp_tp != tp):
                continue
            return mlp_tp, devices
    return None


def turbomind_mlp_split(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> MlpSplit:
    """The dense FFN's and the shared experts' shards on TurboMind at this release and `--ep` (the module's
    docstring); `MlpSplit()` where TurboMind does not read --ep or the split is TP's. LayoutError where TurboMind
    refuses the sizes, or lays them over devices kvtop's layout does not count (cp with ep)."""
    ep = settings.ep
    era = TURBOMIND_EP_ERAS.era(version)
    if ep <= 1 or not era.value:
        return MlpSplit()
    found = mlp_tp_and_devices(settings.dp, settings.tp, ep, settings.dcp)
    if found is None:
        raise LayoutError(f"TurboMind finds no parallel layout for dp {settings.dp}, tp {settings.tp}, ep {ep}, "
                          f"cp {settings.dcp} (turbomind/parallel_config.py derive_parallel_config asserts)", field="--ep")  # fmt: skip
    mlp_tp, devices = found
    if devices != settings.dp * settings.tp:
        raise LayoutError(f"not modelled: TurboMind lays dp {settings.dp} × tp {settings.tp} with ep {ep} and cp "
                          f"{settings.dcp} over {devices} GPUs (turbomind/parallel_config.py)", field="--ep")  # fmt: skip
    if model.moe is not None and ep * mlp_tp != max(settings.tp, ep):  # each rank: E ÷ ep experts, each over mlp_tp
        raise LayoutError(f"not modelled: TurboMind splits the routed experts over ep {ep} × mlp_tp {mlp_tp} at dp "
                          f"{settings.dp}, tp {settings.tp}; kvtop's book over max(tp, ep) (turbomind/parallel_config.py)",
                          field="--ep")  # fmt: skip
    dense_era = DENSE_TP_ERAS.era(version)
    # one node's ranks: ep > 1 is single-node (turbomind.py asserts nnodes == 1)
    dense_tp = min(mlp_tp * ep, devices)
    wide = model.moe is not None and model.architecture in dense_era.value
    dense = dense_tp if wide else mlp_tp
    if dense == settings.tp and mlp_tp == settings.tp:
        return MlpSplit()
    said = f"; a MoE model's dense FFN over dense_tp = {dense_tp} ({dense_era.source})" if wide else ""
    note = (f"TurboMind {version.label} under EP{ep}: the MLP's TP mlp_tp = {mlp_tp} for shared experts and dense "
            f"FFN (turbomind/parallel_config.py from 0.15.0){said}")  # fmt: skip
    return MlpSplit(dense_shards=None if dense == settings.tp else dense,
                    shared_expert_shards=None if mlp_tp == settings.tp else mlp_tp, note=note)  # fmt: skip
