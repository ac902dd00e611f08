"""Which top-k/top-p path vLLM's profiled sampler takes, by release and GPU (`topk_topp_sampler.py`,
docs/engines/vllm.md §12).

`_dummy_sampler_run` samples with top-k and top-p set. The PyTorch-native path (`apply_top_k_top_p`) sorts the
whole float32 logits tensor and softmaxes it: the copies the activation fits count. FlashInfer's
`top_k_top_p_sampling_from_logits` makes fewer: a masked copy and its softmax beside the logits and their float32 cast
(`flashinfer_copies.py`). A plan knows the path where the release and the GPU decide
it, and not where the install does, unless the launch states it (`LaunchSettings.flashinfer`, `plan --flashinfer`) or
runs the official image, whose install is known: in the releases of FLASHINFER_TAKEN_ERAS (`taken_span`) either is
read. What the profile holds is not always the serving path's: from v0.21.0 the V1 runner's dummy sampler warms the native path too
(`profiled_sampler_path`, NATIVE_WARMUP_ERAS).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, NamedTuple

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion, era_for
from kvtop.domain.engines.vllm.backends import FLASHINFER_CEILING, FLASHINFER_FLOORS
from kvtop.domain.engines.vllm.runner_eras import runs_v2
from kvtop.domain.gpus import compute_capability, gpu_model_key
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.launch_tokens import image_of, image_release
from kvtop.domain.model import ModelSpec

SamplerPath = Literal["native", "flashinfer", "either"]
# what a launch states its install holds (LaunchSettings.flashinfer); None: not stated
InstallState = Literal["installed", "absent"] | None


class ProfiledPath(NamedTuple):
    """The path whose copies the profile holds at its peak, why, and whether it is the native warm-up beside another
    serving path (`NATIVE_WARMUP_ERAS`) rather than the serving path itself."""

    path: SamplerPath
    why: str
    warms_native: bool = False


# vllm#26859: from v0.11.1 FlashInfer's sampler is opt-in (VLLM_USE_FLASHINFER_SAMPLER=1), whatever the install holds:
# the release decides, not the install or the image (SAMPLER_PATHS and FLASHINFER_TAKEN_ERAS both end there)
FLASHINFER_OPT_IN = "0.11.1"

SAMPLER_PATHS: Eras[SamplerPath] = Eras((
    Era("", "native", "V0's sampler: PyTorch-native unless VLLM_USE_FLASHINFER_SAMPLER=1"),
    Era("0.8.0", "either", "vllm#11394: V1 samples with FlashInfer whenever it is importable, an optional install "
                           "(vllm#21959) until vllm#26443"),
    Era(FLASHINFER_OPT_IN, "native", "vllm#26859: FlashInfer's sampler opt-in (VLLM_USE_FLASHINFER_SAMPLER=1; the v0.19.0 logs: "
                            "'available but disabled by default'; so through v0.20.1)"),
    Era("0.21.0", "flashinfer", "vllm#40376: FlashInfer's sampler the default again on the GPUs FlashInfer's backend "
                                "takes (v0.21.0 envs.py:726-730 defaults VLLM_USE_FLASHINFER_SAMPLER to True, "
                                "v1/sample/ops/topk_topp_sampler.py:39-74 takes FlashInfer where "
                                "FlashInferBackend.supports_compute_capability; v0.20.0 and v0.20.1 still default it to "
                                "None, envs.py:716-720, and sample natively, topk_topp_sampler.py:39-62; a v0.22.0 and the "
                                "v0.23.0 image's starts print 'Using FlashInfer for top-p & top-k sampling.' at "
                                "defaults); VLLM_USE_FLASHINFER_SAMPLER=0 or a failed JIT build falls back to the native "
                                "path"),
))  # fmt: skip
# FlashInferBackend.supports_compute_capability (v1/attention/backends/flashinfer.py) by release: backends.py
# FLASHINFER_FLOORS (7.5 at v0.20.0 - v0.23.x, 8.0 from v0.24.0 while flashinfer#3620 stands) to FLASHINFER_CEILING
# (12.1); v0.21.0's topk_topp_sampler.py:39-66 takes FlashInfer's sampler where it passes. flashinfer_sampler_supported (v0.33.0) also asks for more than 16
# SMs (FlashInfer 0.7+'s multi-CTA top-k masking), which every GPU model gpus.py names has (the fewest: T4's 40, L4's
# 58), and that FlashInfer JIT-compiles for the GPU, which a plan cannot know: the interval keeps the native path.
# the launch's own choice, a leading NAME=VALUE of its command (flags.py env_read): `bool(int(os.getenv(...)))`
# where set (envs.py; topk_topp_sampler.py takes FlashInfer's path for 1 where FlashInfer imports, the native one
# for 0). Read on the V1 runner's profile, and on V2's from v0.33.0 (`V2_WARMUP_PASS_ERAS`): before it V2's dummy batch
# (v1/worker/gpu/model_runner.py `_dummy_sampler_run`, v0.29.0:832-849, v0.32.0:972-983) sets no top-k or top-p, so
# its sampler takes neither path (sample/sampler.py:296-304 at v0.29.0)
FLASHINFER_SAMPLER_ENV = "VLLM_USE_FLASHINFER_SAMPLER"
# the official image (`docker run vllm/vllm-openai:TAG`, flags.py reads its tag as the release)
OFFICIAL_IMAGE = "vllm/vllm-openai"
# The official image's install, read where the release leaves the path to the install ("either" above) and
# FLASHINFER_TAKEN_ERAS (below) takes an importable FlashInfer. Its docker/Dockerfile installs FlashInfer into the
# vllm-base stage the vllm-openai target builds on, on linux/amd64 only (`if [ "$TARGETPLATFORM" != "linux/arm64" ]`: the version of commit 0000977e, 2025,
# torch 2.7 / CUDA 12.8, installs flashinfer from git 21ea1d25; the one of commit 01da4491, 2024, the 0.0.9 wheel). The
# V1 sampler takes it where its version is at least 0.2.3 from v0.9.0 (topk_topp_sampler.py v0.9.0:33-38: below it,
# native; v0.11.0:50-56) and only below 0.2.3 before (v0.8.0 :28-42, v0.8.5.post1 alike: vllm#14815 disables
# FlashInfer >= 0.2.3), a version the v0.8.x images' Dockerfiles were not read for: "either" stays there. Seen: the
# official image of 2025-06 (v0.9.x, topk_topp_sampler.py:49) logs 'Using FlashInfer for top-p & top-k sampling.' and
# 1.51 GiB more KV than at VLLM_USE_FLASHINFER_SAMPLER=0 (flashinfer-ai/flashinfer#1180); the v0.11.0 image's
# profile peak is FlashInfer's (docs/engines/vllm.md §10). From v0.11.1 the release decides (opt-in, vllm#26859).
# How a plan says why the image's FlashInfer is the path:
IMAGE_INSTALLS_FLASHINFER = ("docker/Dockerfile installs it on linux/amd64; V1's sampler takes it from v0.9.0 "
                             "(topk_topp_sampler.py v0.9.0:33-38; flashinfer-ai/flashinfer#1180)")
# Whether the V1 runner's `_dummy_sampler_run` samples a second time with a per-request generator ("Also warm
# forward_native (taken when generators dict is non-empty)"; skipped only under logprobs_mode processed_logits /
# processed_logprobs, where the sampler is bound to forward_native anyway). FlashInfer's `forward_cuda` hands a batch
# with generators to `forward_native`, so the profile runs the native path's copies whatever the serving path is.
NATIVE_WARMUP_ERAS: Eras[bool] = Eras((
    Era("", False, "the profile samples once, on the serving path (v1/worker/gpu_model_runner.py `_dummy_sampler_run`, "
                   "read at v0.20.1)"),
    Era("0.21.0", True, "v1/worker/gpu_model_runner.py:5743-5765 at v0.21.0 (:6015-6037 at v0.23.0, :5907-5925 at "
                        "v0.33.0): `_dummy_sampler_run` samples again with `generators={0: torch.Generator(...)}`, "
                        "which FlashInfer's forward_cuda hands to forward_native (v1/sample/ops/topk_topp_sampler.py:143 "
                        "at v0.21.0, :166 at v0.23.0)"),
))  # fmt: skip
# Whether the V2 runner's `_dummy_sampler_run` samples a second time with `SamplingParams.for_sampler_warmup()`
# (temperature 0.9, top-k 50, top-p 0.9, min-p, penalties, logit bias, bad words, logprobs; no seed). That pass takes
# the serving path (`sampler_path`): FlashInfer's fused sampler where `Sampler.use_flashinfer` (`flashinfer_sampler_
# supported()`, the V1 sampler's own check) and no row is greedy or seeded, else the native Triton mask and
# gumbel_sample; with no generators it warms no second, native path (v2_profile.py counts what it holds).
V2_WARMUP_PASS_ERAS: Eras[bool] = Eras((
    Era("", False, "V2's dummy sampler samples once, greedy, on neither path (v1/worker/gpu/model_runner.py "
                   "`_dummy_sampler_run`, v0.29.0:832-849, v0.31.0:942-953, v0.32.0:972-983)"),
    Era("0.33.0", True, "v1/worker/gpu/model_runner.py:1008-1014 at v0.33.0 (:1056-1062 at v0.34.0): a warmup-param "
                        "pass (SamplingParams.for_sampler_warmup, sampling_params.py:1477-1493 at v0.33.0, :1480 at "
                        "v0.34.0) on the serving path (sample/sampler.py:88-90, :307-317, :340-358 at v0.33.0)"),
))  # fmt: skip
# the launch's own statement of its install (`LaunchSettings.flashinfer`: pip `flashinfer-python` beside vLLM, or not),
# read where importability decides the path: from v0.9.0 an installed FlashInfer of 0.2.3 or later is taken (what pip
# installs since 2025-03; vLLM 0.10.1.1's METADATA pins the extra to flashinfer-python==0.2.11), one that is absent never
# is. Before v0.9.0 an installed one is taken only below 0.2.3 (vllm#14815), a version the statement does not give.
# The one table of the releases in which an importable FlashInfer is the sampler's path: the launch's statement and the
# official image's install (IMAGE_INSTALLS_FLASHINFER) both read it, and `plan --flashinfer`'s help quotes its span.
# 0.11.1's pre-releases (main between v0.11.0 and v0.11.1) sort below 0.11.1 and so read a stated install as taken.
# That holds for a build between vllm#26443, which made flashinfer-python a default CUDA requirement (v0.11.1's
# METADATA:79 'Requires-Dist: flashinfer-python==0.5.2', unconditional; v0.11.0's :99 under extra "flashinfer" only),
# and vllm#26859, which made the sampler opt-in (v0.11.1 topk_topp_sampler.py:34-47): session 70 read Ray Serve LLM's
# main build 0.1.dev10446+g2dcd12d35 that way (its log prints 'topk_topp_sampler.py:58] Using FlashInfer for top-p &
# top-k sampling.' and leaves 2.65 / 3.13 GiB beside weights and KV at 1,024 seqs, where the native path's 9.5 copies
# alone are 4.6 / 5.5 GiB). A pre-release after vllm#26859 samples natively though it holds FlashInfer; its version
# does not place its commit against the PR, so that case is not modelled: the interval keeps the native copies
# (`calibration_activation._sampler_path_error` widens by them), the centre is FlashInfer's.
FLASHINFER_TAKEN_ERAS: Eras[bool] = Eras((
    Era("", False, "before v0.9.0 the installed FlashInfer's version decides (>= 0.2.3 disables the sampler, vllm#14815)"),
    Era("0.9.0", True, "topk_topp_sampler.py v0.9.0:33-38, v0.11.0:50-56: FlashInfer's sampler wherever FlashInfer "
                       ">= 0.2.3 imports and VLLM_USE_FLASHINFER_SAMPLER is not 0"),
    Era(FLASHINFER_OPT_IN, False, "vllm#26859: FlashInfer's sampler is opt-in, whatever the install holds"),
))  # fmt: skip
# how a plan says it, where the serving path is not the native one
PROFILE_WARMS_NATIVE = "the profile's dummy sampler warms the native top-k/top-p path too"
# NVIDIA Dynamo's vLLM runtime image (`nvcr.io/nvidia/ai-dynamo/vllm-runtime:TAG`, and images built FROM it) sets
# `ENV VLLM_USE_FLASHINFER_SAMPLER=1` ("In vLLM 0.12 the default sampler changed on the forward pass. We need to enable
# this to enable the cuda kernels.": container/templates/vllm_runtime.Dockerfile, its last ENV, read at ai-dynamo/dynamo
# 009d786f) over an install that holds FlashInfer (the same file copies `flashinfer_jit_cache` and `flashinfer_cubin`
# into the venv): a start in it samples with FlashInfer as `VLLM_USE_FLASHINFER_SAMPLER=1` in the launch does. Seen:
# dmvevents/awsome-inference-1's rev2 worker (an image over vllm-runtime:1.0.1, vLLM 0.16.0) logs 'Using FlashInfer for
# top-p & top-k sampling.' (topk_topp_sampler.py:47) and kept 50.35 GiB of KV, where the native path plans 47.50
DYNAMO_RUNTIME_IMAGE = "ai-dynamo/vllm-runtime"
DYNAMO_IMAGE_SETS = ("NVIDIA Dynamo's vLLM runtime image sets ENV VLLM_USE_FLASHINFER_SAMPLER=1 "
                     "(container/templates/vllm_runtime.Dockerfile at ai-dynamo/dynamo 009d786f)")
# Which of Dynamo's vllm-runtime tags (Dynamo's release, not vLLM's) carry that ENV: ai-dynamo/dynamo#5613 ("Update
# the vllm docker image to use the cuda sampler rather than the pytorch one") added it, merged 2026-01-23, after
# Dynamo 0.8.1 (its vllm-runtime ships vLLM 0.12.0, an opt-in release: container/Dockerfile.vllm with VLLM_REF v0.12.0,
# read at 004efe00, has no such ENV); 0.9.0 (2026-02-20, vLLM 0.14.1) is the first release after the merge (not read
# at its tag). A tag that names no Dynamo release (`latest`, a digest alone) is taken as a current image.
DYNAMO_SAMPLER_ENV_ERAS: Eras[bool] = Eras((
    Era("", False, "no VLLM_USE_FLASHINFER_SAMPLER ENV in Dynamo's vllm-runtime before ai-dynamo/dynamo#5613 "
                   "(container/Dockerfile.vllm at 004efe00, VLLM_REF v0.12.0)"),
    Era("0.9.0", True, "ai-dynamo/dynamo#5613 (merged 2026-01-23): ENV VLLM_USE_FLASHINFER_SAMPLER=1; 0.9.0 the first "
                       "release after it"),
))  # fmt: skip
# hosts the official image's FlashInfer install leaves out (linux/arm64): Grace-Hopper and Grace-Blackwell, as
# `gpus.gpu_model_key` keys them (NVML's 'NVIDIA GH200 480GB', 'gh200' and 'GH200' alike)
ARM64_HOSTS = frozenset({"GH200", "GB200", "GB300"})


def taken_span() -> str:
    """The releases in which an importable FlashInfer is the sampler's path, as `plan --flashinfer`'s help says them
    (FLASHINFER_TAKEN_ERAS's True era and the one after it)."""
    eras = list(FLASHINFER_TAKEN_ERAS)
    index = next(i for i, era in enumerate(eras) if era.value)
    end = f" to before v{eras[index + 1].since}" if index + 1 < len(eras) else " on"
    return f"v{eras[index].since}{end}"


def official_image(image: str | None) -> bool:
    """Whether the launch runs vLLM's official image (any registry, any tag or digest: launch_tokens.image_of)."""
    return bool(image) and image_of(image or "", frozenset({OFFICIAL_IMAGE}))


def dynamo_image(image: str | None) -> bool:
    """Whether the launch runs NVIDIA Dynamo's vLLM runtime image (any registry, tag or digest) of a release whose ENV
    asks for FlashInfer's sampler (DYNAMO_RUNTIME_IMAGE, its tag read as Dynamo's release: DYNAMO_SAMPLER_ENV_ERAS)."""
    repositories = frozenset({DYNAMO_RUNTIME_IMAGE})
    if not image or not image_of(image, repositories):
        return False
    return DYNAMO_SAMPLER_ENV_ERAS.at(ResolvedVersion(text=image_release(image, repositories)))


def dynamo_release_not_read(image: str | None, version: ResolvedVersion) -> str | None:
    """The line a plan gives where the launch runs Dynamo's vllm-runtime image and no vLLM release is known (not stated,
    not logged): the image's tag names Dynamo's release, not vLLM's (DYNAMO_SAMPLER_ENV_ERAS), so it is not read as one
    (vLLM's own image is: flags.release_images), and the plan takes vLLM's latest rules, which may be another runner
    (V2 from v0.29.0) than the release the image ships; None otherwise."""
    repositories = frozenset({DYNAMO_RUNTIME_IMAGE})
    if version.text is not None or not image or not image_of(image, repositories):
        return None
    tag = image_release(image, repositories)
    said = f"tag {tag}" if tag else "tag"
    return (f"the vLLM release NVIDIA Dynamo's image ships ({image}: its {said} is Dynamo's release, not vLLM's): "
            "not read; the plan takes vLLM's latest rules; give --engine-version with the image's vLLM release")


def stated_path(flags: Mapping[str, object] | None) -> bool | None:
    """Whether the launch's own VLLM_USE_FLASHINFER_SAMPLER asks for FlashInfer's path (1: True) or the native one
    (0: False); None where it states neither."""
    stated = str((flags or {}).get(FLASHINFER_SAMPLER_ENV, "")).strip()
    return {"1": True, "0": False}.get(stated)


def sampler_path(
    version: ResolvedVersion,
    gpu_name: str | None,
    flags: Mapping[str, object] | None = None,
    image: str | None = None,
    flashinfer: InstallState = None,
) -> tuple[SamplerPath, str]:
    """(the path a start of this release on this GPU takes: at its defaults, or as the launch's
    VLLM_USE_FLASHINFER_SAMPLER states, or as its install holds FlashInfer (`flashinfer`, LaunchSettings.flashinfer)
    or the official image it runs (`image`, LaunchSettings.image) installs it; why)."""
    stated = stated_path(flags)
    if stated is not None:
        path: SamplerPath = "flashinfer" if stated else "native"
        return path, f"{FLASHINFER_SAMPLER_ENV}={int(stated)} in the launch"
    if dynamo_image(image):  # the image's ENV, as if the launch set it (the launch's own value above wins)
        return "flashinfer", f"{DYNAMO_IMAGE_SETS}; the launch line's image: {image}"
    era = SAMPLER_PATHS.era(version)
    if flashinfer is not None:
        read = era_for(FLASHINFER_TAKEN_ERAS, version)
        if era.value == "either" and read.value:
            holds = "holds" if flashinfer == "installed" else "lacks"
            return ("flashinfer" if flashinfer == "installed" else "native"), (
                f"the install {holds} FlashInfer, as the launch states it; {read.source}")
        if era.value == "either" and flashinfer == "absent":  # no FlashInfer to import: native in any V1 release
            return "native", f"the install lacks FlashInfer, as the launch states it; {era.source}"
        path, why = sampler_path(version, gpu_name, flags, image)
        return path, f"{why}; the launch's FlashInfer {flashinfer} not read: {read.source}"
    image_takes = official_image(image) and gpu_model_key(gpu_name) not in ARM64_HOSTS and FLASHINFER_TAKEN_ERAS.at(version)
    if era.value == "either" and image_takes:
        return "flashinfer", (f"FlashInfer: the official image installs it (stated by the launch line's image: {image}); "
                              f"{IMAGE_INSTALLS_FLASHINFER}")  # fmt: skip
    if era.value != "flashinfer":
        return era.value, era.source
    capability = compute_capability(gpu_name)
    if capability is None:
        return "either", f"{era.source}; the GPU's compute capability is not known"
    low, high = FLASHINFER_FLOORS.at(version), FLASHINFER_CEILING
    if low <= capability <= high:
        return "flashinfer", era.source
    return "native", (f"{era.source}; compute capability {capability[0]}.{capability[1]} is outside "
                      f"{low[0]}.{low[1]}–{high[0]}.{high[1]} at this release")  # fmt: skip


def profiled_sampler_path(
    version: ResolvedVersion,
    gpu_name: str | None,
    model: ModelSpec,
    flags: Mapping[str, object] | None = None,
    image: str | None = None,
    settings: LaunchSettings | None = None,
) -> ProfiledPath:
    """(the path whose copies the profile holds at its peak; why; whether it is the native warm-up): the serving path (`sampler_path`), or the native
    one where the release's V1 runner warms it as well (NATIVE_WARMUP_ERAS: the second pass holds the native path's
    copies after FlashInfer's first has freed its own, so the peak is the native path's). A launch on the V2 runner
    (`runner_eras.runs_v2`, `settings` its speculative decoding) keeps the serving path: its dummy sampler is its own
    (v1/worker/gpu/model_runner.py, v2_profile.py), on neither path before v0.33.0 and on the serving one after
    (`v2_warmup_path`)."""
    path, why = sampler_path(version, gpu_name, flags, image, settings.flashinfer if settings is not None else None)
    warmup = era_for(NATIVE_WARMUP_ERAS, version)
    if path == "native" or not warmup.value or runs_v2(version, model, settings):
        return ProfiledPath(path, why)
    return ProfiledPath("native", (f"{PROFILE_WARMS_NATIVE} (v{warmup.since}+, v1/worker/gpu_model_runner.py "
                                   f"`_dummy_sampler_run`), whatever the serving path ({path}'s)"), warms_native=True)


def v2_warmup_path(
    version: ResolvedVersion, gpu_name: str | None, flags: Mapping[str, object] | None = None, image: str | None = None
) -> tuple[SamplerPath, str] | None:
    """(the path V2's warm-up pass takes, why): the serving path (`sampler_path`) where the release runs the pass
    (`V2_WARMUP_PASS_ERAS`, v0.33.0 on); None before it, where V2's one greedy pass takes neither."""
    if not V2_WARMUP_PASS_ERAS.at(version):
        return None
    path, why = sampler_path(version, gpu_name, flags, image)
    return path, f"{why}; {V2_WARMUP_PASS_ERAS.era(version).source}"
