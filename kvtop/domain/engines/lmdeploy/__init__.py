"""LMDeploy's rules: flags, KV storage, TurboMind's and the PyTorch engine's block budgets.

`cache_max_entry_count` is a share of the memory left *after* the weights (before v0.2.2, TurboMind's
was a share of total memory; a value ≥ 1 is a block count), and the free memory is the least over
the TP ranks, so every rank gets the same block count (docs/engines/lmdeploy.md §1, §6).
"""

from __future__ import annotations

from collections.abc import Mapping

from kvtop.domain.engine_log import EngineLog
from kvtop.domain.engines.base import EngineResult
from kvtop.domain.engines.lmdeploy.budget import LmdeployBudget
from kvtop.domain.engines.lmdeploy.dsa import dsa_storage
from kvtop.domain.engines.lmdeploy.eras import (
    CALENDAR,
    TURBOMIND_MLA_SHARED_SINCE,
    TURBOMIND_ONLINE_KV_QUANT_SINCE,
    resolve_version,
    since,
    turbomind_block_len,
)
from kvtop.domain.engines.lmdeploy.flags import OFFLINE_QUANT_POLICIES, QUANT_POLICIES, LmdeployFlags
from kvtop.domain.engines.lmdeploy.memory import resolve_backend
from kvtop.domain.engines.measured_reads import MeasuredField
from kvtop.domain.engines.modules import EngineBase
from kvtop.domain.engines.protocols import EngineRules
from kvtop.domain.engines.versions import PEP440_NAMES, ReleaseNames, ResolvedVersion
from kvtop.domain.errors import InputError, KvtopError, LayoutError
from kvtop.domain.kv import KvStorage
from kvtop.domain.launch import EngineFlags, LaunchSettings
from kvtop.domain.layout import MlpSplit, VocabSplit
from kvtop.domain.model import ModelSpec

_NAMES = tuple(QUANT_POLICIES.items())
# §2.1: int8/int4 with an fp16/bf16 scale and zero per token-head per K/V; the MLA latent stored once (v0.12.2+)
TURBOMIND_STORAGE = KvStorage(format_names=_NAMES, int_kv_scale_zero=True)
TURBOMIND_STORAGE_MLA_TWICE = TURBOMIND_STORAGE.model_copy(update={"mla_latent_as_k_and_v": True})
# before v0.4.0: `--quant-policy 4` was offline int8 KV with per-layer scales (no per-token parameters)
TURBOMIND_STORAGE_OFFLINE_INT8 = KvStorage(format_names=tuple(OFFLINE_QUANT_POLICIES.items()))
# §4.1: the same int formats; FP8 on a DSA model is the 656 B fp8_ds_mla latent ("--quant-policy" help)
PYTORCH_STORAGE = KvStorage(format_names=_NAMES, int_kv_scale_zero=True, ds_mla_on_fp8_dsa=True)


