"""What one engine start measured on this node, kept so that later plans of the same launch use it.

A line of the local calibration store (`kvtop/sources/calibration_store.py`): the engine, its release,
the GPU model, the layout, a key of the model's architecture (never its path), the settings the
runtime terms depend on, and the bytes of each term the start's log measured. Nothing in it is a
secret: no path, no host, no argument value besides those counts.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import BaseModel, ConfigDict

from kvtop.domain.architectures.config_dtype import DTYPE_BYTES
from kvtop.domain.calibration.gpu_totals import CUDA_TOTAL_FITS, cuda_total_estimate
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import newest_release
from kvtop.domain.explanation import Explanation
from kvtop.domain.gpus import gpu_model_key
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.ledger import Ledger
from kvtop.domain.model import ModelSpec
from kvtop.domain.wording import MIB, gib

NODE_REPEAT_ERROR_BYTES = 64 * MIB  # how far two starts of the same launch on one node differ (an assumption)
STORE_SCHEMA = 1


def model_key(model: ModelSpec) -> str:
    """A short hash of the model's architecture facts (not its name or path): equal for the same model
    wherever it is stored, different when any fact the books read differs."""
    words = ("name", "source", "not_modelled", "config_defaults", "config_model_type")
    # what the books read, less the words (a tower row's kind names it: stored keys stay as they were)
    exclude: dict[str, Any] = {**dict.fromkeys(words, True), "tower": {"kind": True}}
    if model.image_pixels is None:  # a later field, hashed only where read: stored keys stay as they were
        exclude["image_pixels"] = True
    # positions_nominal was a field when the store's first keys were made: its flag stays in the hash
    facts = model.model_dump(exclude=exclude) | {"positions_nominal": model.positions_nominal}
    return hashlib.sha256(json.dumps(facts, sort_keys=True, default=str).encode()).hexdigest()[:16]


def runtime_settings(settings: LaunchSettings) -> dict[str, int | bool | str | None]:
    """The settings the runtime terms depend on (the batch the profile runs, eager mode, the KV dtype)."""
    return {
        "max_num_batched_tokens": settings.max_num_batched_tokens,
        "max_running_requests": settings.max_running_requests,
        "enforce_eager": settings.enforce_eager,
        "quantization": settings.quantization,
        "dtype": settings.dtype,
    }


def rules_release(engine: str, version: str | None) -> str | None:
    """The release whose rules read a start or plan of `version`: the one stated, else the newest release kvtop
    models for the engine (what a launch naming none is planned and explained as: `NOT_STATED`'s latest rules);
    None where the engine's calendar names no release (llama.cpp's builds)."""
    return version if version is not None else newest_release(engine_rules(engine).calendar)


def dtype_width(dtype: str | None, model: ModelSpec) -> int | str:
    """Bytes an activation element takes (a launch's `--dtype` or a log's `torch.*` repr, read by the checkpoint
    dtype table, config_dtype.DTYPE_BYTES): the checkpoint's where the launch says none or `auto`; a name kvtop does
    not know stays itself (it matches only the same name)."""
    word = (dtype or "auto").lower().removeprefix("torch.")
    return model.dtype_bytes if word == "auto" else DTYPE_BYTES.get(word, word)


class NodeMeasure(BaseModel):
    """One engine start on this node: when, what launch, and each term its log measured (bytes)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    schema_version: int = STORE_SCHEMA
    date: str  # ISO day of the start (the log's date, else the day kvtop read it)
    engine: str
    engine_version: str | None
    gpu: str  # the GPU model's key (`gpu_key`), e.g. 'H100'
    tp: int
    pp: int
    model_key: str
    model_type: str  # for a person reading the store: 'llama', 'qwen3_moe'
    settings: dict[str, int | bool | str | None]
    terms: dict[Term, int]
    # the weights term holds the runtime charge too: the start proved their sum, not how it splits (the free
    # memory's drop across the load exceeded the weights and charge the logged KV memory leaves); applied only
    # with the runtime terms, never alone
    together: bool = False
    # the pipeline stage whose load the weights term is, where the log printed one stage's (vLLM's rank 0 line under
    # PP: `MeasuredInputs.weights_stage`); None: every stage's (the largest rank's), as every line before it was kept
    weights_stage: int | None = None
    # a start of no known release (`engine_version` None): the release whose rules solved its terms, the newest kvtop
    # modelled when it was written (`rules_release`); None on a line of a stated release, or one written before
    # kvtop kept it (its rules not known: a plan uses none of it, as the latest rules move with kvtop's releases)
    read_as: str | None = None

    def start_key(self) -> tuple[object, ...]:
        """What identifies the start (not what kvtop measured of it): one store line per key."""
        return (self.engine, self.engine_version, self.gpu, self.tp, self.pp, self.model_key,
                json.dumps(self.settings, sort_keys=True), self.date)  # fmt: skip

    def note(self) -> str | None:
        """The one line a start whose weights and runtime charge are kept together gives (None: split)."""
        if not self.together:
            return None
        return ("calibration store: this start's weights and runtime charge are kept together "
                f"({gib(self.terms.get(Term.WEIGHTS, 0))}): the free memory's drop across the load exceeds "
                "what its logged KV memory leaves, so their split is not determined; a plan of another batch uses neither")  # fmt: skip

    def matches(self, engine: str, version: str | None, gpu_name: str | None, model: ModelSpec,
                settings: LaunchSettings) -> bool:  # fmt: skip
        """The same engine release, GPU model, layout and model: its context and totals apply."""
        return (
            self.engine == engine and self.same_rules(version) and self.gpu == gpu_model_key(gpu_name)
            and self.tp == settings.tp and self.pp == settings.pp and self.model_key == model_key(model)
        )  # fmt: skip

    def same_rules(self, version: str | None) -> bool:
        """Whether a plan of `version` reads the release this start's terms were solved under: the same stated
        release, or, neither stating one, the same latest rules (`read_as`; kvtop's newest release moves: a start
        explained under v0.33.0's rules must not feed a plan under v0.34.0's extensible KV cache)."""
        if self.engine_version != version:
            return False
        newest = rules_release(self.engine, None) if version is None else None
        return newest is None or self.read_as == newest

    def same_runtime(self, settings: LaunchSettings, model: ModelSpec | None = None) -> bool:
        """The runtime terms (activation, non-torch, graphs) apply only to the same profiled batch. With `model`
        the activation dtype is compared by its width: a log prints the one the engine resolved
        (`dtype=torch.bfloat16`) where the plan of the same launch says none (the checkpoint's)."""
        plan = runtime_settings(settings)
        if model is None:
            return self.settings == plan
        stored = self.settings.get("dtype")
        return (
            {**self.settings, "dtype": None} == {**plan, "dtype": None}
            and dtype_width(stored if isinstance(stored, str) else None, model) == dtype_width(settings.dtype, model)
        )  # fmt: skip


