"""The compile's figure beside a multimodal model's V2 profile is charged above the peak the profile already holds
(`encoder_compile.multimodal_profile_peak`, `v2_graphs.compile_above_peak`; session 69).

V2's `profile_run` (v1/worker/gpu/model_runner.py:790-828 at v0.28.0, the same code at :851-883 at v0.29.0 and :938-970
at v0.30.0) runs the encoder
profile, keeps its outputs in the encoder cache, then compiles and runs the text model and its dummy sampler: the
compile's transient sits on what is kept, as the text run does, after the tower's forward. Expected figures are vLLM's
code's arithmetic by hand over the configs (Gemma-4-E2B: hidden 1,536, intermediate 6,144 doubled on the KV-shared
layers by `use_double_wide_mlp`, gemma4.py:590-600 at v0.28.0; Qwen3.5-4B's tower: width 1,024, MLP 4,096) and the
Qwen3.5-4B start's printed 'Actual usage' line, never the functions' output.
"""

from __future__ import annotations

from benchmarks.calibration.corpus import by_id
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.vllm import calibration as vllm
from kvtop.domain.engines.vllm.encoder_compile import multimodal_profile_peak
from kvtop.domain.engines.vllm.v2_graphs import profile_peak

E2B_T4 = "xbill9-gemma4-dev-gemma-4-e2b-it-t4-g4dn-v0280-fp16-u090"
E2B_L4 = "xbill9-sagemaker-gemma-gemma-4-e2b-it-l4-v0300-u090-len8192"
QWEN3_5_4B_L4 = "file69494016274-lab00-qwen3.5-4b-l4-v0290-len32768"
TEXT_ONLY_V2 = "hosseinbv-rag-qwen3-8b-h100-v0230-u03-v2runner"
GIB = 1 << 30
RECORDS = by_id()


def _terms(rid: str) -> dict[Term, int]:
    return {term.term: term.bytes for term in vllm.terms(RECORDS[rid].inputs())}


def test_gemma4_e2b_hides_the_compile_under_its_text_run() -> None:
    """Gemma-4 is not a family whose encoder kvtop counts, so the text run alone: V2's forward at 2,048 tokens (its
    default batch), the double-wide MLP's gate-up and activation outputs and the residual and normed input,
    2,048 × (3 × 12,288 + 1,536) × 2 B + 2 × 2,048 × 1,536 × 2 B = 169,869,312 B, above its dummy sampler at 8 and
    256 seqs (model-dtype logits of 262,144: 4 MiB and 128 MiB)."""
    forward = 2048 * (3 * 12288 + 1536) * 2 + 2 * 2048 * 1536 * 2
    for rid in (E2B_T4, E2B_L4):
        inputs = RECORDS[rid].inputs()
        found = multimodal_profile_peak(inputs)
        assert found is not None and found[0] == forward
        assert profile_peak(inputs) == forward


def test_qwen3_5_4b_hides_the_compile_under_its_towers_forward() -> None:
    """One 4,096² image at v0.29.0, TP 1: the tower's forward (fc1's step 3 × 1,024 + 2 × 4,096 = 11,264 widths and
    pos_embeds 1,024 over 65,536 patches, 2 B: 1,610,612,736, with the pixels 65,536 × 1,536 × 2 B = 201,326,592)
    less what is kept through the text run (outputs 16,384 × 2,560 × 2 B = 83,886,080 and the pixels): 1,526,726,656,
    above the text run."""
    found = multimodal_profile_peak(RECORDS[QWEN3_5_4B_L4].inputs())
    assert found is not None
    assert found[0] == 1_610_612_736 + 201_326_592 - (83_886_080 + 201_326_592)


def test_on_pipeline_stages_the_towers_forward_hides_nothing() -> None:
    """At PP 2 the activation term counts no encoder (`calibration_activation._sampler_floor`: PP 1 only), so the
    compile hides under V2's text run alone: the forward at 2,048 tokens, Qwen3.5-4B's gate-up and activation outputs
    and down output, 2,048 × (3 × 9,216 + 2,560) × 2 B, with the residual and normed input, 2 × 2,048 × 2,560 × 2 B:
    144,703,488 B, not the tower's 1,526,726,656 above."""
    inputs = RECORDS[QWEN3_5_4B_L4].inputs()
    staged = inputs.model_copy(update={"layout": inputs.layout.model_copy(update={"pp": 2})})
    found = multimodal_profile_peak(staged)
    assert found is not None
    assert found[0] == 2048 * (3 * 9216 + 2560) * 2 + 2 * 2048 * 2560 * 2


def test_qwen3_5_4b_charges_what_its_log_printed() -> None:
    """The start printed 'Actual usage is 9.01 GiB for consumed memory (weights + non-torch), 2.17 GiB for peak
    activation' at v0.29.0, whose peak activation holds the applied graph estimate (`peak_activation_memory =
    transient_peak_headroom + cudagraph_memory_estimate_applied`, v1/worker/gpu_worker.py). kvtop's activation and
    graph terms now sum to 1.96 GiB (the figure beside the profile hidden whole under the tower's forward), 0.21 under;
    they summed to 2.61 (0.44 over) with the figure charged on top."""
    terms = _terms(QWEN3_5_4B_L4)
    charged = terms[Term.ACTIVATION] + terms[Term.CUDA_GRAPHS]
    assert abs(charged - 2.17 * GIB) < 0.25 * GIB


def test_a_text_model_is_not_read_here() -> None:
    """No encoder profiled: V2's own count (`v2_counted`) stands, this rule reads nothing."""
    assert multimodal_profile_peak(RECORDS[TEXT_ONLY_V2].inputs()) is None
