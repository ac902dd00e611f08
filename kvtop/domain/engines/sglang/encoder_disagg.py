"""SGLang's rules on the E/PD (encoder disaggregation) flags kvtop reads off an engine's line for the VLM factor
(vlm_fraction_skip.py): the starts SGLang refuses with them, refused or said here, so a plan is never of a server that
does not start.

- `--language-model-only` (from 0.5.18): SGLang's `_handle_language_model_only` raises ValueError with
  --encoder-only, --language-only, --enable-prefix-mm-cache, --enable-broadcast-mm-inputs-process or
  --mm-enable-dp-encoder, with --disaggregation-mode prefill/decode, and for any architecture outside
  `ServerArgs.LANGUAGE_MODEL_ONLY_ARCHITECTURES` (0.5.18 server_args.py:7657-7686: MuseGlimmer alone; 0.5.23
  server_args.py:335-340: DeepseekV4, MuseGlimmer, Cosmos3, Cosmos3Edge). Refused, by name, with SGLang's own rule.
  0.5.19 … 0.5.22 were not read: the 0.5.23 list is taken there (it holds 0.5.18's), so no start they may take is
  refused. Before 0.5.18 the flag does not exist (flag_releases.py refuses it, its row in flags_unmodelled_late.py).
- `--language-only` needs `--encoder-urls` ('requires at least one encoder urls to be set via --encoder-urls': 0.5.7
  server_args.py:2220, 0.5.9 :2585, 0.5.12 :4115-4118, 0.5.17 :7404, 0.5.18 :7701). Said, not refused: a launch
  line copied without its encoder URLs (the corpus's E/PD language servers, whose harness held them) still plans the
  language server it describes; the written-back line carries `--encoder-urls` as given (SglangFlags.to_flags;
  `nargs="+"`: 0.5.7 server_args.py:4336-4337, 0.5.12 :6939-6940).
"""

from __future__ import annotations

from kvtop.domain.engines.sglang.flag_releases import check_flag_release
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion, era_for
from kvtop.domain.errors import InputError
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model import ModelSpec
from kvtop.domain.span import flag_set, flag_text

LM_ONLY_FLAG = "--language-model-only"
LANGUAGE_ONLY_FLAG = "--language-only"
ENCODER_URLS_FLAG = "--encoder-urls"
_MUSE = "MuseGlimmerForConditionalGeneration"
LM_ONLY_ARCHITECTURES: Eras[tuple[str, ...]] = Eras((
    Era("0.5.18", (_MUSE,), "server_args.py:7657 at 0.5.18 LANGUAGE_MODEL_ONLY_ARCHITECTURES"),
    Era("0.5.19", ("DeepseekV4ForCausalLM", _MUSE, "Cosmos3ForConditionalGeneration",
                   "Cosmos3EdgeForConditionalGeneration"),
        "server_args.py:335-340 at 0.5.23 LANGUAGE_MODEL_ONLY_ARCHITECTURES (0.5.19 … 0.5.22 not read: this list)"),
))  # fmt: skip
# the flags `_handle_language_model_only` will not take beside it, in its order (0.5.18 server_args.py:7662-7675)
LM_ONLY_EXCLUDES = ("--encoder-only", LANGUAGE_ONLY_FLAG, "--enable-prefix-mm-cache",
                    "--enable-broadcast-mm-inputs-process", "--mm-enable-dp-encoder")  # fmt: skip


def check_language_model_only(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> None:
    """Refuse a `--language-model-only` launch SGLang refuses at `version` (the module's docstring)."""
    if not flag_set(settings, LM_ONLY_FLAG.removeprefix("--")):
        return
    check_flag_release(LM_ONLY_FLAG, version)
    for flag in LM_ONLY_EXCLUDES:
        if flag_set(settings, flag.removeprefix("--")):
            raise InputError(f"SGLang {version.label} refuses it with {flag} ('--language-model-only cannot be "
                             f"combined with {flag}', its _handle_language_model_only)", field=LM_ONLY_FLAG)  # fmt: skip
    mode = flag_text(settings, "disaggregation-mode")
    if mode is not None and mode != "null":
        raise InputError(f"SGLang {version.label} refuses it with --disaggregation-mode {mode} ('--language-model-only "
                         "is incompatible with --disaggregation-mode prefill/decode', its _handle_language_model_only)",
                         field=LM_ONLY_FLAG)  # fmt: skip
    era = era_for(LM_ONLY_ARCHITECTURES, version)
    if model.architecture not in era.value:
        raise InputError(f"SGLang {version.label} takes it only for {', '.join(era.value)} ({era.source}): "
                         f"'--language-model-only does not support [{model.architecture!r}]'", field=LM_ONLY_FLAG)  # fmt: skip


def encoder_urls_note(settings: LaunchSettings, version: ResolvedVersion) -> str | None:
    """What the plan says of `--language-only` given without `--encoder-urls` (SGLang refuses that start); None
    where the launch has no --language-only or has its encoder URLs."""
    if not flag_set(settings, LANGUAGE_ONLY_FLAG.removeprefix("--")) or flag_text(settings, ENCODER_URLS_FLAG[2:]):
        return None
    return (f"{LANGUAGE_ONLY_FLAG} without {ENCODER_URLS_FLAG}: SGLang {version.label} refuses that start ('requires "
            "at least one encoder urls to be set via --encoder-urls', server_args.py:2220 at 0.5.7 … :7404 at 0.5.17); "
            "planned as the language server it describes, add the encoder servers' URLs")  # fmt: skip