def latest_match(
    measures: tuple[NodeMeasure, ...], engine: str, version: str | None, gpu_name: str | None, model: ModelSpec,
    settings: LaunchSettings,
) -> NodeMeasure | None:  # fmt: skip
    """The newest start of the same launch (None: this node never started it)."""
    found = [m for m in measures if m.matches(engine, version, gpu_name, model, settings)]
    return max(found, key=lambda m: m.date) if found else None


def unused_start(
    measures: tuple[NodeMeasure, ...], engine: str, version: str | None, gpu_name: str | None, model: ModelSpec,
    settings: LaunchSettings,
) -> str | None:  # fmt: skip
    """Why this node's newest start of the same model, GPU model and engine gives a plan none of its terms (another
    release, layout or profiled batch), in words for one line; None where there is none or the plan used it."""
    key, gpu = model_key(model), gpu_model_key(gpu_name)
    near = [m for m in measures if m.engine == engine and m.gpu == gpu and m.model_key == key]
    if not near:
        return None
    start = max(near, key=lambda m: m.date)
    ran = start.engine_version or "a release not known"
    differs = []
    if start.engine_version != version:
        plan = f"this plan {version}" if version else f"this plan the newest (--engine-version {ran} to use it)"
        differs.append(f"ran {ran}, {plan}")
    elif not start.same_rules(version):  # neither states a release: the latest rules moved since it was stored
        read = f"v{start.read_as}'s" if start.read_as else "an earlier kvtop's latest"
        differs.append(f"ran a release not known, read under {read} rules, this plan under "
                       f"v{rules_release(engine, None)}'s (--engine-version to name the release it ran)")
    if (start.tp, start.pp) != (settings.tp, settings.pp):
        differs.append(f"ran TP{start.tp} PP{start.pp}, this plan TP{settings.tp} PP{settings.pp}")
    if not differs and not start.same_runtime(settings, model):
        differs.append("profiled another batch (its runtime charge is that batch's)")
    if not differs:
        return None
    return f"this node's calibration store has a start of this model on the {gpu} ({start.date}) not used here: it {'; it '.join(differs)}"