def _backend(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> str | None:
    """The backend the model resolves to (memory.resolve_backend); None where it refuses the launch (the budget
    says why)."""
    try:
        return resolve_backend(model, settings, version)[0]
    except KvtopError:
        return None


class LmdeployRules(LmdeployBudget, EngineBase):
    id = "lmdeploy"
    display_name = "LMDeploy"
    kv_storage = TURBOMIND_STORAGE
    # no pipeline parallelism (one stage); §6: free memory MIN-reduced over the TP group
    # §2.2/§4.2: its budget's free memory is cudaMemGetInfo's, which leaves out the driver's reserved
    # bytes; the ledger's context is the GPU's total less that free memory, so it holds them
    context_holds_driver_reserved = True
    calendar = CALENDAR  # the releases kvtop models
    memory_fraction_field = "cache_max_entry_count"
    memory_fraction_flag = "--cache-max-entry-count"
    memory_fraction_of = (  # what the share is of
        "the memory free after the weights (the PyTorch engine: less its runtime reserve); all of it is KV"
    )
    # LMDeploy gives its processes no title of its own (TurboMind drives every GPU from threads of the
    # server process; the PyTorch engine's workers are spawned Python processes): the prefix is never
    # matched by a `prefix::role` title, and ranks are read from the GPUs the engine's processes hold.
    title_prefix = "lmdeploy"
    default_port = 23333  # `lmdeploy serve api_server --server-port` default
    ranks_by_gpu_order = True
    # the PyTorch engine's --num-gpu-blocks (§4.2); TurboMind's block count is a --cache-max-entry-count ≥ 1
    # (`uncapped` below), since v0.15 refused (§1)
    cap_fields: tuple[str, ...] = ("num_gpu_blocks_override",)
    # §2–§4 (docs/engines/lmdeploy.md; TurboMind's BlockManager / CreateEngine, the PyTorch engine's cache
    # engine): the cache is cache_max_entry_count × the free memory once the weights are resident
    measured_not_read: Mapping[MeasuredField, str] = {
        "non_kv_bytes": "the cache is cache_max_entry_count × the free memory once the weights are resident, with "
        "no profiled runtime figure to subtract (docs/engines/lmdeploy.md §2–§4)",
        # TurboMind is C++; the PyTorch engine wraps a few functions in torch.compile (0.12.0
        # pytorch/backends/default/rotary_embedding.py, backends/cuda/attention/mla.py), run in its forwards
        "compile_cache": "TurboMind runs no torch.compile, and the PyTorch engine measures its free memory before "
        "the graph runner and its warm-up, the forwards its few compiled functions first run in, so a warm or cold "
        "cache moves no token (docs/engines/lmdeploy.md §4.2)",
    }
    usage_metrics: tuple[str, ...] = ("lmdeploy:gpu_cache_usage_perc",)  # /metrics, v0.9.2+

    def kv_storage_for(
        self, model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion
    ) -> KvStorage:
        """TurboMind's int8/int4 layout (the MLA latent twice before v0.12.2), or the PyTorch engine's."""
        # a refused launch: the storage is TurboMind's until the budget says why
        backend = _backend(model, settings, version) or "turbomind"
        if backend == "pytorch":  # a DSA model's `auto` is FP8 in some releases (dsa.py)
            return dsa_storage(model, settings.kv_cache_dtype, PYTORCH_STORAGE, version)
        if not since(TURBOMIND_ONLINE_KV_QUANT_SINCE, version):
            if settings.kv_cache_dtype.strip().lower() not in ("auto", *OFFLINE_QUANT_POLICIES):
                raise InputError(f"LMDeploy {version.label} has only --quant-policy 4 (offline int8 KV); "
                                 "int4 and online int8 came in v0.4.0", field="--quant-policy")  # fmt: skip
            return TURBOMIND_STORAGE_OFFLINE_INT8
        if model.mla is not None and not since(TURBOMIND_MLA_SHARED_SINCE, version):
            return TURBOMIND_STORAGE_MLA_TWICE
        return TURBOMIND_STORAGE

    def default_page_size(self, model: ModelSpec, gpu_name: str | None, version: ResolvedVersion) -> int:
        """TurboMind's block length: 128 tokens before v0.3.0, 64 after (the PyTorch engine: 64)."""
        return turbomind_block_len(version)

    def resolve_version(self, log: EngineLog) -> ResolvedVersion:
        return resolve_version(log)

    def version_with_model(
        self, log: EngineLog, model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion
    ) -> ResolvedVersion:
        """A release read off TurboMind's lines narrowed by its printed block of the model's KV (explain.py)."""
        from kvtop.domain.engines.lmdeploy.explain import version_with_model

        return version_with_model(log, model, settings, version)

    def at_shared_capacity(self, settings: LaunchSettings, tightest: EngineResult) -> LaunchSettings:
        """One pipeline stage only: the settings hold as they are."""
        return settings

    def expert_parallel_without_experts(self, model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> str:
        """--ep without experts: TurboMind's FFN over tp ÷ ep from 0.15.0 (unread before), the ranks of ep 1 on the
        PyTorch engine at dp 1 (dense_ep.py)."""
        from kvtop.domain.engines.lmdeploy.dense_ep import expert_parallel_without_experts

        backend, _ = resolve_backend(model, settings, version)
        return expert_parallel_without_experts(backend, settings, version)

    def expert_parallel_unread(self, model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> str | None:
        """TurboMind before 0.15.0 does not read --ep (ep_sizes.py): planned as EP off, said once."""
        from kvtop.domain.engines.lmdeploy.ep_sizes import expert_parallel_unread

        backend = _backend(model, settings, version)
        return expert_parallel_unread(backend, settings, version) if backend else None

    def mlp_split(self, model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> MlpSplit:
        """TurboMind from 0.15.0 splits the shared experts and dense FFN under --ep over its MLP TP group
        (turbomind_ep.py); the PyTorch engine's are the book's (over TP). LayoutError where the backend the model
        resolves to refuses the --ep or --dp that `check_parallel` let through (ep_sizes.py)."""
        from kvtop.domain.engines.lmdeploy.ep_sizes import backend_dp_refusal, ep_refusal
        from kvtop.domain.engines.lmdeploy.turbomind_ep import turbomind_mlp_split

        backend = _backend(model, settings, version)
        if backend is None:
            return MlpSplit()
        no_dp = backend_dp_refusal(backend, settings, version)
        if no_dp:
            raise LayoutError(no_dp, field="--dp")
        refused = ep_refusal(backend, settings, version)
        if refused:
            raise LayoutError(refused, field="--ep")
        return turbomind_mlp_split(model, settings, version) if backend == "turbomind" else MlpSplit()

    def vocab_split(self, model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> VocabSplit:
        """The PyTorch engine builds most classes' embedding and LM head whole on every rank (vocab_split.py);
        TurboMind splits both over TP (§16.1)."""
        from kvtop.domain.engines.lmdeploy.vocab_split import pytorch_vocab_split

        backend = _backend(model, settings, version)
        return pytorch_vocab_split(model, version) if backend == "pytorch" else VocabSplit()

    def world_ranks(self, model: ModelSpec | None, settings: LaunchSettings, version: ResolvedVersion) -> int | None:
        """The PyTorch engine runs --dp (and an --ep other than tp) as one world whose attention TP is world ÷ dp
        (pytorch_world.py); TurboMind's ranks are tp × dp (its EP rules: turbomind_ep.py). Without the model, the
        typed --backend only (the default backend is the model's)."""
        from kvtop.domain.engines.lmdeploy.pytorch_world import pytorch_world

        backend = _backend(model, settings, version) if model is not None else settings.backend
        return pytorch_world(settings, version) if backend == "pytorch" else None

    def uncapped(self, settings: LaunchSettings) -> LaunchSettings:
        """Without --num-gpu-blocks, and a --cache-max-entry-count ≥ 1 (TurboMind's block count, §1) back to
        the default share of free memory."""
        ratio = settings.cache_max_entry_count
        update: dict[str, object] = dict.fromkeys(self.cap_fields)
        if ratio is not None and ratio >= 1:
            update["cache_max_entry_count"] = None
        return settings.model_copy(update=update)


RULES: EngineRules = LmdeployRules()  # mypy checks the package against the protocols
FLAGS: EngineFlags = LmdeployFlags()
RELEASE_NAMES: ReleaseNames = PEP440_NAMES  # what --engine-version takes: PEP 440 releases
