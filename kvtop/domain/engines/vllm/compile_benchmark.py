"""The cold compile's transient inside vLLM's profile: Inductor's combo-kernel benchmark of the embedding lookup
(docs/engines/vllm.md §9, "Session 69").

From v0.29.0 kvtop charges, beside V2's measured graphs, a figure for the memory a cold torch.compile holds in the
profile (`v2_graphs.with_v2_beside`). What that memory is, read in vLLM 0.29.0 / 0.30.0 and in torch 2.13.0, the
torch both wheels pin (`Requires-Dist: torch==2.13.0`, kvtop's venv holds the same release):
- vLLM turns on Inductor's combo kernels and their benchmarking whenever torch ≥ 2.9 and the launch's
  inductor_compile_config does not name them (config/compilation.py:983-993 at v0.29.0, :990-1000 at v0.30.0,
  :989-990 at v0.31.0, torch 2.13.0; from v0.33.0 the benchmark unless Inductor is deterministic, off by default:
  :997-1002 at v0.33.0, :1136-1152 at v0.34.0, which pin torch 2.14.0, whose benchmark is the same: `get_args`
  codegen/triton.py:6781-6800, `benchmark_codegened_module` :8259-8310, scheduler.py:10428-10445). The same default
  stands from v0.11.1 (config/compilation.py:659-667 at v0.11.1, :829-839 at v0.12.0, :789-798 at v0.13.0, :979-987 at
  v0.28.0; none at v0.11.0: `COMBO_DEFAULT`), so V1-runner and pre-v0.29.0 V2 cold starts hold the copy too (session
  70): before v0.29.0 V2 charges it as from v0.29.0, in place of the V1 runner's fitted graph figure that stood for it;
  the V1 runner holds it inside its measured peak (`with_v1_compile_copy`).
- Inductor groups the nodes of one topological level into combo kernels and, with `benchmark_combo_kernel`, times
  each member alone and the combo (`speedup_by_combo_kernel`, torch/_inductor/scheduler.py:9562-9630;
  `benchmark_fused_nodes` / `benchmark_codegened_module`, codegen/triton.py:7320-7400; `benchmark_combo_kernel`
  :7501-7580) on arguments its benchmark module makes: `get_args()` allocates every input buffer at full size with
  `rand_strided` (codegen/triton.py:6005-6050), its dynamic token dimension at the traced hint. The embedding lookup
  (F.embedding of VocabParallelEmbedding, inside the compiled model's first piece) is such a kernel, so one random
  copy of the rank's embedding table (padded vocab ÷ shards × width × dtype) lives on the caching allocator while it
  is benchmarked, and is freed after. A warm start skips it: the compiled artifact is loaded, and Inductor's own
  `.kernel_perf` cache answers the benchmark (codegen/triton.py:7359-7364).
- That compile runs inside `memory_profiling` (v1/worker/gpu_worker.py:568-571 at v0.30.0), before the compiled
  forward (compilation/decorators.py:674-681), so the budget's transient headroom (torch's peak less what stays,
  utils/mem_utils.py:318-319) holds the larger of that copy and V2's own peak (`v2_graphs.compile_above_peak`).

Against the starts that print their peak ('… GiB for peak activation', which from v0.29.0 adds the graph estimate:
gpu_worker.py:616-618 at v0.30.0): Qwen2.5-7B on an RTX 3090 at v0.29.0 and 2,048 tokens printed 1.18 GiB with a
0.15 estimate, 1.03 beside it, where the table's copy is 152,064 × 3,584 × 2 B = 1.015 GiB and V2's forward 0.26; at
16,384 and 32,768 tokens the forward's count (2.06 / 4.13) is the larger, and the print is it plus the estimate.
Qwen3-8B on an A10G at v0.30.0 (cold) printed 1.62 with the L4's printed estimate 0.43 (the same launch), 1.19
beside it: 151,936 × 4,096 × 2 B = 1.159 GiB. Not modelled: the modules a cold compile leaves loaded outside torch
(the RTX 5090 pair's 0.98 GiB more non-torch memory cold, docs/engines/vllm.md §2.6): they stay in the term's error.
Read only where V2's profile is counted (a text model: `v2_profile.v2_counted`), where the launch compiles
(`compile_cache.compiles`) and where it leaves vLLM's combo-kernel default in place (`benchmarks_combo_kernels`);
elsewhere the V1 runner's figure stands in as before. On pipeline stages (session 71, F3, after review R3) the first
stage's only: V2 hands the model the ids on the first stage and sets them None on every later one (`if not
self.is_first_pp_rank: model_inputs["input_ids"] = None`, v1/worker/gpu/model_runner.py:1237-1240 at v0.24.0, the
V1 runner's rule), so the copy above V2's counted peak is the first stage's only (`v2_graphs._first_stage`), as the V1
runner's is (`with_v1_compile_copy`).

Whether the compiled graph holds the lookup at all (`lookup_compiled`, session 69, helper M; read at v0.29.0 and
v0.30.0): V2 hands the model `inputs_embeds` and sets `input_ids` None wherever `uses_inputs_embeds` (the model
supports multimodal inputs, or `--enable-prompt-embeds`), on the first stage, in the dummy run too, whose
`dummy_inputs_embeds` is a buffer of the right shape (v1/worker/gpu/model_runner.py:247-249, :1673-1699 at v0.29.0;
:265-267, :1827-1853 at v0.30.0; only a class with `requires_raw_input_tokens`, VoxtralRealtimeGeneration, keeps its
ids); later stages get neither (:1711-1713 / :1865-1867). `supports_multimodal_inputs` is False for a multimodal model
with every modality's limit at 0 (multimodal/registry.py:103-147 at v0.29.0, :108-152 at v0.30.0), the
`--language-model-only` / `--limit-mm-per-prompt` 0 test kvtop reads as `text_only.profiles_encoder`. The compiled
text models take `inputs_embeds` as their hidden states and call `embed_input_ids` only without them: Gemma4Model
(gemma4.py:969, :1314-1323 at v0.29.0; :985, :1330-1339 at v0.30.0), Qwen3_5Model through Qwen3NextModel.forward
(qwen3_5.py:217; qwen3_next.py:694-697 at v0.29.0, :696-699 at v0.30.0), Qwen3LLMModel (qwen3_vl.py:1701,
:1712-1715 at both). The same at v0.31.0 and v0.34.0 (model_runner.py:260-262, :1886-1911 / :281-283, :2051-2076,
`supports_multimodal_inputs` now a ModelConfig property on the same limits, config/model.py:925-950 / :992-; gemma4.py
:1339 / :1358, qwen3_next.py:697 / :731, qwen3_vl.py:1711 / :1862). So a multimodal model's compile holds no copy of the table: nothing is charged for it, the term's
error kept (`with_v2_beside`). The other inputs of its pointwise kernels are the token-sized activations (Gemma-4's
per-layer inputs, `per_layer_embeddings[: tokens]`, gemma4_mm.py:2104 at v0.29.0, :2131 at v0.30.0; Qwen3-VL's
deepstack embeds) or small tables (the rotary cos/sin cache, max positions × rotary dim); the weights go to extern
matmuls, not combo groups: not counted, in the term's error. `--enable-prompt-embeds` is refused by kvtop
(flags_unmodelled.py), so only the multimodal half of the gate is read.
"""

