"""Whether TensorRT-LLM's PyTorch backend captures its decode CUDA graphs (`cuda_graph_config`), read off the launch
(docs/engines/trtllm.md §37).

What the code does, read in stored copies of TensorRT-LLM's LLM API and model engine (search-index copies of 2025;
no release tree was readable, so the release each holds is not pinned):
- `TorchLlmArgs.cuda_graph_config: Optional[CudaGraphConfig] = Field(default_factory=CudaGraphConfig)` (llmapi/
  llm_args.py, ids 1520735490, 1090804222): graphs are ON unless the YAML sets `cuda_graph_config: null`; an empty
  mapping (`{}`) or any of its keys keeps them on. `CudaGraphConfig` captures `batch_sizes`, else
  `_generate_cuda_graph_batch_sizes(max_batch_size or 128, enable_padding)` (ids 55143598664, 7019226376).
- `PyTorchModelEngine.warmup` runs the torch.compile warm-up (off unless torch_compile_config), the autotuner's pure
  context pass of max_num_tokens and `_run_cuda_graph_warmup`, which returns at once when the graph runner is not
  enabled (no `Creating CUDA graph instances …`, no `Run generation-only CUDA graph warmup …`; _torch/pyexecutor/
  model_engine.py, id 707893322). That warm-up runs when the estimation executor is built, before
  `KvCacheCreator.configure_kv_cache_capacity` reads the baseline (py_executor_creator.py, ids 1083207948,
  3245286861), so with graphs off no graph pool and no grown graph workspace is in the profiled peak.

What kvtop does with it:
- an MLA model's CUDA-graph attention workspace (`cuda_graph_workspace`, grown by the generation-only graph warm-up,
  mla_workspace.py, §32) is not charged: no generation forward runs before the baseline with graphs off (the
  autotuner's pass and the profiling requests are context only);
- the rest of the profiled peak (§20, §22) stays as read off faradawn's 1.2.0rc4 start, which captured graphs: the
  share its graph pools held is not subtracted (not modelled). It is bounded by what faradawn's executor creation
  added after the load, 0.31 GiB (graphs, autotuner, workspaces together), inside that term's error (its value);
- the 2026 tree's estimation pool, which keeps blocks for the graph warm-up, is not re-read for graphs off.
"""

from __future__ import annotations

from kvtop.domain.errors import InputError
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.redact import quoted

GRAPHS_KEY = "cuda_graph_config"
# how a launch says `cuda_graph_config: null`: the YAML's null as kvtop keeps it (str(None)), or the word typed
NULL_WORDS = frozenset({"none", "null", "~"})
# a mapping typed on a command line (`--cuda_graph_config {}`): the default CudaGraphConfig, graphs on
EMPTY_MAPPING = "{}"
# §22: what faradawn's executor creation added after the load (2.52 − 0.13 − 2.18 + 0.10 GiB): graph pools,
# autotuner and workspaces together, the bound on the graph pools' share of the read rest
READ_REST_EXECUTOR_GIB = 0.31


def graph_children(settings: LaunchSettings) -> list[str]:
    """The `cuda_graph_config.<key>` the launch sets (kvtop's `cuda_graph_max_bs`, or one kept as its path)."""
    kept = sorted(key for key in settings.flags if key.startswith(f"{GRAPHS_KEY}."))
    return [f"{GRAPHS_KEY}.max_batch_size"] * (settings.cuda_graph_max_bs is not None) + kept


def graphs_off(settings: LaunchSettings) -> bool:
    """Whether the launch turns the PyTorch backend's CUDA graphs off (`cuda_graph_config: null`); any other value
    given to the key itself (not one of its sub-keys), or null beside one of its sub-keys (which one YAML section
    cannot hold: the null drops it), is an InputError naming it."""
    value = settings.flags.get(GRAPHS_KEY)
    if value is None:
        return False
    text = str(value).strip()
    if text.lower() in NULL_WORDS:
        if children := graph_children(settings):
            raise InputError(
                f"null (CUDA graphs off) beside {children[0]}: a null section holds no keys; drop one of them",
                field=f"--{GRAPHS_KEY}",
            )
        return True
    if text == EMPTY_MAPPING:
        return False
    raise InputError(
        f"expected null (CUDA graphs off) or {{}} (the default graphs), got {quoted(text)}: set its keys as "
        "cuda_graph_config.<key>",
        field=f"--{GRAPHS_KEY}",
    )


def graphs_note(settings: LaunchSettings) -> str | None:
    """The plan's words for a launch with CUDA graphs off; None where they are on."""
    if not graphs_off(settings):
        return None
    return (
        "cuda_graph_config: null (CUDA graphs off): no decode graphs are captured before the KV sizing, so an MLA "
        "model's graph attention workspace is not charged; the graphs' pools inside the profiled rest read off a "
        f"start that captured them are not subtracted (not modelled, at most {READ_REST_EXECUTOR_GIB} GiB there, "
        "inside that term's error; docs/engines/trtllm.md §37)"
    )
