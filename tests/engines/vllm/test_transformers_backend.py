"""GPTBigCode on vLLM 0.33.0's Transformers backend (engines/vllm/transformers_backend.py): its MLP replicated
(`EngineRules.mlp_split`, one shard).

Expected figures: vLLM 0.33.0's TransformersForCausalLM of tests/data/configs/heldout/mlc--gpt_bigcode.json built on
the meta device by engine-diff's registry sweep (sm90, KV auto; `registry_sweep.py --engine vllm --params
mlc--gpt_bigcode --tps 2`): the rank's `model` 2,249,773,056 B at TP 1 and 1,947,471,872 B at TP 2
(tests/data/engine_diff/registry/vllm-0.33.0.json), with model.h.N.mlp.c_fc.weight [8192, 2048] and
c_proj.weight [2048, 8192] whole at TP 2 and c_attn.weight [1280, 2048] split (16 ÷ 2 query heads of 128, the one
KV head whole). Never kvtop's own figures.
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.engines.vllm import architectures as vllm_architectures
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.conftest import CONFIGS
from tests.data_paths import DATA

CONFIG = CONFIGS / "heldout" / "mlc--gpt_bigcode.json"


def _engine_bytes(tp: int) -> int:
    rows = json.loads((DATA / "engine_diff" / "registry" / "vllm-0.33.0.json").read_text())["rows"]
    row = next(r for r in rows if r["config"] == "mlc--gpt_bigcode" and r["tp"] == tp)
    return int(sum(row["stages"][0]["param_bytes"].values()))


def _book(tp: int, release: str) -> tuple[int, int]:
    """(the rank's bytes, its MLP row's shards) at `tp` as vLLM `release` builds GPTBigCode."""
    model = model_from_config(json.loads(CONFIG.read_text()), source=str(CONFIG))
    version = ResolvedVersion(text=release, source=VersionSource.FLAG)
    rules = engine_rules("vllm")
    settings = LaunchSettings(engine="vllm", tp=tp, engine_version=release)
    layout = ParallelLayout(tp=tp, mlp_split=rules.mlp_split(model, settings, version))  # the ledger's seam
    book = weights_book(model, layout, range(model.num_layers), first_stage=True, last_stage=True,
                        tower_split=vllm_architectures.TOWER_SPLIT, parts=rules.stage_parts(model, 0, 1, version))  # fmt: skip
    (mlp,) = [row for row in book.rows if row.component == "mlp"]
    return book.total_bytes, mlp.shards


@pytest.mark.parametrize("tp", [1, 2])
def test_rank_equals_the_engines_meta_build(tp: int) -> None:
    assert _book(tp, "0.33.0") == (_engine_bytes(tp), 1)


def test_mlp_whole_is_the_difference_at_tp2() -> None:
    """The MLP's other half at TP 2, by the meta-built shapes: 24 layers × (c_fc [8192, 2048] and its bias
    [8192], c_proj [2048, 8192]) ÷ 2 × 2 B = 805,502,976 B more than v0.13.0's own class (GPTBigMLP: Column and
    Row parallel), which splits it."""
    ours, split_shards = _book(2, "0.13.0")
    assert split_shards == 2
    assert _book(2, "0.33.0")[0] - ours == 24 * (8192 * 2048 + 8192 + 2048 * 8192) // 2 * 2


def test_the_replicated_mlp_is_the_one_mlp_split_seam() -> None:
    """The answer is `EngineRules.mlp_split` (one shard, its words on the row), the seam TurboMind's EP answers,
    not a stage part: v0.33.0 replicates, v0.13.0's own class splits over TP."""
    model = model_from_config(json.loads(CONFIG.read_text()), source=str(CONFIG))
    rules = engine_rules("vllm")
    split = {r: rules.mlp_split(model, LaunchSettings(engine="vllm", tp=2, engine_version=r),
                                ResolvedVersion(text=r, source=VersionSource.FLAG)) for r in ("0.13.0", "0.33.0")}  # fmt: skip
    assert split["0.13.0"].dense_shards is None
    assert split["0.33.0"].dense_shards == 1 and "Transformers backend" in split["0.33.0"].note
