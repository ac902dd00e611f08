"""vLLM's (V1) KV budget, as `engines/vllm.md` states it.

requested  = ceil(total × gpu_memory_utilization)
available  = requested − weights − non-KV runtime (activation peak, non-torch, CUDA graphs)
num_blocks = available // (block_size × bytes per token per layer) // group_size
tokens     = int(num_blocks / blocks_per_request × max_model_len)        the logged figure
concurrency = num_blocks / blocks_per_request                           "Maximum concurrency"
"""

from __future__ import annotations

import math

from kvtop.domain.engines.base import GIB, BudgetStep, EngineInputs, EngineResult
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.kv import KvBook
from kvtop.domain.layout import PpRemainder
from kvtop.domain.model import ModelSpec
from kvtop.domain.units_parse import parse_vllm_bytes

DEFAULT_UTILIZATION = 0.92  # v0.21.0 (2026-04) onward
DEFAULT_UTILIZATION_BEFORE_0_21 = 0.9


def default_utilization(version: str | None) -> tuple[float, str]:
    """vLLM's default gpu_memory_utilization for its version (unknown: the current default)."""
    if version:
        parts = [int(p) for p in version.lstrip("v").split(".")[:2] if p.isdigit()]
        if len(parts) == 2 and tuple(parts) < (0, 21):
            return DEFAULT_UTILIZATION_BEFORE_0_21, f"default of vLLM {version} (0.9 before v0.21)"
        if len(parts) == 2:
            return DEFAULT_UTILIZATION, f"default of vLLM {version} (0.92 since v0.21)"
    return DEFAULT_UTILIZATION, "default (0.92 since v0.21; 0.9 before: give --engine-version)"


# Activation peak + non-torch memory + CUDA graphs, when neither a log nor the operator says.
ESTIMATED_NON_KV_BYTES = 2 * GIB


def default_batch_limits(total_bytes: int) -> tuple[int, int]:
    """(max_num_batched_tokens, max_num_seqs) `vllm serve` picks: larger on ≥ 70 GiB GPUs."""
    return (8192, 1024) if total_bytes >= 70 * GIB else (2048, 256)


