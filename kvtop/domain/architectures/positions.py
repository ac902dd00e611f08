"""Which classes place tokens by ALiBi (a bias per head on the attention scores) rather than by a rotary embedding:
their engines build no rope, so no cos/sin cache sits beside their weights (`kvtop.domain.rope_cache`).

Read from vLLM's model files (v0.13.0 and v0.33.0; SGLang's ports build the same attention): bloom.py
(`_get_alibi_slopes`, no `get_rope`), mpt.py (`alibi_slopes`), step1.py (Step1Attention: `Attention(use_alibi_sqrt=
True)`, no `get_rope`; v0.33.0 only) and baichuan.py, where `BaichuanForCausalLM` takes ALiBi unless its hidden size
is 4,096 (Baichuan-13B and Baichuan2-13B: ALiBi; Baichuan2-7B: rope) and `BaiChuanForCausalLM` (Baichuan-7B) rope.
Falcon's `alibi` config flag is not read (ModelSpec does not carry it; its released checkpoints are rotary).
"""

from __future__ import annotations

from kvtop.domain.model import ModelSpec

ALIBI_CLASSES = frozenset({"BloomForCausalLM", "MPTForCausalLM", "MptForCausalLM", "Step1ForCausalLM"})
# classes that take ALiBi unless their hidden size is the one named (baichuan.py: 4096, Baichuan2-7B's rope)
ALIBI_UNLESS_HIDDEN = {"BaichuanForCausalLM": 4096}


def alibi_positions(model: ModelSpec) -> bool:
    """True where `model`'s class places tokens by ALiBi (no rotary embedding, no cos/sin cache)."""
    rope_hidden = ALIBI_UNLESS_HIDDEN.get(model.architecture)
    return model.architecture in ALIBI_CLASSES or (rope_hidden is not None and model.hidden_size != rope_hidden)