from __future__ import annotations

from enum import Enum

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.terms import TermEstimate
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.engines.vllm.compilation import config_fields
from kvtop.domain.engines.vllm.compile_cache import compiles, warm_unread
from kvtop.domain.engines.vllm.pinned_copy import pinned_copy
from kvtop.domain.engines.vllm.profile_run import lora_on
from kvtop.domain.engines.vllm.runner_eras import runs_v2
from kvtop.domain.engines.vllm.text_only import profiles_encoder
from kvtop.domain.engines.vllm.v2_profile import v2_counted
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model import ModelSpec
from kvtop.domain.vocab_rows import vocab_parallel_rows
from kvtop.domain.weights import embedding_tp
from kvtop.domain.wording import gib

# Whether vLLM turns Inductor's combo kernels and their benchmark on where the launch's inductor_compile_config names
# neither (with torch >= 2.9, which every release from v0.11.1 pins); before, Inductor's own defaults (both off) stand
COMBO_DEFAULT: Eras[bool] = Eras(
    (
        Era("", False, "config/compilation.py at v0.11.0: no combo-kernel default, Inductor's own (off)"),
        Era("0.11.1", True, "config/compilation.py:659-667 at v0.11.1, :829-839 at v0.12.0, :789-798 at v0.13.0"),
    )
)

