"""A speculative-decoding draft's config as the served model: refused with the reason, still read as a draft.

The Eagle-3 drafts (tests/data/configs/drafts: `LlamaForCausalLMEagle3`, model_type llama, one layer) are
refused served alone by vLLM 0.33.0 (the registry sweep's rows, tests/data/engine_diff/registry: "engine
refuses: AssertionError" at TP 1 and 2); kvtop had planned them as plain Llama.
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model_config import model_from_config
from tests.conftest import CONFIGS

H100 = 80 * 1024**3


def test_an_eagle3_draft_is_not_planned_as_the_served_model() -> None:
    name = "drafts/sgl-project--SpecForge-llama3-70B-eagle3.json"
    draft = model_from_config(json.loads((CONFIGS / name).read_text()), source=name)
    with pytest.raises(UnsupportedModelError, match=r"^architectures: LlamaForCausalLMEagle3 .*speculative-decoding"):
        predict(draft, parse_flags("vllm", []), gpu_total_bytes=H100)


def test_an_eagle3_draft_is_still_read_as_the_draft_of_a_launch() -> None:
    target = model_from_config(json.loads((CONFIGS / "meta-llama--Llama-3.1-70B-Instruct.json").read_text()), source="t")
    name = "drafts/sgl-project--SpecForge-llama3-70B-eagle3.json"
    draft = model_from_config(json.loads((CONFIGS / name).read_text()), source=name)
    flags = ["--tp-size", "8", "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "/d/eagle3"]
    ledger = predict(target, parse_flags("sglang", flags), gpu_total_bytes=H100, gpu_name="H100", draft=draft)
    assert ledger.kv_bytes_per_token == int(40_960 * (1 + 1 / 80))  # the draft's one layer beside the target's 80


@pytest.mark.parametrize(
    ("name", "tp", "engine_bytes"),
    [  # SGLang 0.5.23's LlamaForCausalLMEagle3 built on the meta device by the registry sweep (`registry_sweep.py
       # --engine sglang --params <config> --tps N`): the llama3-70B head at TP 1 is embed_tokens [128256, 8192],
       # fc [8192, 24576], qkv_proj [10240, 16384], o_proj [8192, 8192], gate_up_proj [57344, 8192], down_proj
       # [8192, 28672], input/post_attention/hidden norms and norm [8192], lm_head [32000, 8192], fp16: 4,907,401,216 B;
       # at TP 2 the embedding, qkv (5120 rows), o, MLP and lm_head (16000 rows) halve, fc stays whole
       ("sgl-project--SpecForge-llama3-70B-eagle3", 1, 4_907_401_216),
       ("sgl-project--SpecForge-llama3-70B-eagle3", 2, 2_655_059_968),
       # the qwen3-235B head (hidden 4096, 64 heads, 4 KV heads, vocab 151,936, draft vocab 32,000, 3 aux states)
       ("sgl-project--SpecForge-qwen3-235B-A22B-eagle3", 1, 2_429_583_360),
       ("sgl-project--SpecForge-qwen3-235B-A22B-eagle3", 2, 1_265_139_712),
    ],
)  # fmt: skip
def test_sglang_holds_an_eagle3_head_as_its_class_builds_it(name: str, tp: int, engine_bytes: int) -> None:
    """kvtop's draft weights term, planned beside the head's target, against the class SGLang built alone."""
    target = "meta-llama--Llama-3.1-70B-Instruct.json" if "llama3" in name else "Qwen--Qwen3-235B-A22B.json"
    served = model_from_config(json.loads((CONFIGS / target).read_text()), source="t")
    path = f"drafts/{name}.json"
    draft = model_from_config(json.loads((CONFIGS / path).read_text()), source=path)
    assert draft.eagle3 is not None and draft.eagle3.draft_vocab_size == 32_000 and draft.eagle3.aux_states == 3
    flags = ["--tp-size", str(tp), "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "/d"]
    ledger = predict(served, parse_flags("sglang", flags), gpu_total_bytes=8 * H100, gpu_name="H100", draft=draft)
    term = next(t for t in ledger.ranks[0].terms if t.label.startswith("draft weights"))
    assert term.bytes == engine_bytes and term.basis.value == "computed"


def test_sglang_0_5_6_post2_builds_one_midlayer() -> None:
    """0.5.6.post2's llama_eagle3.py builds one `midlayer` and an fc of hidden_size_in × 3: a one-layer head with
    three aux states has the same shapes as under 0.5.23 (the llama3-70B head: 4,907,401,216 B at TP 1, the
    0.5.23 meta build); a head of two layers is read as a plain decoder there (assumed)."""
    target = model_from_config(json.loads((CONFIGS / "meta-llama--Llama-3.1-70B-Instruct.json").read_text()))
    path = CONFIGS / "drafts" / "sgl-project--SpecForge-llama3-70B-eagle3.json"
    head = json.loads(path.read_text())
    flags = ["--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "/d", "--engine-version",
             "0.5.6.post2"]  # fmt: skip

    def draft_term(config: dict):
        ledger = predict(target, parse_flags("sglang", flags), gpu_total_bytes=8 * H100, gpu_name="H100",
                         draft=model_from_config(config))  # fmt: skip
        return next(t for t in ledger.ranks[0].terms if t.label.startswith("draft weights"))

    assert draft_term(head).bytes == 4_907_401_216
    assert draft_term({**head, "num_hidden_layers": 2}).basis.value == "assumed"
