"""Whose load vLLM's `Model loading took X GiB memory` line measures.

V1's runner logs it with `info_once`, scope 'local' (read in v0.13.0 and v0.27.1: vllm/logger.py:96-106,
v1/worker/gpu_model_runner.py:5405 at v0.27.1): the node's first local rank alone prints it, so under pipeline
parallelism on one node it is stage 0's. Where every worker printed its own, kvtop reads the log's first line
(`log.first`), the driver's (rank 0): stage 0's as well.
The ledger gives each other stage that figure plus its book's difference from stage 0's (`domain.stage_weights`)."""

#: the pipeline stage whose weights the log's load line prints
LOGGED_WEIGHTS_STAGE = 0