# Whether vLLM's default turns the benchmark off where the launch's inductor_compile_config says "deterministic": true
DETERMINISTIC_SKIPS_BENCHMARK: Eras[bool] = Eras(
    (
        Era("", False, "config/compilation.py:983-993 at v0.29.0, :990-1000 at v0.30.0: benchmark_combo_kernel True"),
        Era("0.33.0", True, "config/compilation.py:997-1002 at v0.33.0, :1147-1152 at v0.34.0: not deterministic"),
    )
)


def benchmarks_combo_kernels(inputs: CalibrationInputs) -> bool:
    """Whether the compile benchmarks its combo kernels: vLLM turns both on where the launch's inductor_compile_config
    names neither `combo_kernels` nor `benchmark_combo_kernel` (from v0.11.1: `COMBO_DEFAULT`; from v0.33.0 the
    benchmark only where it, or Inductor's
    env default, is not `deterministic`: `DETERMINISTIC_SKIPS_BENCHMARK`); where it names either, vLLM sets neither
    and Inductor's defaults fill the other (both False: torch/_inductor/config.py:1040-1042 in torch 2.13.0)."""
    return combo_benchmarked(inputs.settings, inputs.version)


def combo_benchmarked(settings: LaunchSettings, version: ResolvedVersion) -> bool:
    """`benchmarks_combo_kernels` of a launch's settings and release alone (all it reads): what the plan's start note
    words too (`compile_charge.charge_kind`), so the note and the charge read one predicate."""
    stated = config_fields(settings.flags, version).get("inductor_compile_config")
    named = stated if isinstance(stated, dict) else {}
    if "combo_kernels" in named or "benchmark_combo_kernel" in named:
        return bool(named.get("combo_kernels")) and bool(named.get("benchmark_combo_kernel"))
    if not COMBO_DEFAULT.at(version):
        return False
    # unnamed, vLLM reads Inductor's own default, TORCHINDUCTOR_DETERMINISTIC == "1" (torch/_inductor/config.py:1009)
    deterministic = named.get("deterministic", str(settings.flags.get("TORCHINDUCTOR_DETERMINISTIC")) == "1")
    return not (DETERMINISTIC_SKIPS_BENCHMARK.at(version) and bool(deterministic))


def lookup_compiled(inputs: CalibrationInputs) -> bool:
    """Whether V2's compiled graph holds the embedding lookup: not where the runner hands the model `inputs_embeds`,
    a multimodal model with a modality on (`text_only.profiles_encoder`, as `supports_multimodal_inputs`), on the
    first pipeline stage (a later stage takes intermediate tensors: `v2_graphs._first_stage`; the module docstring:
    model_runner.py:247-249, :1673-1699 at v0.29.0)."""
    return not profiles_encoder(inputs.model, inputs.settings, inputs.version)


