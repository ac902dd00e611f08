"""The launches whose automatic `mem_fraction_static` SGLang leaves without its VLM factor (docs/engines/sglang.md §5).

SGLang multiplies its automatic fraction by `adjust_mem_fraction_for_vlm` for a multimodal model (eras.VLM_ERAS), but
not on an instance that runs no encoder: read in the wheels,

- `--language-only` (E/PD disaggregation's language server, the flag from 0.5.7): skipped from 0.5.9
  (`if model_config.is_multimodal and not self.language_only`, server_args.py:1068 at 0.5.9, :1333 at 0.5.10, :1593 at
  0.5.12, :3320 at 0.5.14, :3695 at 0.5.15, :4094 at 0.5.16); 0.5.7 (:956) and 0.5.8 (:1036) test
  `model_config.is_multimodal` alone;
- a PD decode instance (`--disaggregation-mode decode`): skipped from 0.5.17 (server_args.py:4795-4800; 0.5.16 :4094
  does not test it);
- `--language-model-only` (the flag from 0.5.18): skipped from its first release (server_args.py:4990-4996 at 0.5.18;
  0.5.23 arg_groups/memory_hook.py:283-288 `is_vlm`, all three tests). SGLang takes the flag only for the
  architectures of `ServerArgs.LANGUAGE_MODEL_ONLY_ARCHITECTURES` (0.5.18 server_args.py:7657-7685: MuseGlimmer alone;
  0.5.23 :335-340: DeepseekV4, MuseGlimmer, Cosmos3, Cosmos3Edge) and refuses it with --disaggregation-mode, raising
  ValueError otherwise: refused (encoder_disagg.py), as is --language-only without --encoder-urls said. Its other
  effect, the tower neither built nor loaded, is not a term: the flag stays in flags_unmodelled_late.py's table.

--language-only and --language-model-only stay in flags_unmodelled*.py's tables (typed to kvtop they are refused;
a --cmd line names them as ignored): this rule reads them off a --cmd line for the fraction alone, the rest of what
they do is not modelled.
A given --mem-fraction-static is never adjusted (the factor applies to the automatic value only), so none of this
moves a launch that sets it. What else --language-only does to memory at 0.5.12 is not a term: the class still builds
and loads its vision tower (qwen3_vl.py:1099-1107 builds `self.visual` whatever the flag; qwen3_vl_moe.py:354-357 and
qwen3_vl.py:1366 skip only weights absent from the built parameters), and the scheduler makes its zmq_to_scheduler
receiver in `init_disaggregation` (scheduler.py:468, :1308-1318), after the model worker and the KV pool
(:437, :444). The logs agree: an E/PD notebook's language-only and aggregated Qwen3-VL-235B-FP8 starts load the same
55.84 GiB a rank (tests/engines/sglang/test_language_only_memory.py; their miss was the machine's free memory).
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.span import flag_set, flag_text

# (the flag as the engine's line spells it, whether it skips the factor at the release)
LANGUAGE_ONLY_ERAS: Eras[bool] = Eras((
    Era("", False, "server_args.py:956 at 0.5.7, :1036 at 0.5.8: `if model_config.is_multimodal` alone"),
    Era("0.5.9", True, "server_args.py:1068 at 0.5.9 … :4094 at 0.5.16: `and not self.language_only`; 0.5.17 :4797, "
                       "0.5.18 :4992, 0.5.23 arg_groups/memory_hook.py:285"),
))  # fmt: skip
DECODE_ERAS: Eras[bool] = Eras((
    Era("", False, "server_args.py:4094 at 0.5.16: the decode instance not tested"),
    Era("0.5.17", True, "server_args.py:4798 at 0.5.17: `and self.disaggregation_mode != \"decode\"`; 0.5.18 :4994, "
                        "0.5.23 arg_groups/memory_hook.py:287"),
))  # fmt: skip
LM_ONLY_ERAS: Eras[bool] = Eras((
    Era("", False, "no --language-model-only before 0.5.18"),
    Era("0.5.18", True, "server_args.py:4993 at 0.5.18: `and not self.language_model_only`; 0.5.23 "
                        "arg_groups/memory_hook.py:286"),
))  # fmt: skip


def vlm_factor_skipped_by(settings: LaunchSettings, version: ResolvedVersion) -> str | None:
    """Why this launch's automatic fraction takes no VLM factor at `version` (the flag and the release's line);
    None where it takes it."""
    checks = (
        ("--language-only", flag_set(settings, "language-only"), LANGUAGE_ONLY_ERAS),
        ("--disaggregation-mode decode", flag_text(settings, "disaggregation-mode") == "decode", DECODE_ERAS),
        ("--language-model-only", flag_set(settings, "language-model-only"), LM_ONLY_ERAS),
    )
    for flag, given, eras in checks:
        if given and eras.at(version):
            return f"{flag}: SGLang {version.label} leaves the VLM factor off ({eras.era(version).source})"
    return None
