"""A hybrid's transient with prefix caching at v0.24.0 – v0.27.x on the V1 runner with captured graphs: calibrated, its
op not found (docs/engines/vllm.md §4.4.1); and the first FULL capture's sample, which vllm#50780 suggested it was.

`profile_cudagraph_memory` (v1/worker/gpu_model_runner.py) captures each mode's two largest sizes and reads the free
memory before and after each; the first FULL capture runs its warmups and its capture with every request at
profile_seq_lens = min(max_model_len, max_num_batched_tokens // its token count) tokens of context ("used to profile
attention workspace that scales with context length"), and what that step leaves in the caching allocator is charged as
graph memory. kvtop's graph fit counts graphs × layers (`calibration.py`): on a Mamba / GDN hybrid with prefix caching
(mamba_cache_mode 'align') and captured graphs the estimate is above kvtop's graph term on every V1-runner start that
prints it (the V2 runner's starts print near or below it: haitang89 1.75 GiB against 2.12), by an amount no input kvtop
reads predicts. It is not the FULL sample: niushuai1991's MTP / DFlash starts capture PIECEWISE graphs alone (their
logs: PIECEWISE=15) and lack 1.92 – 1.95 GiB, as its no-draft FULL start lacks 1.97 (session 72, H4), so the class is
keyed on graphs of any mode (eager starts capture none and stay out; session 72, H5) and its op is not found (sessions
69 – 72). The fit keeps its key `vllm.hybrid_sample` (named when the sample was the suspect): the key is written in the
committed fit, the calibration's era tables and the tests, and renaming it changes no figure. Where kvtop carries it
(v0.24.0 – v0.27.x, the releases a start shows it at; v0.28.x not seen, before v0.24.0 not carried:
`HYBRID_SAMPLE_ERAS`) the term takes a CALIBRATED centre for the class (session 72, helper H2): the fit
`vllm.hybrid_sample`, a constant fitted on what the capacity each of the class's starts on a GPU of its own printed
leaves of it once kvtop's other terms are taken (benchmarks/calibration/implied.py; committed: 1.77 GiB on ten starts,
fentz26's v0.27.1 one, the L40S Qwen3.6-27B-FP8 one, anud18's H100 PCIe and RTX 5090 ones, club-3090 #612 / #652 and,
since H5, niushuai1991's four PIECEWISE-only MTP / DFlash ones, 0.34 – 2.30 GiB), its error two-sided from their
held-out misses (each start against the centre a fit without its source gives: + 0.58 GiB above, fentz26's 2.30 against
1.72; − 1.60 below, anud18's RTX 5090 0.34 against 1.94; session 72 fixer H3 after review R2, where the rows' in-sample
spread left sources outside their fold's), each beside the graph fit's as the root of squares (`with_hybrid_sample`).
The leave-one-source-out judgement refits it without the judged start's source, as every fit. Not scaled with the
sample's tokens: the starts show no growth with them (session 71: 0.85 GiB beyond kvtop's term at 32,768 sample tokens
against 2.21 at 8,192). A unified-memory host (GB10) gives the fit no row (its shortfall holds what the host takes
during the start) and its plan keeps session 70's raise-only widening by the largest amount seen
(`hybrid_sample_widening`: the low end alone), as does a fold the class's starts are too few in.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.linear import LinearTerm
from kvtop.domain.calibration.support import outside
from kvtop.domain.calibration.terms import TermEstimate
from kvtop.domain.engines.versions import Era, Eras, era_for
from kvtop.domain.engines.vllm.hybrid import mamba_prefix_caching
from kvtop.domain.engines.vllm.profile_run import (
    GRAPHS_CHARGED,
    batch_limits,
    graph_counts,
    graphs_charged,
    largest_full_size,
)
from kvtop.domain.engines.vllm.runner_eras import runs_v2
from kvtop.domain.gpus import is_unified
from kvtop.domain.wording import GIB, gib

# The calibrated centre (session 72, helper H2): what the capacity the class's starts printed leaves of the transient once
# the plan's other terms are taken, fitted as a constant (benchmarks/calibration/implied.py: an implied fit), with its
# held-out misses' signed spread as the interval (`LinearTerm.span_bytes`, the engine's `SPAN_FITS`; session 72 fixer
# H3 after review R2, whose folds found 2 of the 4 sources outside the rows' in-sample spread): each start's row less
# the centre a fit without its source gives, the lowest and the highest. The judgement leaves the judged start's source
# out of the fit as it does every other fit's
SAMPLE_KEY = "vllm.hybrid_sample"
SPAN_FITS = frozenset({SAMPLE_KEY})
# The committed fit's rows (kvtop's corpus, tests/data/calibration/vllm.jsonl): (record id, the start in words, GiB it
# left of the transient). A refit that moves one fails tests/engines/vllm/test_hybrid_graph_sample.py, which compares
# them with the rows the corpus's fit is made of (benchmarks/calibration/implied.py `implied_rows`); the plan names them
# only beside the fit they were read from (as many records), not beside a fold's
SAMPLE_ROWS: tuple[tuple[str, str, float], ...] = (
    ("fentz26-qwen3.8-27b-uncensored-fp8-2xrtx5090-v0271-tp2-fp8kv-pc-len131072", "fentz26's v0.27.1 TP 2 start", 2.30),
    ("file55060224897-qwen3.6-27b-fp8-l40s-v0240-prefix-no-mtp", "the L40S Qwen3.6-27B-FP8 one", 1.97),
    ("anud18-qwen3.6-35b-a3b-nvfp4-h100pcie-v0240-u090-bt32768", "anud18's H100 PCIe", 1.87),
    ("anud18-qwen3.6-35b-a3b-nvfp4-rtx5090-v0240-u090-bt8192", "anud18's RTX 5090", 0.34),
    ("club3090-612-qwen3.6-35b-a3b-nvfp4-rtx5090-v0240-prefix", "club-3090 #612", 1.76),
    ("club3090-652-qwen3.6-35b-a3b-nvfp4-rtx5090-v0240-prefix", "club-3090 #652", 1.74),
    ("niushuai1991-qwen3.6-27b-fp8-rtxpro6000-v0251-mtp3-fp8kv-pc", "niushuai1991's v0.25.1 MTP 3 (PIECEWISE)", 1.92),
    ("niushuai1991-qwen3.6-27b-fp8-l40s-v0240-mtp5-seqs5-fp8kv-pc", "its L40S MTP 5 (PIECEWISE)", 1.94),
    ("niushuai1991-qwen3.6-27b-fp8-l40s-v0240-dflash7-fp8kv-pc", "its DFlash 7 (PIECEWISE)", 1.84),
    ("niushuai1991-qwen3.6-27b-fp8-l40s-v0240-dflash3-fp8kv-pc", "its DFlash 3 (PIECEWISE)", 1.85),
)
SAMPLE_STARTS = "committed on " + ", ".join(f"{words} {gib(figure * GIB)}" for _, words, figure in SAMPLE_ROWS)
SAMPLE_FEATURES = ("1 GiB on a hybrid with prefix caching and captured graphs (v0.24.0 – v0.27.x, V1 runner)",)
# What the term is, in words: the class is keyed on captured graphs of any mode (session 72 H5), not on a FULL capture
# (carried in the graph term: FULL starts' printed estimate holds it, fentz26's 3.51 GiB against kvtop's 1.30; a
# PIECEWISE-only start's does not, niushuai1991's L40S k = 4 0.22 GiB printed, yet its KV lacks as much)
HYBRID_TRANSIENT = ("a Mamba / GDN hybrid's transient with prefix caching (mamba_cache_mode 'align') on the V1 runner with "
                    "captured graphs, carried in the graph term")

# The first FULL capture's context (`profile_seq_lens=min(self.max_model_len, self.max_num_tokens //
# desc.num_tokens) if mode == CUDAGraphMode.FULL and i == 0`), read in every wheel from the first release that
# charges the estimate: gpu_model_runner.py:5995-6001 at v0.20.0 and v0.20.1, :6095 at v0.21.0, :6314 at v0.22.0,
# :6446 at v0.23.0, :6517-6523 at v0.24.0, :6666 at v0.26.0, :6735 at v0.27.1, :6870 at v0.28.0, :6823 at v0.29.0;
# so the sample stands wherever the estimate is charged (`profile_run.GRAPHS_CHARGED`, from v0.20.0); the v0.18.0
# wheel holds the same sample (:5635-5649), printed there and not charged. Its hybrid transient is another matter
# (`HYBRID_SAMPLE_ERAS`: carried at v0.24.0 – v0.27.x only)
# What the corpus shows of the hybrid's step (docs/engines/vllm.md §4.4.1): vLLM's code does not say its size
HYBRID_SAMPLE_SEEN = (
    "kvtop's corpus: the estimate above kvtop's graph term on every such V1-runner start that prints it (0.85 – 2.21 "
    "GiB: v0.18.0, v0.24.0, v0.27.1), 0.4 – 2.0 GiB less KV than planned on the others at v0.24.0, with no growth in the "
    "sample's tokens (docs/engines/vllm.md §4.4.1); the same 27B hybrid without prefix caching (bf16 KV) printed 1.06 "
    "GiB against 1.55 planned"
)

# The largest amount seen: fentz26's v0.27.1 start (2 × RTX 5090, TP 2, fp8 KV, prefix caching, Qwen3.8-27B-FP8,
# `fentz26-qwen3.8-27b-uncensored-fp8-2xrtx5090-v0271-tp2-fp8kv-pc-len131072`) prints 'Estimated CUDA graph memory:
# 3.51 GiB' where kvtop's graph term, which counts the graphs and not the sample, charges 1.30 GiB: 2.21 GiB. It is
# what the estimate charged beyond kvtop's graph term, not the transient alone: the same log prints 'CUDA graph pool
# memory: 2.99 GiB (actual), 3.51 GiB (estimated)', so about 0.52 GiB of the 2.21 is the estimate's excess over the
# actual pool (its two-sample extrapolation), which vLLM took off the budget all the same. Not scaled (session 71): the
# other starts that print the estimate lie below it at the same or more sample tokens (N requests × min(max_model_len,
# max_num_batched_tokens // N)): file57489989625's v0.18.0 Qwen3.5-9B (L40S, fp8 KV, 256 × 32 = 8,192) 1.58 GiB
# against kvtop's 0.65, 0.93 beyond; anud18's v0.24.0 GB10 persist start (Qwen3.6-35B-A3B-NVFP4, bf16 KV, 32 × 1,024
# = 32,768) 1.01 against 0.16, 0.85 beyond, where the "mnbt-linear" reading of vllm#50780's title (session 70) widened
# by 2.21 × 4 = 8.84 GiB. The KV the plan over-states on the starts without a printed estimate agrees: club-3090's
# 1 × 8,192 1.74 / 1.76 GiB, the L40S 8 × 1,024 1.97, anud18's RTX 5090 32 × 256 0.38 and H100 PCIe 32 × 1,024 1.93
# (kvtop's blind plan, benchmarks/calibration/record_check.py, session 71)
HYBRID_SAMPLE_BYTES = round(2.21 * GIB)
# The releases that charge the sample and show it (kvtop's corpus, V1 runner): v0.24.0 (club-3090 #612 / #652 on an RTX
# 5090, the L40S Qwen3.6-27B-FP8 start, anud18's three) and v0.27.1 (fentz26). Not before v0.24.0 (session 71, F3,
# after review R3, as session 70 had it): no start of the corpus has a hybrid with prefix caching at v0.20.0 – v0.23.x,
# and vllm#50780 says the opposite of a transient there: its 0.23.1 build (dev714) runs the same profile_seq_lens sample
# and reports 0.5 GiB, the issue calling the ~128 KiB a context token a 0.23 → 0.26 regression. Noted, not carried: the
# sample is the same code at v0.18.0 (gpu_model_runner.py:5635-5649, the v0.18.0 wheel), whose one hybrid
# prefix-caching start printed 0.93 GiB beyond kvtop's term, inside the term's own ± 0.97 (0.65 + 0.97 = 1.62 ≥ 1.58
# printed), and v0.18.0 charges no estimate. v0.28.x (the last release that runs a hybrid on the V1 runner,
# runner_eras.py) is not seen: the corpus's only starts there are dibaotian's three PP 4 ones at 0.28.1rc1 (fp8 KV),
# one --enforce-eager (no capture), the two with graphs at 4,096 and 2,048 sample tokens lacking 0.27 / 0.28 GiB a rank
# more than the eager sibling (+5.7 against +3.3 %), at a quarter of the layers a rank, so they neither show the
# transient nor rule it out. Not carried there (not seen), though the V1 runner still charges the sample there
HYBRID_SAMPLE_ERAS: Eras[bool] = Eras((
    Era("", False, "not carried before v0.24.0: no start shows it at v0.20.0 – v0.23.x, and vllm#50780's 0.23.1 "
        "build reports 0.5 GiB for the same sample (a 0.23 → 0.26 regression, the issue says)"),
    Era("0.24.0", True, "seen charged at v0.24.0 and v0.27.1 (kvtop's corpus, docs/engines/vllm.md §4.4.1)"),
    Era("0.28.0", False, "not seen from v0.28.0: the corpus's only V1 hybrid prefix-caching starts there, dibaotian's "
        "PP 4 ones at 0.28.1rc1, neither show it nor rule it out; the V2 runner takes no such sample from v0.29.0"),
))  # fmt: skip


def _v1_sampled(inputs: CalibrationInputs) -> bool:
    """Whether the release charges the estimate and the V1 runner makes it: V2's `profile_cudagraph_memory`
    (v1/worker/gpu/cudagraph_utils.py:718 at v0.29.0) runs `capture_model` on `InputBatch.make_dummy`'s seq_lens
    (num_tokens // num_reqs, input_batch.py:136-146), no profile_seq_lens (0 before v0.29.0: model_runner.py:684-686
    at v0.24.0)."""
    model = inputs.model
    return era_for(GRAPHS_CHARGED, inputs.version).value and not (model is not None and runs_v2(inputs.version, model,
                                                                                       inputs.settings))  # fmt: skip


def full_capture_sample(inputs: CalibrationInputs) -> tuple[int, int] | None:
    """(requests or tokens of the first FULL graph, context tokens each) of the first FULL capture: its token count
    N (`profile_run.largest_full_size`) and min(max_model_len, max_num_batched_tokens // N); None where the release
    does not charge it, the V2 runner makes it, or no FULL graph is captured (or kvtop keys the sizes otherwise)."""
    if not _v1_sampled(inputs):
        return None
    largest = largest_full_size(inputs)
    if largest is None:
        return None
    return largest, min(inputs.context_length, batch_limits(inputs)[0] // largest)


def hybrid_sampled(inputs: CalibrationInputs) -> bool:
    """Whether a Mamba / GDN hybrid runs with prefix caching ('align') on the V1 runner with captured graphs of any mode
    (PIECEWISE alone too: niushuai1991's MTP / DFlash starts lack as much as its FULL one, session 72 H4); eager starts
    capture none and stay out."""
    model = inputs.model
    if model is None or model.state is None or model.attention_free or not _v1_sampled(inputs):
        return False
    if not graphs_charged(inputs) or sum(graph_counts(inputs)) == 0:  # eager or cudagraph_mode NONE: no capture
        return False
    return mamba_prefix_caching(model, inputs.settings, inputs.version)


def sample_features(inputs: CalibrationInputs) -> tuple[float, ...] | None:
    """(1.0,) where the launch is of the class the fit `SAMPLE_KEY` is made on and applies to (a hybrid with prefix
    caching and captured graphs at a release that carries the transient, `HYBRID_SAMPLE_ERAS`), None elsewhere."""
    sampled = hybrid_sampled(inputs) and graphs_charged(inputs) and HYBRID_SAMPLE_ERAS.at(inputs.version)
    return (1.0,) if sampled else None


def sample_row_features(inputs: CalibrationInputs) -> tuple[float, ...] | None:
    """`sample_features` of a start the fit takes a row of: not a unified-memory host's (GB10), whose capacity also
    lacks what the host takes during the start (`unified_start.py`, fitted after the engine's terms), which its row
    would put in the transient (anud18's two GB10 starts: 10.9 and 5.6 GiB against 0.3 – 2.3 on GPUs of their own)."""
    return None if is_unified(inputs.gpu_name) else sample_features(inputs)


def centre_withheld(inputs: CalibrationInputs, fits: Mapping[str, LinearTerm]) -> str | None:
    """Why a launch of the class (`sample_features`) takes no calibrated centre, in words: a unified-memory host, which
    the fit has no row of (its start's shortfall holds what the host takes during the start, the unified host's fit's:
    unified_start.py), no fit `SAMPLE_KEY` among the plan's (too few of the class's starts beside the judged one's
    source), or one that keeps no held-out span; None where the centre is carried."""
    if sample_row_features(inputs) is None:
        return (f"the class's calibrated centre ({SAMPLE_KEY}) is withheld on a unified-memory host: its starts' "
                f"shortfall holds what the host takes during the start too (unified_start.py), so they give that fit no "
                f"row")  # fmt: skip
    fit = fits.get(SAMPLE_KEY)
    if fit is None:
        return f"no calibrated centre: too few of the class's starts for the fit {SAMPLE_KEY}"
    if fit.span_bytes is None:
        return f"the fit {SAMPLE_KEY} keeps no held-out span (none of its rows could be held out), so its centre is not carried"
    return None


def with_hybrid_sample(estimate: TermEstimate, inputs: CalibrationInputs, fits: Mapping[str, LinearTerm]) -> TermEstimate:
    """The CUDA-graph term with the class's calibrated transient (fit `SAMPLE_KEY`) added to its figure and its held-out
    spread to its error, each side as independent errors add (the root of squares): above the figure the largest a
    start left beyond the centre its fold gave it, below it the largest it fell short. Where the centre is withheld
    (`centre_withheld`) the raise-only widening (`hybrid_sample_widening`), saying why; as it is off the class."""
    values = sample_features(inputs)
    if values is None:
        return estimate
    withheld = centre_withheld(inputs, fits)
    fit = fits.get(SAMPLE_KEY)
    if withheld is not None or fit is None or fit.span_bytes is None:
        widening = hybrid_sample_widening(inputs)
        return estimate if widening is None else estimate.plus(error_bytes=widening[0], why=f"{widening[1]}; {withheld}",
                                                               beside=True, raise_only=True)  # fmt: skip
    centre, (lowest, highest) = max(fit.predict(values), 0), fit.span_bytes
    above = round(math.hypot(estimate.error_bytes, max(highest, 0)))
    below = round(math.hypot(estimate.error_below_bytes, max(-lowest, 0)))
    starts = f"; {SAMPLE_STARTS}" if fit.records == len(SAMPLE_ROWS) else ""  # the committed fit's rows, not a fold's
    outside_gpus = outside(fit, "the class's transient", inputs)  # the graphs' fit judges its own GPUs (support.py)
    why = (f"{HYBRID_TRANSIENT} (its op not found; not the first FULL capture's sample vllm#50780 suggested): "
           f"{gib(centre)} calibrated ({fit.key}: what the capacity printed by {fit.records} of the class's starts from "
           f"{fit.sources} sources on GPUs of their own leaves of it once kvtop's other terms are taken{starts}); held "
           f"out by source (each start against the centre a fit without its source gives) they lay from "
           f"{gib(max(-lowest, 0))} below it to {gib(max(highest, 0))} above, so its error is + {gib(max(highest, 0))} "
           f"above and − {gib(max(-lowest, 0))} below, each beside the graphs' own as the root of squares"
           + (f"; {outside_gpus} (its starts ran on the {', '.join(fit.gpus)})" if outside_gpus else ""))
    uneven = (f"the class's held-out misses about its calibrated centre, {SAMPLE_KEY}: from {gib(max(-lowest, 0))} "
              f"below it to {gib(max(highest, 0))} above, hybrid_graph_sample.py")  # fmt: skip
    # a reason the term was already one-sided for is kept beside the class's (not overwritten)
    prior = estimate.one_sided_why or (None if not estimate.one_sided else
                                       f"a part only ever {'raises' if estimate.error_bytes > estimate.error_below_bytes else 'lowers'} that term")  # fmt: skip
    # beside the fitted error the side above, as `error_bytes` is (a re-reader rewrites that side and keeps the
    # one-sided parts, which carry the side below)
    return estimate.with_error(above, max(above - below, 0), max(below - above, 0), bytes=estimate.bytes + centre,
                               basis=f"{estimate.basis}; {why}", one_sided_why=f"{prior}; {uneven}" if prior else uneven,
                               beside_error_bytes=round(math.hypot(estimate.beside_error_bytes, max(highest, 0))))  # fmt: skip


def hybrid_sample_widening(inputs: CalibrationInputs) -> tuple[int, str] | None:
    """(bytes the CUDA-graph term's error above its figure widens by, why: it only takes from KV, so only the
    interval's low end takes it) for a hybrid with prefix caching and captured graphs at a release that carries the
    transient (HYBRID_SAMPLE_ERAS): the largest amount seen, HYBRID_SAMPLE_BYTES (what fentz26's estimate took off beyond kvtop's
    graph term, about 0.52 GiB of it the estimate's excess over the pool it measured), whatever the launch's sample
    tokens; None elsewhere. Where the calibrated centre is withheld (`centre_withheld`: a unified-memory host, a fold
    without the fit) the centre stays the graphs' fit and this is an error the plan admits."""
    if not hybrid_sampled(inputs) or not HYBRID_SAMPLE_ERAS.at(inputs.version):
        return None
    return HYBRID_SAMPLE_BYTES, (
        f"{HYBRID_TRANSIENT} (its op not found, not modelled) adds {gib(HYBRID_SAMPLE_BYTES)} to the term's other error above its figure only (it only takes "
        f"from KV: the interval's low end takes it, its high end does not), as independent errors add (the term's error "
        f"above is the root of their squares): the largest amount seen, what vLLM's estimate took off the KV budget "
        f"beyond kvtop's graph term on fentz26's v0.27.1 start (3.51 GiB estimated against 1.30; its log's pool measured "
        f"2.99 GiB, so about 0.52 of the 2.21 is the estimate's excess over the actual pool); not scaled with the "
        f"sample's tokens, which the starts do not show (0.85 GiB beyond at 32,768 on anud18's v0.24.0 start, 0.93 "
        f"at 8,192 on a v0.18.0 one; club-3090's v0.24.0 starts lacked 1.74 – 1.76 GiB of KV against the plan)")


def full_sample_words(inputs: CalibrationInputs, fits: Mapping[str, LinearTerm]) -> str:
    """The CUDA-graph term's words for the first FULL capture (its context by the code) and, for a hybrid with prefix
    caching and captured graphs of any mode, its transient, as the term carries it (a calibrated centre, a raise-only widening, or not at this release);
    '' where the release charges none or the V2 runner makes it."""
    if not _v1_sampled(inputs):
        return ""
    full = graph_counts(inputs)[1] > 0
    if not full and not hybrid_sampled(inputs):
        return ""
    words = ""
    if full:
        sample = full_capture_sample(inputs)
        shape = (f"its {sample[0]:,}-token graph at {sample[1]:,} tokens of context a request" if sample is not None
                 else "its largest graph at max_num_batched_tokens ÷ its tokens of context a request")  # keyed sizes
        words = f"the first FULL capture runs {shape} (profile_seq_lens, gpu_model_runner.py)"
        if not hybrid_sampled(inputs):
            return f"{words}, whose transient is not modelled"
        words += "; "
    words += (f"{HYBRID_TRANSIENT}: such starts' KV lacks more than kvtop's graph term counts, by an amount no input "
              "kvtop reads predicts (its op not found; vllm#50780 suggested the first FULL capture's sample, which "
              "PIECEWISE-only starts lack just as much)")  # fmt: skip
    if sample_features(inputs) is not None and centre_withheld(inputs, fits) is None:
        return f"{words}; carried as a calibrated centre (below)"
    carried = ("kvtop widens by it at v0.24.0 – v0.27.x, the releases a start shows it at (below)"
               if HYBRID_SAMPLE_ERAS.at(inputs.version) else
               "kvtop carries it at v0.24.0 – v0.27.x only, the releases a start shows it at (v0.28.x not seen)")
    return f"{words} and the plan's KV may be high by it ({HYBRID_SAMPLE_SEEN}); {carried}"
