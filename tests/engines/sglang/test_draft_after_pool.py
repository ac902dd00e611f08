"""SGLang's MTP draft before 0.5.14: built after the target's pool (engines/sglang/draft_load.py; docs/engines/sglang.md
§19.1). The 0.5.13 wheel sizes the target's pool in its own ModelRunner (model_runner.py:784 init_memory_pool) before
managers/scheduler.py init_model_worker calls maybe_init_draft_worker (:816-818); the draft's TpModelWorker reuses the
target's memory_pool_config (speculative/eagle_worker_v2.py:171-185) and only then swaps in the target's embedding and
head (init_lm_head, :197). So its MTP layer, its own embedding and LM head and its own KV pool all come out of what the
target's pool leaves: after-pool terms the headroom counts, none in the weights the pool is sized after."""

from __future__ import annotations

import json

from kvtop.domain.deployment import Charge, Feature
from kvtop.domain.diagnose_findings import Thresholds
from kvtop.domain.diagnose_headroom import headroom_short
from kvtop.domain.headroom import HeadroomReserve, after_pool_short_bytes, headroom_of
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.whatif import Replay
from tests.conftest import CONFIGS

H200 = 143771 << 20  # nvidia-smi's total (tests/data/samples/nvidia_smi)
# DeepSeek-V3 (config.json): hidden 7,168, vocab 129,280, MLA kv_lora_rank 512 + qk_rope_head_dim 64 (bf16 KV),
# one next-n layer; TP 8, the FP8 checkpoint's 128 × 128 blocks with a float32 weight_scale_inv each
TP, HIDDEN, VOCAB = 8, 7168, 129_280
EMBED_ROWS = VOCAB * HIDDEN * 2 // TP  # VocabParallelEmbedding / ParallelLMHead, bf16: 231,669,760 B a rank
LATENT = (512 + 64) * 2  # one MLA layer's row a token


def _dsv3() -> ModelSpec:
    return model_from_config(json.loads((CONFIGS / "deepseek-ai--DeepSeek-V3.json").read_text()), source="dsv3")


def _plan(version: str, *more: str) -> Ledger:
    flags = ["--tp-size", str(TP), "--speculative-algorithm", "EAGLE", "--engine-version", version, *more]
    return predict(_dsv3(), parse_flags("sglang", flags, strict=True), gpu_total_bytes=H200, gpu_name="H200")


def _spec(ledger: Ledger) -> dict[str, tuple[Charge, int]]:
    return {t.label: (t.charge, t.bytes) for t in ledger.ranks[0].terms if t.feature is Feature.SPECULATIVE}


