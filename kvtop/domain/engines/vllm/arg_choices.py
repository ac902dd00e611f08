"""The `--dtype` and `--quantization` words vLLM takes, by release: any other stops the launch before anything is sized.

- `--dtype`: argparse `choices` auto, half, float16, bfloat16, float, float32 at every release read: v0.6.3.post1–v0.8.5
  engine/arg_utils.py (`'--dtype', choices=[...]`), v0.9.0 on config.py `ModelDType` Literal, turned into choices by
  get_kwargs (v0.33.0 config/model.py:100; `get_kwargs(ModelConfig)["dtype"]["choices"]` run on the v0.33.0 wheel gives
  the same six). Releases between those read alike (both sides agree).
- `--quantization`: the release's `QUANTIZATION_METHODS` (model_executor/layers/quantization/__init__.py, a dict or list
  up to v0.8.4, `get_args(QuantizationMethods)` from v0.8.5). Up to v0.8.5 argparse refuses another word
  (`choices=[*QUANTIZATION_METHODS, None]`, engine/arg_utils.py); later releases take any string at the command line
  (v0.33.0's get_kwargs gives no choices) and `ModelConfig._verify_quantization` raises "Unknown quantization method:
  X. Must be one of [...]" (config.py:308 v0.6.3.post1, config/model.py:946 v0.13.0, :1467 v0.33.0). From v0.14.0
  a method in `DEPRECATED_QUANTIZATION_METHODS` is refused next ("The quantization method X is deprecated ... To
  bypass, set `--allow-deprecated-quantization`", config/model.py:950 v0.14.0, :1472 v0.33.0) unless that flag is
  given (`DEPRECATED_ERAS`). Read off the wheels from PyPI: every release v0.6.3.post1–v0.33.0 (v0.14.1–v0.32.0
  by benchmarks/engine_registries/vllm_quantization.py, which reproduces the v0.11.1–v0.14.0 and v0.33.0 rows read
  before); a release before v0.6.3.post1 refuses nothing. A method a plugin registers
  (register_quantization_config, v0.7.0 on) is not one kvtop models either.
"""

from __future__ import annotations

from collections.abc import Iterable

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.errors import InputError
from kvtop.domain.redact import quoted

DTYPE_FLAG = "--dtype"
QUANTIZATION_FLAG = "--quantization"
DTYPES = ("auto", "half", "float16", "bfloat16", "float", "float32")
LOGGED_PREFIX = "torch."  # how a log's config line writes the resolved dtype
_INIT = "model_executor/layers/quantization/__init__.py"


def _grown(base: Iterable[str], add: Iterable[str] = (), drop: Iterable[str] = ()) -> tuple[str, ...]:
    """A release's methods: the previous release's, less `drop`, with `add`."""
    dropped = set(drop)
    return tuple(sorted({*(name for name in base if name not in dropped), *add}))


_V063 = _grown(("aqlm", "awq", "awq_marlin", "bitsandbytes", "compressed-tensors", "deepspeedfp", "experts_int8",
                "fbgemm_fp8", "fp8", "gguf", "gptq", "gptq_marlin", "gptq_marlin_24", "ipex", "marlin", "modelopt",
                "neuron_quant", "qqq", "tpu_int8"))  # fmt: skip
_V065 = _grown(_V063, ("hqq",))
_V070 = _grown(_V065, ("quark",))
_V071 = _grown(_V070, ("moe_wna16",))
_V073 = _grown(_V071, ("ptpc_fp8",))
_V080 = _grown(_V073, ("nvfp4",))
_V084 = _grown(_V080, ("torchao",))
_V085 = _grown(_V084, ("bitblas", "gptq_bitblas"))
_V090 = _grown(_V085, ("auto-round", "modelopt_fp4"), ("nvfp4",))
_V092 = _grown(_V090, ("rtn",))
_V0100 = _grown(_V092, ("inc",))
_V0101 = _grown(_V0100, ("mxfp4",), ("aqlm",))
_V0102 = _grown(_V0101, ("petit_nvfp4",), ("marlin", "neuron_quant", "qqq"))
_V0111 = _grown(_V0102, ("fp_quant",))
_V0120 = _grown(_V0111, ("cpu_awq", "cpu_gptq"))
_V0140 = _grown(_V0120, (), ("cpu_gptq", "tpu_int8"))
_V0150 = _grown(_V0140, (), ("auto-round", "deepspeedfp", "hqq", "rtn"))
_V0160 = _grown(_V0150, ("modelopt_mxfp8",), ("bitblas", "gptq_bitblas", "gptq_marlin_24", "ipex"))
_V0170 = _grown(_V0160, ("modelopt_mixed",))
_V0190 = _grown(_V0170, ("mxfp8",), ("ptpc_fp8",))
_V0200 = _grown(_V0190, ("deepseek_v4_fp8", "fp8_per_block", "fp8_per_tensor", "gpt_oss_mxfp4", "humming",
                         "int8_per_channel_weight_only", "online"), ("petit_nvfp4",))  # fmt: skip