def embedding_copy_bytes(inputs: CalibrationInputs) -> int | None:
    """The random copy of the rank's embedding table a cold compile's combo-kernel benchmark allocates (padded
    vocab ÷ shards × width × dtype, the module docstring; under PP the first stage's, which the caller charges there
    only: `v2_graphs._first_stage`); 0 where the compiled graph holds no lookup (`lookup_compiled`); None where it is
    not read (the model or V2's profile not counted, no compile, or no combo-kernel benchmark:
    `benchmarks_combo_kernels`)."""
    model = inputs.model
    if model is None or not runs_v2(inputs.version, model, inputs.settings):
        return None
    if not compiles(inputs.version, inputs.gpu_name, inputs.settings) or not benchmarks_combo_kernels(inputs):
        return None
    if not lookup_compiled(inputs):
        return 0
    if not v2_counted(inputs):
        return None
    rows = vocab_parallel_rows(model.vocab_size, embedding_tp(inputs.layout))
    return rows * (model.embedding_size or model.hidden_size) * model.dtype_bytes


class V1Copy(Enum):
    """Whether the V1 runner's cold compile holds a copy of the table kvtop reads (`v1_copy_read`), or why not."""

    V2 = "V2 runner"  # V2 runs the profile: its own copy (`embedding_copy_bytes`)
    NOT_BENCHMARKED = "no combo-kernel benchmark"  # the release or the launch's inductor config sets none
    NO_LOOKUP = "no lookup read"  # a multimodal model's graph holds no lookup; LoRA's embedding wrapper not read
    READ = "read"


def v1_copy_read(
    version: ResolvedVersion, model: ModelSpec, settings: LaunchSettings, *, config_read: bool = True
) -> V1Copy:
    """The one predicate of V1's copy, which the charge (`v1_copy_bytes`) and the start note's words
    (`compile_charge.charge_kind`) both read: the runner (`runs_v2`), the combo-kernel benchmark (`combo_benchmarked`;
    not `config_read`, a log's printed config: the release's default), the lookup (not multimodal, not LoRA)."""
    if runs_v2(version, model, settings):
        return V1Copy.V2
    if not (combo_benchmarked(settings, version) if config_read else COMBO_DEFAULT.at(version)):
        return V1Copy.NOT_BENCHMARKED
    if lora_on(settings) or profiles_encoder(model, settings, version):
        return V1Copy.NO_LOOKUP
    return V1Copy.READ


def v1_copy_bytes(inputs: CalibrationInputs) -> int | None:
    """The same random copy of the rank's embedding table where the V1 runner compiles cold (session 70): None where
    V2 runs (`embedding_copy_bytes`, `v2_graphs.with_v2_beside`), the launch compiles nothing or benchmarks no combo
    kernels (`benchmarks_combo_kernels`: before v0.11.1 vLLM sets no combo-kernel default), the model is multimodal
    (the V1 runner hands it `inputs_embeds` in the dummy run too: `_dummy_run`, v1/worker/gpu_model_runner.py
    :3770-3779 at v0.11.1, :5415-5424 at v0.19.0, :6205-6214 at v0.28.0, so its graph holds no lookup) or with LoRA
    (its embedding wrapper not read).

    On pipeline stages (session 71, F2) the first stage's copy: only its compiled forward embeds the ids (a later
    stage takes the intermediate tensors: `if get_pp_group().is_first_rank`, gemma4.py:1293 at v0.21.0, the same in
    llama.py:403 / qwen2.py:396), each stage compiles in its own `profile_run` inside `memory_profiling`
    (v1/worker/gpu_worker.py:388-392 at v0.21.0), and vLLM gives every worker the least stage's blocks
    (kv_cache_utils.py:2035-2048 at v0.21.0): stage 0's peak is the larger of the copy and its count, a later
    stage's the count. kvtop's activation is one figure (the last stage's sampler in it), so the lift above the count
    is marked the first stage's only (`TermEstimate.first_stage_only_bytes`) and the ledger solves every later stage
    without it (`CalibratedFigures.later_stage`, session 71, F3): the least stage's blocks are then vLLM's, whichever
    stage holds them (msamuelson's Gemma-4-31B FP8 at PP 4, v0.21.0: stage 0 binds at 9,960,161,280 B; stage 1, the
    copy charged, at 9,894,100,992 B, which it does not hold: 11,521,228,800 without it). Unsaid (the lift in the
    error above the figure only), the low end charges it on every stage: a bound a little below vLLM's, said so."""
    model = inputs.model
    if model is None or v1_copy_read(inputs.version, model, inputs.settings) is not V1Copy.READ:
        return None
    if not compiles(inputs.version, inputs.gpu_name, inputs.settings):
        return None
    rows = vocab_parallel_rows(model.vocab_size, embedding_tp(inputs.layout))
    return rows * (model.embedding_size or model.hidden_size) * model.dtype_bytes


