"""The `method` values of `--speculative-config` each vLLM release accepts (docs/engines/vllm.md §14).

`SpeculativeConfig` is a pydantic dataclass (`@config`, config/utils.py) whose `method` is the `SpeculativeMethod`
Literal of config/speculative.py: any other value stops the launch in validation. Read in the v0.13.0 and v0.33.0
wheels; releases between them were not read, so they accept either list's methods (a launch is never refused for
a method one of them has), and releases before v0.13.0 are checked against v0.13.0's.
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras

_MTP_0_13 = ("deepseek_mtp", "mimo_mtp", "glm4_moe_mtp", "ernie_mtp", "qwen3_next_mtp", "longcat_flash_mtp", "mtp",
             "pangu_ultra_moe_mtp")  # fmt: skip
V0_13 = ("ngram", "medusa", "mlp_speculator", "draft_model", "suffix", "eagle", "eagle3", *_MTP_0_13)
_MTP_0_33 = (
    "deepseek_mtp", "dots3_note_mtp", "mimo_mtp", "mimo_v2_mtp", "glm4_moe_mtp", "glm4_moe_lite_mtp", "glm_ocr_mtp",
    "ernie_mtp", "nemotron_h_mtp", "exaone_moe_mtp", "exaone4_5_mtp", "qwen3_next_mtp", "qwen4_exp_mtp",
    "qwen3_5_mtp", "longcat_flash_mtp", "bailing_hybrid_v3_mtp", "minimax_m3_mtp", "bailing_hybrid_mtp", "mtp",
    "kimi_k3_mtp", "pangu_ultra_moe_mtp", "step3p5_mtp", "step5_mtp", "hy_v3_mtp", "hy_v4_mtp", "gemma4_mtp",
    "inkling_mtp", "glm5_next_mtp",
)  # fmt: skip
# v0.33.0 dropped medusa and mlp_speculator, added custom_class, extract_hidden_states, dflash, ngram_gpu, dspark
V0_33 = ("ngram", "draft_model", "suffix", "custom_class", "eagle", "eagle3", "extract_hidden_states", *_MTP_0_33,
         "dflash", "ngram_gpu", "dspark")  # fmt: skip
_SOURCE = "config/speculative.py SpeculativeMethod"
METHOD_ERAS: Eras[tuple[str, ...]] = Eras((
    Era("", V0_13, f"{_SOURCE} (read at v0.13.0; earlier releases not read)"),
    Era("0.13.1", tuple(dict.fromkeys((*V0_13, *V0_33))),
        f"{_SOURCE}: releases after v0.13.0 and before v0.33.0 not read, either one's methods"),
    Era("0.33.0", V0_33, f"{_SOURCE} (read at v0.33.0)"),
))  # fmt: skip