class VllmRules:
    name: str = "vllm"
    pp_remainder: PpRemainder = "second_to_last"
    honours_checkpoint_kv_dtype: bool = False

    def default_page_size(self, model: ModelSpec) -> int:
        return 64 if model.is_mla else 16

    def solve(self, inputs: EngineInputs) -> EngineResult:
        m, s, kv, meas = inputs.model, inputs.settings, inputs.kv, inputs.measured
        if kv.pool("state") is not None:
            raise UnsupportedModelError(
                "vLLM's hybrid Mamba/linear-attention page alignment is not modelled yet (use --engine sglang)",
                field="engine",
                source=m.source,
            )
        block = s.page_size or self.default_page_size(m)
        total = inputs.gpu_total_bytes
        steps: list[BudgetStep] = [
            BudgetStep(label="GPU memory", bytes=total, measured=meas.gpu_total_bytes is not None)
        ]
        notes: list[str] = []
        if s.gpu_memory_utilization is not None:
            util, util_source = s.gpu_memory_utilization, "--gpu-memory-utilization"
        else:
            util, util_source = default_utilization(s.engine_version)
        requested = math.ceil(total * util)
        steps.append(
            BudgetStep(label=f"requested: ceil(total × {util:g})", bytes=requested, note=util_source)
        )
        batched, seqs_default = default_batch_limits(total)
        if s.kv_cache_memory_bytes is not None:
            available = parse_vllm_bytes(s.kv_cache_memory_bytes)
            steps.append(BudgetStep(label="--kv-cache-memory-bytes (profiling skipped)", bytes=available))
            non_kv = requested - inputs.weights_bytes - available
        elif meas.available_kv_bytes is not None:
            available = meas.available_kv_bytes
            non_kv = requested - inputs.weights_bytes - available
            steps.append(BudgetStep(label="available KV memory (logged)", bytes=available, measured=True))
        else:
            non_kv = meas.non_kv_bytes if meas.non_kv_bytes is not None else ESTIMATED_NON_KV_BYTES
            if meas.non_kv_bytes is None:
                notes.append(
                    "non-KV runtime memory (activations, non-torch, CUDA graphs) is estimated at 2 GiB"
                )
            steps.append(
                BudgetStep(
                    label="− weights", bytes=-inputs.weights_bytes, measured=meas.weights_bytes is not None
                )
            )
            steps.append(
                BudgetStep(
                    label="− activation peak, non-torch, CUDA graphs",
                    bytes=-non_kv,
                    measured=meas.non_kv_bytes is not None,
                )
            )
            available = requested - inputs.weights_bytes - non_kv
            steps.append(BudgetStep(label="available KV memory", bytes=available))
        max_len = inputs.context_length
        groups, group_size, page_bytes = self._groups(m, kv, block, s.disable_hybrid_kv_cache_manager)
        blocks_per_request = self._blocks_per_request(m, groups, block, max_len, batched, inputs.layout.pp)
        num_blocks = int(available // page_bytes // group_size) if available > 0 and page_bytes else 0
        if s.num_gpu_blocks_override is not None:
            num_blocks = s.num_gpu_blocks_override
        steps.append(
            BudgetStep(
                label=f"blocks of {block} tokens ({page_bytes * group_size:,} B each)", value=num_blocks
            )
        )
        needed = blocks_per_request * page_bytes * group_size
        fits = available > 0 and num_blocks >= blocks_per_request
        concurrency = num_blocks / blocks_per_request if fits else 0.0
        tokens = int(concurrency * max_len) if fits else 0
        steps.append(
            BudgetStep(label=f"tokens: int(blocks ÷ {blocks_per_request} × {max_len:,})", value=tokens)
        )
        max_seqs = s.max_running_requests or seqs_default
        return EngineResult(
            engine=self.name, token_capacity=tokens, page_size=block, num_blocks=num_blocks,
            kv_budget_bytes=max(available, 0), kv_pool_bytes=num_blocks * page_bytes * group_size if fits else 0,
            max_running_requests=max_seqs, max_concurrency=concurrency, reserve_bytes=max(non_kv, 0),
            memory_fraction=util, memory_fraction_source=util_source, fits=fits,
            shortfall_bytes=0 if fits else needed - available, steps=tuple(steps), notes=tuple(notes),  # a negative budget adds to it
        )  # fmt: skip

    @staticmethod
    def _groups(m: ModelSpec, kv: KvBook, block: int, unify: bool) -> tuple[list[tuple[str, int]], int, int]:
        """KV cache groups of same-type layers: ([(kind, groups of that kind)], group_size, page bytes per layer slot)."""
        full = kv.pool("full")
        swa = kv.pool("swa")
        index = kv.pool("dsa_index")
        attention = full or swa
        per_layer = attention.bytes_per_layer_token if attention is not None else 0.0
        if index is not None:  # one group of per-layer sizes: latent + indexer key
            per_layer += index.bytes_per_layer_token
        page = int(block * per_layer)
        if swa is None or unify:
            layers = (full.layers if full else 0) + (swa.layers if swa else 0)
            return [("full", 1)], layers, page
        nf, ns = (full.layers if full else 0), swa.layers
        if nf == 0:
            return [("swa", 1)], ns, page
        low, high = min(nf, ns), max(nf, ns)
        size = high if high < 1.5 * low else low
        return [("full", math.ceil(nf / size)), ("swa", math.ceil(ns / size))], size, page

    @staticmethod
    def _blocks_per_request(
        m: ModelSpec, groups: list[tuple[str, int]], block: int, max_len: int, batched: int, pp: int
    ) -> int:
        window = m.sliding_window or max_len
        in_flight = pp * batched
        total = 0
        for kind, count in groups:
            if kind == "full":
                total += count * math.ceil(max_len / block)
            else:
                total += count * (math.ceil(min(window - 1 + in_flight, max_len) / block) + 1)
        return total


VLLM = VllmRules()