_V0220 = _grown(_V0200, ("auto_gptq",))
_V0230 = _grown(_V0220, (), ("cpu_awq",))
_V0240 = _grown(_V0230, ("auto_awq", "fp8_per_channel"), ("gguf",))
_V0260 = _grown(_V0240, ("nvfp4_per_token",))
_V0280 = _grown(_V0260, (), ("bitsandbytes",))
_V0330 = ("auto_awq", "auto_gptq", "awq", "awq_marlin", "compressed-tensors", "deepseek_v4_fp8", "experts_int8",
          "fbgemm_fp8", "fp8", "fp8_per_block", "fp8_per_channel", "fp8_per_tensor", "fp_quant", "gpt_oss_mxfp4",
          "gptq", "gptq_marlin", "humming", "inc", "int8_per_channel_weight_only", "modelopt", "modelopt_fp4",
          "modelopt_mixed", "modelopt_mxfp8", "moe_wna16", "mxfp4", "mxfp8", "nvfp4_per_token", "online", "quark",
          "torchao")  # fmt: skip
_V0340 = _grown(_V0330, ("lut_b_moe", "mxfp4_hadamard32", "w4afp8"), ("fp_quant",))
#: the methods the release takes (None: not read, nothing refused)
QUANTIZATION_ERAS: Eras[tuple[str, ...] | None] = Eras((
    Era("", None, "before v0.6.3.post1 not read"),
    Era("0.6.3.post1", _V063, f"v0.6.3.post1 {_INIT} QUANTIZATION_METHODS (v0.6.4 alike)"),
    Era("0.6.5", _V065, f"v0.6.5 {_INIT}: + hqq (v0.6.6 alike)"),
    Era("0.7.0", _V070, f"v0.7.0 {_INIT}: + quark"),
    Era("0.7.1", _V071, f"v0.7.1 {_INIT}: + moe_wna16 (v0.7.2 alike)"),
    Era("0.7.3", _V073, f"v0.7.3 {_INIT}: + ptpc_fp8"),
    Era("0.8.0", _V080, f"v0.8.0 {_INIT}: + nvfp4 (v0.8.1–v0.8.3 alike)"),
    Era("0.8.4", _V084, f"v0.8.4 {_INIT}: + torchao"),
    Era("0.8.5", _V085, f"v0.8.5 {_INIT} QuantizationMethods: + bitblas, gptq_bitblas"),
    Era("0.9.0", _V090, f"v0.9.0 {_INIT}: + auto-round, modelopt_fp4, - nvfp4 (v0.9.1 alike)"),
    Era("0.9.2", _V092, f"v0.9.2 {_INIT}: + rtn"),
    Era("0.10.0", _V0100, f"v0.10.0 {_INIT}: + inc"),
    Era("0.10.1", _V0101, f"v0.10.1 {_INIT}: + mxfp4, - aqlm (v0.10.1.1 alike)"),
    Era("0.10.2", _V0102, f"v0.10.2 {_INIT}: + petit_nvfp4, - marlin, neuron_quant, qqq (v0.11.0 alike)"),
    Era("0.11.1", _V0111, f"v0.11.1 {_INIT}: + fp_quant (v0.11.2 alike)"),
    Era("0.12.0", _V0120, f"v0.12.0 {_INIT}: + cpu_awq, cpu_gptq (v0.13.0 alike)"),
    Era("0.14.0", _V0140, f"v0.14.0 {_INIT}: - cpu_gptq, tpu_int8"),
    Era("0.14.1", _V0140, f"v0.14.1 {_INIT}:12: the same as v0.14.0"),
    Era("0.15.0", _V0150, f"v0.15.0 {_INIT}:12: - auto-round, deepspeedfp, hqq, rtn (v0.15.1 alike)"),
    Era("0.16.0", _V0160, f"v0.16.0 {_INIT}:12: + modelopt_mxfp8, - bitblas, gptq_bitblas, gptq_marlin_24, ipex"),
    Era("0.17.0", _V0170, f"v0.17.0 {_INIT}:12: + modelopt_mixed (v0.17.1–v0.18.1 alike)"),
    Era("0.19.0", _V0190, f"v0.19.0 {_INIT}:12: + mxfp8, - ptpc_fp8 (v0.19.1 alike)"),
    Era("0.20.0", _V0200, f"v0.20.0 {_INIT}:12: + deepseek_v4_fp8, fp8_per_block, fp8_per_tensor, gpt_oss_mxfp4, "
                          "humming, int8_per_channel_weight_only, online, - petit_nvfp4 (v0.20.1–v0.21.0 alike)"),
    Era("0.22.0", _V0220, f"v0.22.0 {_INIT}:12: + auto_gptq (v0.22.1 alike)"),
    Era("0.23.0", _V0230, f"v0.23.0 {_INIT}:12: - cpu_awq"),
    Era("0.24.0", _V0240, f"v0.24.0 {_INIT}:12: + auto_awq, fp8_per_channel, - gguf (v0.25.0–v0.25.1 alike)"),
    Era("0.26.0", _V0260, f"v0.26.0 {_INIT}:12: + nvfp4_per_token (v0.27.0–v0.27.1 alike)"),
    Era("0.28.0", _V0280, f"v0.28.0 {_INIT}:12: - bitsandbytes (v0.29.0–v0.32.0 alike)"),
    Era("0.33.0", _V0330, f"v0.33.0 {_INIT} QuantizationMethods (v0.32.0's, listed whole)"),
    Era("0.34.0", _V0340, f"v0.34.0 {_INIT}:15: + lut_b_moe, mxfp4_hadamard32, w4afp8, - fp_quant"),
))  # fmt: skip
#: DEPRECATED_QUANTIZATION_METHODS: refused unless --allow-deprecated-quantization, after the unknown-method check
#: (ModelConfig._verify_quantization; tpu_int8 is listed but no longer a method, so refused as unknown first)
DEPRECATED_ERAS: Eras[tuple[str, ...]] = Eras((
    Era("", (), "before v0.14.0 no deprecated method is refused (config/model.py at v0.13.0 has no such check)"),
    Era("0.14.0", ("auto-round", "bitblas", "deepspeedfp", "experts_int8", "fbgemm_fp8", "fp_quant", "gptq_bitblas",
                   "gptq_marlin_24", "hqq", "ipex", "petit_nvfp4", "ptpc_fp8", "rtn", "tpu_int8"),
        f"v0.14.0 {_INIT}:45 DEPRECATED_QUANTIZATION_METHODS, config/model.py:950 (v0.14.1 alike)"),
    Era("0.15.0", ("bitblas", "experts_int8", "fbgemm_fp8", "fp_quant", "gptq_bitblas", "gptq_marlin_24", "ipex",
                   "petit_nvfp4", "ptpc_fp8", "tpu_int8"), f"v0.15.0 {_INIT}:41, config/model.py:963 (v0.15.1 alike)"),
    Era("0.16.0", ("experts_int8", "fbgemm_fp8", "fp_quant", "petit_nvfp4", "ptpc_fp8", "tpu_int8"),
        f"v0.16.0 {_INIT}:38, config/model.py:942 (v0.17.0–v0.18.1 alike)"),
    Era("0.19.0", ("experts_int8", "fbgemm_fp8", "fp_quant", "petit_nvfp4", "tpu_int8"),
        f"v0.19.0 {_INIT}:39, config/model.py:1004 (v0.19.1 alike)"),
    Era("0.20.0", ("fbgemm_fp8", "fp_quant", "tpu_int8"), f"v0.20.0 {_INIT}:49, config/model.py:1018 (v0.20.1–v0.22.1 alike)"),
    Era("0.23.0", ("fbgemm_fp8", "fp_quant"), f"v0.23.0 {_INIT}:48, config/model.py:1083 (to v0.32.0; v0.33.0 "
                                              "config/model.py:1472)"),
    Era("0.34.0", ("fbgemm_fp8",), f"v0.34.0 {_INIT}:54, config/model.py:1492 (fp_quant no longer a method: "
                                   "refused as unknown, :1487)"),
))  # fmt: skip
ALLOW_DEPRECATED_FLAG = "--allow-deprecated-quantization"