def with_v1_compile_copy(activation: TermEstimate, inputs: CalibrationInputs) -> TermEstimate:
    """The V1 runner's profiled peak where the start is said cold, with the cold compile's table copy inside it
    (session 70). The V1 runner compiles in `profile_run`'s first forward, inside `memory_profiling`
    (v1/worker/gpu_worker.py:336-343 at v0.13.0, :366-389 at v0.19.0, :515-519 at v0.28.0), so the copy is in torch's
    peak, the printed activation (`torch_peak_increase`), and the compile ends before the compiled forward allocates
    (`v2_graphs.compile_above_peak`): the peak is the larger of the copy and the counted one, not their sum. Three V1
    cold starts against their warm twins on one host (the logs' capacities): Qwen2.5-7B, RTX 3090, v0.19.0 dev, 2,048
    tokens × 256 seqs: 0.46 GiB less KV cold, 1.015 − 0.57 (the count) = 0.45 lifted; Qwen2.5-Coder-7B, RTX 4090,
    v0.23.0, 2,048 × 32: 0.78, 1.015 − 0.26 = 0.76; Gemma-2-9B, RTX PRO 6000, v0.20.1, 8,192 × 32: 0.94 below the plan,
    1.709 − 0.82 = 0.89.

    Charged where the operator says the cache is cold (`--compile-cache cold`) only: a start whose host ran the launch
    before loads the compiled graphs, and Inductor's cache with its benchmark results sits under vLLM's
    (compilation/compiler_interface.py:478-492 at v0.19.0, TORCHINDUCTOR_CACHE_DIR redirected), so it pays none of it;
    which a published start was is seldom said, and the corpus's V1 starts where the copy is above the count did not
    pay it more often than they did (charged unsaid, with the logs' weights and the committed fits, 21 plans moved
    nearer their logs and 31 away, 434 → 428 within 5 %; on the final branch 19 and 31, 439 → 430; fully blind 559 → 564
    of 664 (14 in, 9 out), but nine of the 14 are one source's Gemma-4-31B FP8 starts, whose blind miss is the weights book's,
    docs/engines/vllm.md §9 "Session 70"; the sweeps of one host, e.g. TheBuccaneer's RTX 3090
    starts, plan within 0.6 % without it). Unsaid, what it would lift joins the error above the figure only (a cold
    start stays in the interval; it only lifts the peak, so the high end does not move); said warm (and read by the
    launch), nothing compiles, nothing is added."""
    copy = v1_copy_bytes(inputs)
    if copy is None:
        return activation
    if inputs.compile_cache_warm and warm_unread(inputs.version, inputs.gpu_name, inputs.settings) is None:
        return activation
    activation = _with_pinned(activation, copy, inputs)
    if copy <= activation.bytes:
        return activation
    lift = copy - activation.bytes
    if inputs.compile_cache_cold:
        staged = inputs.layout.pp > 1  # the first stage's lift only: a later stage's forward embeds nothing
        return activation.with_error(
            activation.error_bytes, bytes=copy, first_stage_only_bytes=lift if staged else 0,
            basis=f"{activation.basis}; {V1_COPY} ({gib(copy)}, above the counted {gib(activation.bytes)})"
                  + (f"; {V1_COPY_STAGED} ({gib(lift)} of it on the first stage only)" if staged else ""),
        )  # fmt: skip
    # a cold start only raises the peak (the larger of the copy and the count): the error above the figure only
    on_stages = (
        "; under pipeline stages the low end charges it on every stage, though only the first stage's forward holds "
        "it (a bound a little below vLLM's)" if inputs.layout.pp > 1 else ""
    )
    return activation.widened_by(raise_only_bytes=lift, basis=(
        f"{activation.basis}; {V1_COPY_UNSAID} ({gib(lift)} above the count, added to the error above the figure"
        f"{on_stages})"))


