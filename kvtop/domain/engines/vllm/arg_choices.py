"""The `--dtype` and `--quantization` words vLLM takes, by release: any other stops the launch before anything is sized.

- `--dtype`: argparse `choices` auto, half, float16, bfloat16, float, float32 at every release read: v0.6.3.post1–v0.8.5
  engine/arg_utils.py (`'--dtype', choices=[...]`), v0.9.0 on config.py `ModelDType` Literal, turned into choices by
  get_kwargs (v0.33.0 config/model.py:100; `get_kwargs(ModelConfig)["dtype"]["choices"]` run on the v0.33.0 wheel gives
  the same six). Releases between those read alike (both sides agree).
- `--quantization`: the release's `QUANTIZATION_METHODS` (model_executor/layers/quantization/__init__.py, a dict or list
  up to v0.8.4, `get_args(QuantizationMethods)` from v0.8.5). Up to v0.8.5 argparse refuses another word
  (`choices=[*QUANTIZATION_METHODS, None]`, engine/arg_utils.py); later releases take any string at the command line
  (v0.33.0's get_kwargs gives no choices) and `ModelConfig._verify_quantization` raises "Unknown quantization method:
  X. Must be one of [...]" (config.py:308 v0.6.3.post1, config/model.py:946 v0.13.0, :1467 v0.33.0). Read off the
  wheels from PyPI: every release v0.6.3.post1–v0.14.0 and v0.33.0; v0.14.1–v0.32.x not read (nothing refused). A
  method a plugin registers (register_quantization_config, v0.7.0 on) is not one kvtop models either.
"""

from __future__ import annotations

from collections.abc import Iterable

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.errors import InputError

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
_V0330 = ("auto_awq", "auto_gptq", "awq", "awq_marlin", "compressed-tensors", "deepseek_v4_fp8", "experts_int8",
          "fbgemm_fp8", "fp8", "fp8_per_block", "fp8_per_channel", "fp8_per_tensor", "fp_quant", "gpt_oss_mxfp4",
          "gptq", "gptq_marlin", "humming", "inc", "int8_per_channel_weight_only", "modelopt", "modelopt_fp4",
          "modelopt_mixed", "modelopt_mxfp8", "moe_wna16", "mxfp4", "mxfp8", "nvfp4_per_token", "online", "quark",
          "torchao")  # fmt: skip
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
    Era("0.14.1", None, "v0.14.1–v0.32.x not read: nothing refused"),
    Era("0.33.0", _V0330, f"v0.33.0 {_INIT} QuantizationMethods"),
))  # fmt: skip


def refuse_dtype(value: object, flag: str = DTYPE_FLAG) -> None:
    """A `--dtype` outside vLLM's six words: its argparse refuses it ('invalid choice') at every release read. A
    `torch.*` value is a log's reading of the dtype vLLM resolved (its config line prints `dtype=torch.bfloat16`,
    ModelConfig.dtype after _get_and_verify_dtype), not a typed word: passed."""
    if isinstance(value, str) and value not in DTYPES and not value.startswith(LOGGED_PREFIX):
        raise InputError(
            f"vLLM refuses {value[:40]!r} ('invalid choice'): it takes {', '.join(DTYPES)} "
            "(ModelDType, config/model.py; engine/arg_utils.py choices before v0.9.0)",
            field=flag,
        )


def refuse_quantization(value: object, version: ResolvedVersion, flag: str = QUANTIZATION_FLAG) -> None:
    """A `--quantization` the release does not know: argparse's 'invalid choice' (to v0.8.5) or ModelConfig's
    'Unknown quantization method' (after); a release not read refuses nothing."""
    era = QUANTIZATION_ERAS.era(version)
    if not isinstance(value, str) or era.value is None or value in era.value:
        return
    raise InputError(
        f"vLLM {version.label} refuses {value[:40]!r} ('Unknown quantization method', argparse's 'invalid choice' "
        f"to v0.8.5): it takes {', '.join(era.value)} ({era.source})",
        field=flag,
    )