def refuse_dtype(value: object, flag: str = DTYPE_FLAG) -> None:
    """A `--dtype` outside vLLM's six words: its argparse refuses it ('invalid choice') at every release read. A
    `torch.*` value is a log's reading of the dtype vLLM resolved (its config line prints `dtype=torch.bfloat16`,
    ModelConfig.dtype after _get_and_verify_dtype), not a typed word: passed."""
    if isinstance(value, str) and value not in DTYPES and not value.startswith(LOGGED_PREFIX):
        raise InputError(
            f"vLLM refuses {quoted(value)} ('invalid choice'): it takes {', '.join(DTYPES)} "
            "(ModelDType, config/model.py; engine/arg_utils.py choices before v0.9.0)",
            field=flag,
        )


def refuse_quantization(value: object, version: ResolvedVersion, flag: str = QUANTIZATION_FLAG, *,
                        allow_deprecated: bool = False) -> None:  # fmt: skip
    """A `--quantization` the release does not know: argparse's 'invalid choice' (to v0.8.5) or ModelConfig's
    'Unknown quantization method' (after); from v0.14.0 one it deprecates, unless `allow_deprecated`
    (--allow-deprecated-quantization given); a release not read refuses nothing."""
    era = QUANTIZATION_ERAS.era(version)
    if not isinstance(value, str) or era.value is None:
        return
    if value not in era.value:
        raise InputError(
            f"vLLM {version.label} refuses {quoted(value)} ('Unknown quantization method', argparse's 'invalid choice' "
            f"to v0.8.5): it takes {', '.join(era.value)} ({era.source})",
            field=flag,
        )
    deprecated = DEPRECATED_ERAS.era(version)
    if value in deprecated.value and not allow_deprecated:
        raise InputError(
            f"vLLM {version.label} refuses {value!r}: 'The quantization method {value} is deprecated and will be "
            f"removed in future versions of vLLM. To bypass, set `{ALLOW_DEPRECATED_FLAG}`' ({deprecated.source})",
            field=flag,
        )