def _with_pinned(activation: TermEstimate, copy: int, inputs: CalibrationInputs) -> TermEstimate:
    """`activation` with the freed copy's segment in its error where the release may pin it past the profile and
    charge it again as consumed memory (v0.27.0 - v0.30.x, `pinned_copy`; session 71: V1's profile runs in the same
    worker, outside the split limit, gpu_worker.py:500-504 at v0.27.0, :515-519 at v0.28.0); whether it is pinned
    follows the start's allocation order, so not its centre."""
    pinned, why = pinned_copy(copy, inputs)
    if not pinned:
        return activation
    return activation.widened_by(raise_only_bytes=pinned, basis=(
        f"{activation.basis}; {why} (added to the error above the figure: it only takes from KV)"))


V1_COPY = (
    "torch.compile's cache said cold: the compile's combo-kernel benchmark holds one random copy of the rank's "
    "embedding table inside the profile's torch peak (compile_benchmark.py; combo kernels and their benchmark vLLM's "
    "default from v0.11.1, config/compilation.py:659-667 at v0.11.1), the larger of it and the count taken"
)

V1_COPY_STAGED = (
    "on pipeline stages the first stage's copy: only its compiled forward embeds the ids (gemma4.py:1293, "
    "llama.py:403 at v0.21.0), so a later stage's budget takes the count without the lift, and vLLM gives every "
    "stage the least stage's blocks (kv_cache_utils.py:2035-2048)"
)

V2_COPY_STAGED = (
    "on pipeline stages the cold compile's copy is the first stage's: V2 hands the model the ids there only "
    "(v1/worker/gpu/model_runner.py:1237-1240 at v0.24.0), so a later stage's budget takes the term without it"
)

V1_COPY_UNSAID = (
    "not modelled unless said cold (--compile-cache cold): a cold compile's combo-kernel benchmark holds one random "
    "copy of the rank's embedding table inside the profile's torch peak (compile_benchmark.py), which a host whose "
    "Inductor cache holds the kernels does not pay"
)

# where V2 runs before v0.29.0: the copy in place of the V1 runner's figure that `v2_graphs.v2_placeholder` names
EMBEDDING_COPY_BEFORE_V0_29 = (
    "in its place (session 70) the cold compile's transient it stood for, Inductor's combo-kernel benchmark of the "
    "embedding lookup, one random copy of the rank's table (`get_args` allocates every input with rand_strided: "
    "codegen/triton.py:3882-3897 in torch 2.9.0, :6005-6050 in torch 2.13.0, which v0.28.0 pins; combo kernels and "
    "their benchmark vLLM's default from v0.11.1: config/compilation.py:966-976 at v0.23.0, :977-987 at v0.28.0), "
    "the figure's error kept"
)

EMBEDDING_COPY = (
    "the cold compile's transient it stands for is Inductor's combo-kernel benchmark of the embedding lookup, one "
    "random copy of the rank's table (codegen/triton.py:6005-6050, scheduler.py:9562-9630 in torch 2.13.0, which "
    "v0.29.0/v0.30.0 pin; combo kernels and their benchmark on: config/compilation.py:990-1000 at v0.30.0)"
)

NO_LOOKUP = (
    "the cold compile it stands for holds no copy of the embedding table: V2 hands a multimodal model inputs_embeds, "
    "so its compiled graph has no embedding lookup (v1/worker/gpu/model_runner.py:247-249, :1673-1699 at v0.29.0, "
    ":265-267, :1827-1853 at v0.30.0): none of it charged, its error kept"
)
