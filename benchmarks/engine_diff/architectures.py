"""The architecture table of docs/fidelity.md: the engines' own model classes against kvtop's books.

For every forked row that built the model (each pipeline stage's TP rank 0, on the meta device),
two comparisons per stage:
  weights   the parameter bytes of the engine's model, language part (the top-level children that
            are not a vision/audio tower or projector), against kvtop's weights book for that rank;
  KV        (vLLM) each layer's KV cache spec — its kind and the bytes one token costs in it (page
            bytes ÷ block size; a Mamba layer's state bytes per request) — against kvtop's KV pools
            for that rank (full, sliding-window, DSA index, state), layer counts and bytes per layer, and
            each windowed pool's window (tokens) against the window kvtop's vLLM rules give its spec.
An architecture (a config's `architectures[0]`) is equal where every compared row is; different
(with the first difference and its reading) where one is not; not modelled where kvtop refuses it.
Where kvtop's weights book holds a tower (its "vision" row) that row is compared with the engine's tower and
projector children; other towers are reported beside (kvtop's book does not hold them: its `not_modelled`).
Each difference's reading is arch_readings.py's; one stage's figures are a `stage_check.StageCheck`.
"""

from __future__ import annotations

import json
from typing import Any, get_args

from benchmarks.engine_diff.arch_readings import arch_reading
from benchmarks.engine_diff.cases import config_path
from benchmarks.engine_diff.kvtop_side import kvtop_plan
from benchmarks.engine_diff.stage_check import StageCheck
from benchmarks.engine_diff.table import Row, load_fixtures
from kvtop.domain.kv import KvPool


def clip(text: str) -> str:
    from benchmarks.engine_diff.render import clip as render_clip

    return render_clip(text, 400)

# Top-level children of an engine's model that hold the language model (the rest: towers, projectors).
# `output`: InternLM2ForCausalLM's LM head (`self.output = ParallelLMHead(...)`, vLLM 0.33.0 / SGLang 0.5.23
# internlm2.py).
# `llm`: vLLM 0.33.0 ovis.py / ovis2_5.py / minicpmv.py build the language model as `self.llm`
# (init_vllm_registered_model) beside the tower (visual_tokenizer / vpm) and the visual embedding table (vte)
# "text": vLLM 0.33.0 moondream3.py builds its language model as the child `text` (under _mark_language_model)
LANGUAGE_CHILDREN = ("model", "lm_head", "language_model", "transformer", "backbone", "embed_tokens", "layers", "norm",
                     "output", "llm", "text",
                     "proj_out",  # Whisper's LM head beside `decoder` (SGLang 0.5.23 whisper.py: a ParallelLMHead)
                     "decoder")  # vLLM 0.33.0 midashenglm.py: the Qwen2ForCausalLM is `decoder`  # fmt: skip
GLM4V_LANGUAGE = ("transformer.embedding", "transformer.encoder", "transformer.output_layer")
KV_KIND = {  # vLLM spec class -> kvtop pool
    "FullAttentionSpec": "full", "MLAAttentionSpec": "full", "SinkFullAttentionSpec": "full",
    "SlidingWindowSpec": "swa", "ChunkedLocalAttentionSpec": "swa", "SlidingWindowMLASpec": "swa",
    "MambaSpec": "state", "IndexerSpec": "dsa_index", "CircularBufferSpec": "ring",
    "CrossAttentionSpec": "cross",  # an encoder-decoder's cross-attention (Whisper: kvtop's cross pool, vllm/encdec.py)
}  # fmt: skip
# pools a request holds a fixed page of, whatever its length (compared per request, not per token): kvtop's own
# answer (KvPool.per_request: a Mamba state; a CircularBufferSpec ring, vLLM 0.33.0 kv_cache_interface.py one block
# per request, kv_ring.py), asked of every pool name the book knows
PER_REQUEST = frozenset(
    name for name in get_args(KvPool.model_fields["name"].annotation) if KvPool(name=name, layers=0).per_request
)
# vLLM 0.33 gives DSA's indexer key cache an MLAAttentionSpec of its own (head size 132, uint8), and MiniMax-M3's
# lightning-indexer key cache one too (MiniMaxM3IndexerCache, models/minimax_m3/common/indexer.py: one bf16 head of
# sparse_index_dim, registered as `<layer>.self_attn.attn.index_cache`): its layer name, not its spec class, says
# it is the index (kvtop's dsa_index pool).
INDEXER_CACHE_SUFFIXES = (".indexer.k_cache", ".attn.index_cache")


