"""The GPU and the attention backend a vLLM log names (issue #28): the lines as vLLM prints them, quoted from
real logs (tests/data/cases; vllm PR #22738's B200 log), read into vLLM's enum spelling and the MLA block
vLLM's code gives for them (v0.8.3 cuda.py: TRITON_MLA when `block_size != 64`; a forced size wins)."""

from __future__ import annotations

from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.log_hardware import log_attention_backend, log_block, log_gpu_name
from kvtop.sources.engine_logs import parse_engine_log
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS

V0 = "INFO 04-20 16:47:03 [llm_engine.py:242] Initializing a V0 LLM engine (v0.8.3) with config: model='x'\n"
MOE_WARNING = (
    "(RayWorkerWrapper pid=627, ip=10.244.1.107) WARNING 04-20 17:00:54 [fused_moe.py:659] Using default MoE "
    "config. Performance might be sub-optimal! Config file not found at /usr/local/lib/python3.12/dist-packages/"
    "vllm/model_executor/layers/fused_moe/configs/E=160,N=192,device_name=NVIDIA_A100-SXM4-40GB.json\n"
)
# vllm PR #22738 (2025-08-12): on B200 the block was forced to 128 while Triton MLA was chosen
B200 = (
    "(APIServer pid=183965) INFO 08-12 10:27:33 [cuda.py:184] Forcing kv cache block size to 128 for CUTLASS_MLA backend.\n"
    "(EngineCore_0 pid=184744) INFO 08-12 10:27:40 [cuda.py:240] Using Triton MLA backend on V1 engine.\n"
)
DEEPSEEK = load_model(str(CONFIGS / "cases/deepseek-ai--DeepSeek-V2.json"))
V083 = ResolvedVersion(text="0.8.3")


def test_the_device_name_and_the_triton_mla_backend() -> None:
    log = parse_engine_log(V0 + "INFO 04-20 16:47:17 [cuda.py:191] Using Triton MLA backend.\n" + MOE_WARNING)
    assert log_gpu_name(log) == "NVIDIA A100-SXM4-40GB"
    assert log_attention_backend(log) == "TRITON_MLA"
    assert log_block(log, DEEPSEEK, V083) == (16, "16: TRITON_MLA, the attention backend the log names")


def test_a_forced_block_wins_over_the_backend_named_after_it() -> None:
    log = parse_engine_log(B200)
    assert log_attention_backend(log) == "TRITON_MLA"
    assert log_block(log, DEEPSEEK, ResolvedVersion(text="0.10.1"))[0] == 128


def test_the_v1_and_enum_spellings() -> None:
    for line, name in (
        ("INFO 03-01 10:00:00 [cuda.py:211] Using FlashMLA backend on V1 engine.", "FLASHMLA"),
        ("INFO 03-01 10:00:00 [cuda.py:211] Using Cutlass MLA backend on V1 engine.", "CUTLASS_MLA"),
        ("(EngineCore pid=1) INFO 03-01 10:00:00 [cuda.py:330] Using AttentionBackendEnum.FLASHMLA backend.", "FLASHMLA"),
        ("INFO 03-01 10:00:00 [cuda.py:240] Using Flash Attention backend on V1 engine.", "FLASH_ATTN"),
    ):  # fmt: skip
        assert log_attention_backend(parse_engine_log(V0 + line + "\n")) == name, line
    assert log_block(parse_engine_log(V0 + "INFO 03-01 10:00:00 [cuda.py:211] Using FlashMLA backend.\n"), DEEPSEEK, V083)[0] == 64


def test_another_engines_backend_and_moe_paths_are_not_vllms() -> None:
    """TensorRT-LLM's `Using LLM with PyTorch backend` and SGLang's own fused-MoE config path name no vLLM
    backend or GPU (they would otherwise count as vLLM lines)."""
    trtllm = "[08/12/2025-10:00:00] [TRT-LLM] [I] Using LLM with PyTorch backend\n"
    sglang = (
        "[2025-08-12 10:00:00 TP0] Using default MoE kernel config. Performance might be sub-optimal! Config file not "
        "found at /sgl-workspace/sglang/python/sglang/srt/layers/moe/fused_moe_triton/configs/triton_3_3_1/"
        "E=160,N=192,device_name=NVIDIA_H100_80GB_HBM3.json\n"
    )
    log = parse_engine_log(trtllm + sglang)
    assert log_attention_backend(log) is None and log_gpu_name(log) is None