def measure_of_start(
    ledger: Ledger, *, date: str, free_before_load_bytes: int | None, weights_bytes: int | None,
    runtime_measured: bool, weights_stage: int | None = None,
) -> NodeMeasure | None:  # fmt: skip
    """What one start measured, as a store line: `ledger` rebuilt from the start's log (its measured inputs
    applied), the free memory before load and the weights the log printed, and (`runtime_measured`: the engine
    solved its charge besides the weights from the KV memory its log printed) the runtime terms together.
    No term is negative: where the start's weights exceed the weights and charge together, their sum is what it
    proved (kept as the weights, `together`). None when the GPU model is not known (a plan could never match it)."""
    if not ledger.gpu_name:
        return None
    terms: dict[Term, int] = {}
    # the total the runtime charge was solved against, kept with it so that a replay gives the logged KV memory
    total = (ledger.measured.engine_total(ledger.gpu_total_bytes) if runtime_measured
             else cuda_total_estimate(ledger.gpu_name, ledger.gpu_total_bytes, CUDA_TOTAL_FITS,
                                      wsl2=ledger.measured.wsl2).bytes)  # fmt: skip
    if free_before_load_bytes is not None:
        terms[Term.CUDA_TOTAL] = total
        terms[Term.CONTEXT] = total - free_before_load_bytes
    if weights_bytes is not None:
        terms[Term.WEIGHTS] = weights_bytes
    together = False
    if runtime_measured:
        terms[Term.CUDA_TOTAL] = total
        # the engine's non-KV charge, solved beside the ledger's weights: where the start's own weights are kept
        # instead, the charge gives up their difference, so that weights + charge stay what the start measured
        ledger_weights = ledger.measured.weights_bytes or max((rank.weights.total_bytes for rank in ledger.ranks), default=0)
        proved = ledger_weights + ledger.engine.reserve_bytes  # weights and charge together: what the KV memory leaves
        if weights_bytes is not None and ledger.ranks and weights_bytes > proved:
            terms[Term.WEIGHTS], together = proved, True  # the split is not determined: the sum, never a negative charge
        beside = terms.get(Term.WEIGHTS, ledger_weights) - ledger_weights if ledger.ranks else 0
        terms[Term.ACTIVATION] = ledger.engine.reserve_bytes - beside
        terms[Term.NON_TORCH] = terms[Term.CUDA_GRAPHS] = 0
    if not terms:
        return None
    return NodeMeasure(
        date=date, engine=ledger.settings.engine, engine_version=ledger.settings.engine_version,
        gpu=gpu_model_key(ledger.gpu_name), tp=ledger.settings.tp, pp=ledger.settings.pp, model_key=model_key(ledger.model),
        model_type=ledger.model.model_type, settings=runtime_settings(ledger.settings), terms=terms, together=together,
        weights_stage=weights_stage if Term.WEIGHTS in terms and ledger.settings.pp > 1 else None,
        read_as=rules_release(ledger.settings.engine, None) if ledger.settings.engine_version is None else None,
    )  # fmt: skip


def measure_of_explanation(result: Explanation, *, date: str) -> NodeMeasure | None:
    """What a start explained from its log measured (its ledger rebuilt with the log's figures), as a store
    line; None when nothing was rebuilt or the GPU model is not known. One rule for `kvtop explain` and a live
    node given its engine's log."""
    if result.ledger is None:
        return None
    logged = result.logged
    facts = engine_rules(result.ledger.settings.engine).calibration.START_MEASURES
    weights = logged.weights_bytes
    # a logged load under PP is the stage the engine's reader said (vLLM's rank 0 line: stage 0's); a free drop is
    # the least free rank's, every stage's
    stage = result.ledger.measured.weights_stage if weights is not None else None
    drop = (logged.free_before_load_bytes - logged.free_after_load_bytes
            if logged.free_before_load_bytes is not None and logged.free_after_load_bytes is not None else None)  # fmt: skip
    if weights is None and facts.weights_from_free_drop:
        weights = drop  # what the load took, as the engine itself counts it (its package's START_MEASURES)
    # the runtime charge is measured only where the engine solved it from the KV memory its log printed (vLLM); an
    # engine that took the logged figure as its budget or never charged one measured none (0 is no measure there)
    runtime = facts.runtime_charge and logged.available_kv_bytes is not None
    return measure_of_start(
        result.ledger, date=date, free_before_load_bytes=logged.free_before_load_bytes,
        weights_bytes=weights, runtime_measured=runtime, weights_stage=stage,
    )  # fmt: skip