def architecture(config: str) -> str:
    data = json.loads(config_path(config).read_text())
    names = data.get("architectures") or [data.get("model_type", "?")]
    return str(names[0])


def _is_language(child: str) -> bool:
    """A top-level child of the language model; BLIP-2's `language_projection` (the Q-Former's projector into
    the text width, vLLM blip2.py) is the multimodal stack's, not the language model's."""
    if child.endswith(".text_model"):  # Idefics3 / SmolVLM's model.text_model (vllm_runner._param_bytes)
        return True
    if child == "model.decoder":  # FireRedASR2's Qwen2 / Fun-ASR's Qwen3 beside their model.encoder
        return True
    if child in GLM4V_LANGUAGE:  # GLM-4V-9B's ChatGLM beside its transformer.vision (vllm_readings.param_bytes)
        return True
    if child.startswith("thinker."):  # SGLang's Qwen3-Omni thinker.model / thinker.lm_head (sglang_standins)
        return _is_language(child.split(".", 1)[1])
    if child in ("vision_language_adapter", "audio_language_adapter"):  # a Mistral-format Pixtral's / Voxtral's
        return False  # adapter into the text width (vLLM 0.33.0 pixtral.py, voxtral.py): the tower's
    return child in LANGUAGE_CHILDREN or ("language" in child and not child.endswith("_projection"))


# A language model held as one child (`llm`, `language_model`): a top-level `norm` beside it is the multimodal
# stack's, not the text model's final norm (SGLang 0.5.23 sarashina2_vision.py:72 `self.norm = nn.LayerNorm(text
# hidden)` over the vision tower's output, beside `self.llm` and `self.visual`).
WHOLE_LANGUAGE = ("llm", "language_model")


def is_language_child(child: str, param_bytes: dict[str, int]) -> bool:
    """_is_language, less a top-level `norm` beside a language model held as one child (WHOLE_LANGUAGE)."""
    return _is_language(child) and not (child == "norm" and any(c in WHOLE_LANGUAGE for c in param_bytes))


def _language_bytes(param_bytes: dict[str, int]) -> tuple[int, int]:
    language = sum(b for child, b in param_bytes.items() if is_language_child(child, param_bytes))
    return language, sum(param_bytes.values()) - language


def _engine_kv(layer_specs: list[dict[str, Any]]) -> dict[str, tuple[int, float]]:
    """kvtop pool name -> (layers, bytes per layer per token; per request for a state or a ring)."""
    out: dict[str, tuple[int, float]] = {}
    for spec in layer_specs:
        kind = KV_KIND.get(spec["kind"].split("[")[0], spec["kind"])
        if str(spec.get("first", "")).endswith(INDEXER_CACHE_SUFFIXES):
            kind = "dsa_index"
        per = spec["page_size_bytes"] if kind in PER_REQUEST else spec["page_size_bytes"] / spec["block_size"]
        layers, seen = out.get(kind, (0, per))
        out[kind] = (layers + spec["layers"], seen if seen == per else -1.0)  # -1: layers of one kind differ
    return out


def _engine_windows(layer_specs: list[dict[str, Any]]) -> dict[str, tuple[int, ...]]:
    """kvtop pool name -> the windows (tokens) its layers' specs hold, sorted: SlidingWindowSpec's and
    SlidingWindowMLASpec's sliding_window, ChunkedLocalAttentionSpec's attention_chunk_size (vllm_readings.spec_row
    records both); a pool whose specs hold none is left out."""
    out: dict[str, set[int]] = {}
    for spec in layer_specs:
        window = spec.get("sliding_window") or spec.get("attention_chunk_size")
        if isinstance(window, int):
            out.setdefault(KV_KIND.get(spec["kind"].split("[")[0], spec["kind"]), set()).add(window)
    return {kind: tuple(sorted(windows)) for kind, windows in out.items()}


def window_differences(index: int, layer_specs: list[dict[str, Any]], kinds: set[str], plan: dict[str, Any]) -> list[str]:
    """Each windowed pool kvtop holds too whose engine specs hold another window than kvtop's (`spec_window`, the
    window vLLM's spec holds by kvtop's vLLM rules): a window's blocks a request enter vLLM's admission and capacity."""
    mine = plan.get("spec_window")
    return [f"stage {index} KV {kind} window (tokens): kvtop {mine}, engine {', '.join(map(str, theirs))}"
            for kind, theirs in sorted(_engine_windows(layer_specs).items()) if kind in kinds and theirs != (mine,)]