def _fp8(rows: int, cols: int) -> int:
    """An FP8 block-quantized matrix on the rank: its bytes and its float32 scale per 128 × 128 block."""
    return rows * cols + -(-rows // 128) * -(-cols // 128) * 4


def _mtp_layer_bytes() -> int:
    """deepseek_nextn.py's layer on one TP-8 rank, from the config: MLA (the fused q_a/kv_a replicated, q_b, kv_b and
    o split over TP), the MoE (bf16 gate 256 × hidden and its fp32 bias, 256 experts and the shared expert at
    2,048 ÷ 8 rows), the decoder's two norms, enorm, hnorm and shared_head.norm, and eh_proj: an nn.Linear of
    2 × hidden → hidden the quant config does not reach (bf16)."""
    attn = (_fp8(1536 + 512 + 64, HIDDEN) + _fp8(128 * 192 // TP, 1536) + _fp8(128 * 256 // TP, 512)
            + _fp8(HIDDEN, 128 * 128 // TP) + (1536 + 512) * 2)  # fmt: skip
    expert = _fp8(2 * 2048 // TP, HIDDEN) + _fp8(HIDDEN, 2048 // TP)
    moe = 256 * HIDDEN * 2 + 256 * 4 + 257 * expert
    return attn + moe + 5 * HIDDEN * 2 + 2 * HIDDEN * HIDDEN * 2


def test_the_mtp_layer_leaves_the_weights_at_0_5_13_for_an_after_pool_term_and_stays_in_them_at_0_5_14() -> None:
    old, new = _plan("0.5.13"), _plan("0.5.14")
    book = {row.component: row.bytes for row in new.ranks[0].weights.rows}
    assert "mtp" not in {row.component for row in old.ranks[0].weights.rows}
    assert new.ranks[0].weights.total_bytes - old.ranks[0].weights.total_bytes == book["mtp"]
    assert _spec(old)["draft weights: 1 MTP layer, loaded after the pool"] == (Charge.AFTER_POOL, book["mtp"])
    assert _spec(new)["draft weights: 1 MTP layer, in the weights book"] == (Charge.WEIGHTS, book["mtp"])
    # the 0.5.13 pool is sized before the draft exists (model_runner.py:784, then scheduler.py:816-818): at the
    # automatic fraction written out, the target launched without a draft sizes the same cell and the same pool
    assert old.kv_bytes_per_token == 61 * LATENT
    fraction = f"{old.engine.memory_fraction:g}"
    flags = ["--tp-size", str(TP), "--mem-fraction-static", fraction, "--engine-version", "0.5.13"]
    alone = predict(_dsv3(), parse_flags("sglang", flags, strict=True), gpu_total_bytes=H200, gpu_name="H200")
    assert (old.kv_bytes_per_token, old.token_capacity) == (alone.kv_bytes_per_token, alone.token_capacity)


def test_the_drafts_own_embedding_head_and_kv_pool_come_after_the_target_pool_at_0_5_13() -> None:
    old = _plan("0.5.13")
    spec = _spec(old)
    own = "draft's own embedding and LM head (after the pool, freed once the draft's pool is allocated)"
    assert spec[own] == (Charge.AFTER_POOL, 2 * EMBED_ROWS)
    # the draft's pool: the target's max_total_num_tokens (its memory_pool_config) and a page, one latent layer
    pool = spec["draft's own KV pool: the target's tokens × 1 draft layer"]
    assert pool == (Charge.AFTER_POOL, (old.token_capacity + 1) * LATENT)
    headroom = headroom_of(old)
    assert headroom is not None
    assert {n.label for n in headroom.needs} >= {own, "draft weights: 1 MTP layer, loaded after the pool",
                                                  "draft's own KV pool: the target's tokens × 1 draft layer"}  # fmt: skip


def test_the_mtp_layers_bytes_are_the_configs_arithmetic() -> None:
    assert _mtp_layer_bytes() == 1_661_047_968  # 102,749,696 B more than the book held with eh_proj in FP8, 4 norms
    assert _spec(_plan("0.5.13"))["draft weights: 1 MTP layer, loaded after the pool"][1] == _mtp_layer_bytes()
    assert {row.component: row.bytes for row in _plan("0.5.14").ranks[0].weights.rows}["mtp"] == _mtp_layer_bytes()


GIB = 1 << 30
DRAFT_RESERVE = "reserve for the draft and its CUDA graphs"


def _draft_after_pool(ledger: Ledger) -> int:
    """The draft's after-pool terms from the config: its MTP layer, its own embedding and head, its own pool."""
    return _mtp_layer_bytes() + 2 * EMBED_ROWS + (ledger.token_capacity + 1) * LATENT


def test_the_drafts_after_pool_terms_count_against_its_4_gib_reserve_at_0_5_13() -> None:
    """server_args.py 0.5.10rc0–0.5.13: the automatic fraction keeps 4 × 1024 MiB more for an EAGLE-style draft,
    for exactly what the draft worker allocates after the target's pool: 1.66 + 0.46 + 0.71 GB fit in it."""
    old = _plan("0.5.13")
    headroom = headroom_of(old)
    assert headroom is not None
    assert _draft_after_pool(old) == 2_833_998_752 < 4 * GIB
    assert headroom.reserves == (HeadroomReserve(label=DRAFT_RESERVE, bytes=4 * GIB, feature=Feature.SPECULATIVE),)
    assert headroom.held_bytes(headroom.reserves[0]) == _draft_after_pool(old)
    # the engine's own need is the automatic reserve less the draft's: nothing left to warn of
    assert headroom.needs[0].bytes == headroom.left_bytes - 4 * GIB
    assert headroom.needed_bytes == headroom.left_bytes
    assert headroom.short_bytes == after_pool_short_bytes(old) == 0
    assert headroom_short(old, Replay(old), Thresholds()) is None


def test_the_draft_still_warns_where_its_after_pool_terms_overrun_the_2_gib_reserve_of_0_5_1() -> None:
    """server_args.py 0.4.7.post1–0.5.1: 2 × 1024 MiB for any speculative draft: the same three terms overrun it."""
    old = _plan("0.5.1")
    headroom = headroom_of(old)
    assert headroom is not None and headroom.reserves == (HeadroomReserve(label=DRAFT_RESERVE, bytes=2 * GIB, feature=Feature.SPECULATIVE),)
    short = _draft_after_pool(old) - 2 * GIB
    assert short == 720_867_744
    assert headroom.short_bytes == after_pool_short_bytes(old) == short
    finding = headroom_short(old, Replay(old), Thresholds())
    assert finding is not None and finding.bytes == short


def test_the_automatic_fraction_written_out_reads_the_same_headroom_at_0_5_13_and_0_5_1() -> None:
    """A given --mem-fraction-static emits no draft reserve term, but the reserve SGLang's automatic rule would keep
    (`reserve_needed_bytes`) holds the draft's share all the same: writing the automatic value out (0.858 at 0.5.13 on
    an H200, (143,771 − 20,480 MiB, 4,096 of it the EAGLE draft) ÷ 143,771; 0.872 at 0.5.1, 2,048 of 18,432 MiB) reads
    one headroom, split alike: the engine's own need less the era's draft share, the draft's terms in that share; 0.5.13
    fits (2,833,998,752 B in 4 GiB), 0.5.1 still warns (720,867,744 B over 2 GiB) either way."""
    for version, share, fraction in (("0.5.13", 4 * GIB, 0.858), ("0.5.1", 2 * GIB, 0.872)):
        auto = _plan(version)
        assert auto.engine.memory_fraction == round((143771 - (20480 if share == 4 * GIB else 18432)) / 143771, 3)
        assert auto.engine.memory_fraction == fraction
        given = _plan(version, "--mem-fraction-static", f"{auto.engine.memory_fraction:g}")
        assert given.engine.reserve_bytes == auto.engine.reserve_bytes == given.engine.reserve_needed_bytes
        assert DRAFT_RESERVE not in _spec(given)  # no reserve term: the given share keeps none of its own
        a, g = headroom_of(auto), headroom_of(given)
        assert a is not None and g is not None
        assert g.reserves == a.reserves == (HeadroomReserve(label=DRAFT_RESERVE, bytes=share, feature=Feature.SPECULATIVE),)
        assert g.needs[0].bytes == a.needs[0].bytes == g.left_bytes - share
        assert g.held_bytes(g.reserves[0]) == a.held_bytes(a.reserves[0]) == _draft_after_pool(given)
        assert g.short_bytes == a.short_bytes == after_pool_short_bytes(given) == max(0, _draft_after_pool(given) - share)
        assert (headroom_short(given, Replay(given), Thresholds()) is None) == (version == "0.5.13")


DRAFT_GRAPHS = "the draft's CUDA graphs (draft decode and draft extend)"


def test_the_drafts_cuda_graphs_are_a_named_unpriced_need_held_by_the_reserve_only_where_one_is_kept() -> None:
    """speculative/eagle_worker_v2.py captures the draft-decode and draft-extend graphs after the pools (0.5.14
    :371-376, 0.5.23 :476-658): kvtop does not price them, so the headroom names them rather than counting 0 bytes.
    At 0.5.13 they count against the 4 GiB draft reserve (server_args.py); from 0.5.14 no reserve is kept
    (arg_groups/memory_hook.py), so they stand on their own. `--disable-cuda-graph` captures none."""
    for version, held in (("0.5.13", Feature.SPECULATIVE), ("0.5.14", None), ("0.5.23", None)):
        headroom = headroom_of(_plan(version))
        assert headroom is not None
        need = next(n for n in headroom.needs if n.label == DRAFT_GRAPHS)
        assert (need.bytes, need.held_by) == (None, held)
        assert DRAFT_GRAPHS in headroom.unpriced
    off = headroom_of(_plan("0.5.23", "--disable-cuda-graph"))
    assert off is not None and DRAFT_GRAPHS not in off.unpriced
