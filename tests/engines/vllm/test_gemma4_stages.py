"""vLLM 0.33.0's Gemma-4 stages: what gemma4.py builds that the checkpoint's book does not (pp_parts.py, and
architectures.TOWER_SPLIT's V beside K).

Expected bytes are the arithmetic of the parameter shapes vLLM 0.33.0 builds on the meta device for
google--gemma-4-26B-A4B (benchmarks/engine_diff/param_shapes.py --engine vllm --configs google--gemma-4-26B-A4B,
variants ep / pp2 at TP 2 and pp4 at TP 1), all bfloat16, per rank of TP:
- every layer: input/post_attention/pre_feedforward/post_feedforward layernorms, router.scale,
  post_feedforward_layernorm_1/_2, pre_feedforward_layernorm_2 [2816] (8 vectors); router.per_expert_scale [128];
  router.proj [128, 2816]; mlp.gate_up_proj [4224/tp, 2816]; mlp.down_proj [2816, 2112/tp];
  experts w13 [128, 1408, 2816] and w2 [128, 2816, 704] over tp (or whole experts over EP: the same bytes);
- sliding layers: qkv_proj [(4096 + 2 × 2048)/tp, 2816], o_proj [2816, 4096/tp], q_norm and k_norm [256];
- full layers (every sixth, attention_k_eq_v): qkv_proj [(8192 + 2 × 1024)/tp, 2816] — V built beside K —,
  o_proj [2816, 8192/tp], q_norm and k_norm [512];
- on every stage (gemma4.py Gemma4Model: no is_first_rank / is_last_rank guard): embed_tokens [262144/tp, 2816]
  and norm [2816]; the LM head is tied to the stage's embedding.
The committed engine run (tests/data/engine_diff/vllm-0.33.0.flags.json, `language_model`) holds the same bytes.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks.engine_diff.kvtop_side import kvtop_plan
from kvtop.domain.engines.vllm.architectures import TOWER_SPLIT as VLLM_BUILD
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.data_paths import DATA

CONFIG = "google--gemma-4-26B-A4B"
H, BF16 = 2_816, 2


def _layer(full: bool, tp: int) -> int:
    """One decoder layer's bytes per rank, from vLLM's meta-built shapes (module docstring)."""
    head = 512 if full else 256
    q, kv = 16 * head, (2 if full else 8) * head
    attention = (q + 2 * kv) // tp * H + H * q // tp + 2 * head
    rest = 4_224 // tp * H + H * 2_112 // tp + 8 * H + 128 + 128 * H + (128 * 1_408 * H + 128 * H * 704) // tp
    return (attention + rest) * BF16


def _stage(layers: range, tp: int) -> int:
    """A stage's language model: its layers (every sixth full) plus embed_tokens and norm."""
    return sum(_layer(i % 6 == 5, tp) for i in layers) + (262_144 // tp * H + H) * BF16


def _row(variant: str) -> dict[str, Any]:
    rows = json.loads((DATA / "engine_diff" / "vllm-0.33.0.flags.json").read_text())["results"]
    return next(
        r for r in rows if r["config"] == CONFIG and r.get("variant") == variant and r["kv_dtype"] == "auto"
    )


@pytest.mark.parametrize(
    ("variant", "stages"),
    [
        # TP2+EP, one stage: was 25,244,655,616 B in kvtop (−14,417,920 = 5 full layers' V, 512 × 2,816 × 2 B)
        ("ep", [_stage(range(30), 2)]),
        # TP2×PP2: layers 0–14 and 15–29, embed_tokens and norm on both (kvtop was −5,772,800 and −8,650,752)
        ("pp2", [_stage(range(15), 2), _stage(range(15, 30), 2)]),
        # TP1×PP4: layers 7, 8, 8, 7 (kvtop's middle stages were −1,482,167,808: the embedding and norm)
        ("pp4", [_stage(range(7), 1), _stage(range(7, 15), 1), _stage(range(15, 23), 1), _stage(range(23, 30), 1)]),
    ],
)  # fmt: skip
def test_gemma4_stages_hold_what_vllm_builds(variant: str, stages: list[int]) -> None:
    row = _row(variant)
    assert [s["param_bytes"]["language_model"] for s in row["stages"]] == stages  # the committed engine run
    plan = kvtop_plan("vllm", "0.33.0", row)
    assert [
        s["weights_bytes"] - s["vision_bytes"] for s in sorted(plan["stages"], key=lambda s: s["pp_rank"])
    ] == stages


def test_vllm_gemma4_full_layers_build_v_beside_k() -> None:
    """TP 1: a full layer's qkv_proj is [10240, 2816] (8,192 q + 1,024 k + 1,024 v), not the checkpoint's
    q_proj + k_proj [9216, 2816]; with o_proj [2816, 8192] and the sliding layers' [8192, 2816] and [2816, 4096]."""
    m = model_from_config(
        json.loads((DATA / "engine_diff" / "configs" / f"{CONFIG}.json").read_text()), source=CONFIG
    )
    b = weights_book(
        m, ParallelLayout(), range(30), first_stage=True, last_stage=True, tower_split=VLLM_BUILD
    )
    attention = next(r.bytes for r in b.rows if r.component == "attention")
    assert attention == (5 * (10_240 + 8_192) + 25 * (8_192 + 4_096)) * H * BF16 == 2_249_195_520
    # the book without vLLM's build counts the checkpoint's q_proj [8192, 2816] and k_proj [1024, 2816] only
    plain = weights_book(m, ParallelLayout(), range(30), first_stage=True, last_stage=True)
    assert next(r.bytes for r in plain.rows if r.component == "attention") == attention - 5 * 1_024 * H * BF16