def _dsv4_roles(layer_specs: list[dict[str, Any]]) -> dict[str, int]:
    """DeepSeek-V4's specs on vLLM by role (the layer's module after `attn`: swa_cache, compressor.state_cache,
    indexer.k_cache, ...; the compressed latent itself is `attn`), type, tokens a block, page bytes and window (a
    windowed spec's) -> layers:
    its kinds mix page sizes and blocks, which _engine_kv's pool-by-kind view folds together."""
    out: dict[str, int] = {}
    for spec in layer_specs:
        role = str(spec["first"]).split(".attn", 1)[1].lstrip(".") or "attn"
        window = spec.get("sliding_window")
        key = f"{role} {spec['kind']} block {spec['block_size']} page {spec['page_size_bytes']}" + (
            f" window {window}" if window else "")
        out[key] = out.get(key, 0) + spec["layers"]
    return out


def _kvtop_kv(pools: list[dict[str, Any]], engine: str, plan: dict[str, Any]) -> dict[str, tuple[int, float]]:
    """kvtop's pools of one rank in the engine's terms (pool name -> layers, bytes per layer per token; per
    request for state). For vLLM, as kvtop's vLLM budget lays them out: a config whose sliding_window covers
    every layer (no sliding pool of its own) is one windowed group (engines/vllm/budget.py, vllm.md §3.4), so
    the pool kvtop names full compares with the engine's SlidingWindowSpec layers; a hybrid's Mamba page is
    kvtop's attention page of one layer, block × bytes per layer per token (HybridBlocks.page_bytes,
    engines/vllm/hybrid.py, vllm.md §4.4), as vLLM's MambaSpec.page_size_bytes is the state padded to it."""
    by_name = {pool["name"]: pool for pool in pools}
    out: dict[str, tuple[int, float]] = {}
    for name, pool in by_name.items():
        if name == "state":
            per_request = pool["bytes_per_request"] / max(pool["layers"], 1)
            full = by_name.get("full")
            if engine == "vllm" and full is not None and plan.get("block_size"):
                per_request = float(plan["block_size"] * int(full["bytes_per_layer_token"]))
            out["state"] = (pool["layers"], per_request)
        elif name == "ring":
            out["ring"] = (pool["layers"], pool["bytes_per_request"] / max(pool["layers"], 1))
        elif name == "full" and engine == "vllm" and plan.get("config_sliding_window") and "swa" not in by_name:
            out["swa"] = (pool["layers"], pool["bytes_per_layer_token"])
        else:
            out[name] = (pool["layers"], pool["bytes_per_layer_token"])
    return out


def stage_checks(result: dict[str, Any], engine: str, version: str, plan: dict[str, Any]) -> list[StageCheck]:
    """Each stage of one engine run against kvtop's rank of the same stage."""
    layout = f"TP{result['tp']}" + (f"×PP{result.get('pp', 1)}" if result.get("pp", 1) > 1 else "")
    if result.get("variant", "default") == "ep":
        layout += "+EP"
    checks = []
    for index, stage in enumerate(result.get("stages") or []):
        ours = next((s for s in plan["stages"] if s["pp_rank"] == index), None)
        language, towers = _language_bytes(stage["param_bytes"])
        differences: list[str] = []
        if ours is None:
            differences.append(f"stage {index}: kvtop has no rank for it")
        else:
            vision = int(ours.get("vision_bytes", 0))  # kvtop's tower row, compared with the engine's towers
            if ours["weights_bytes"] - vision != language:
                differences.append(
                    f"stage {index} weights: kvtop {ours['weights_bytes'] - vision:,} B, engine {language:,} B "
                    f"({ours['weights_bytes'] - vision - language:+,})"
                )
            if vision and vision != towers:
                differences.append(f"stage {index} towers: kvtop {vision:,} B, engine {towers:,} B ({vision - towers:+,})")
            if vision:
                towers = 0  # held in kvtop's book: not reported beside
            if "layer_specs" in stage and plan.get("dsv4_specs"):  # DeepSeek-V4 on vLLM: spec by spec
                roles, mine = _dsv4_roles(stage["layer_specs"]), plan["dsv4_specs"]
                for key in sorted(set(roles) | set(mine)):
                    if roles.get(key) != mine.get(key):
                        differences.append(f"stage {index} KV {key} (layers): kvtop {mine.get(key)}, engine {roles.get(key)}")
            elif "layer_specs" in stage:
                theirs, mine = _engine_kv(stage["layer_specs"]), _kvtop_kv(ours["kv_pools"], engine, plan)
                for kind in sorted(set(theirs) | set(mine)):
                    if theirs.get(kind) != mine.get(kind):
                        differences.append(
                            f"stage {index} KV {kind} (layers, B/layer/token): kvtop {mine.get(kind)}, engine {theirs.get(kind)}"
                        )
                differences += window_differences(index, stage["layer_specs"], set(mine), plan)
        span = (int(ours["layers"][0]), int(ours["layers"][1])) if ours is not None else (0, 0)
        checks.append(StageCheck(engine, version, result["config"], layout, tuple(differences), towers, index, span,
                                 str(result.get("gpu", ""))))  # fmt: skip
    return checks


def architecture_rows(table: list[Row]) -> dict[str, dict[str, Any]]:
    """architecture -> {configs, layouts, equal, different (first differences), not modelled, towers}."""
    out: dict[str, dict[str, Any]] = {}
    for fixture in load_fixtures():
        engine, version = fixture["engine"], fixture["version"]
        for result in fixture["results"]:
            if result.get("kv_dtype") not in ("auto",) or result.get("variant", "default") not in ("default", "pp2", "pp4", "ep"):
                continue
            if result.get("gpu") != "sm90":
                continue
            entry = out.setdefault(
                architecture(result["config"]),
                {"configs": set(), "layouts": set(), "equal": 0, "different": [], "refused": [], "towers": 0,
                 "engines": set(), "not_run": 0, "engine_refused": 0},
            )  # fmt: skip
            entry["configs"].add(result["config"])
            if result["status"] != "ok" or "stages" not in result:
                entry["engine_refused" if result["status"] == "refused" else "not_run"] += 1
                continue
            plan = kvtop_plan(engine, version, result)
            if plan["status"] != "ok":
                entry["refused"].append(plan["message"])
                continue
            for check in stage_checks(result, engine, version, plan):
                entry["layouts"].add(check.layout)
                entry["engines"].add(f"{engine} {version}")
                entry["towers"] = max(entry["towers"], check.towers_bytes)
                if check.differences:
                    entry["different"].append(check)
                else:
                    entry["equal"] += 1
    return out


def render_architectures(table: list[Row]) -> list[str]:
    lines = [
        "",
        "## Architectures: the engines' own model classes against kvtop's books",
        "",
        "Each stage of each run built on meta (sm90, KV auto, the default grid's TP sizes and the PP/EP flag sets):",
        "the language model's parameter bytes per rank against kvtop's weights book, and (vLLM) each layer's KV",
        "cache spec against kvtop's KV pools; where kvtop's weights book holds the vision tower (its vision row),",
        "that row against the engine's tower and projector bytes. Towers: the largest vision/audio tower and",
        "projector bytes of one rank where kvtop's book does not hold them (its `not_modelled`). Readings: the",
        "A-rules below.",
        "",
        "| architecture | configs | engines | layouts | stages equal | stages different (by reading) | verdict | first difference |",
        "|---|---|---|---|---|---|---|---|",
    ]
    used: dict[str, str] = {}
    for arch, entry in sorted(architecture_rows(table).items()):
        different: list[StageCheck] = entry["different"]
        by_reading: dict[str, int] = {}
        for check in different:
            for rule in {arch_reading(arch, check, text) for text in check.differences}:
                rule_id, _, text = rule.partition(" ")
                used[rule_id] = text
                by_reading[rule_id] = by_reading.get(rule_id, 0) + 1
        if entry["equal"] == 0 and not different:
            if entry["refused"]:
                verdict, detail = "not modelled", "kvtop refuses: " + entry["refused"][0]
            elif entry["engine_refused"]:
                verdict, detail = "engine refuses", "every engine run of it refused the launch (see the rows)"
            else:
                verdict, detail = "not run", "no engine run built it (see the rows: harness errors)"
        else:
            verdict = "different" if different else "equal"
            detail = ""
            if different:
                first = different[0]
                detail = f"{first.engine} {first.version} {first.config} {first.layout}: {first.differences[0]}"
        if entry["towers"]:
            detail = (detail + "; " if detail else "") + f"towers {entry['towers']:,} B not in kvtop's book"
        readings = ", ".join(f"{rule_id} {n}" for rule_id, n in sorted(by_reading.items())) or "0"
        lines.append(
            f"| {arch} | {', '.join(sorted(entry['configs']))} | {', '.join(sorted(entry['engines'])) or '–'} | "
            f"{', '.join(sorted(entry['layouts'])) or '–'} | {entry['equal']} | {readings} | {verdict} | "
            f"{clip(detail)} |"
        )
    lines += ["", "| id | reading of an architecture difference |", "|---|---|"]
    lines += [f"| {rule_id} | {text} |" for rule_id, text in sorted(used.items())]
    return lines
