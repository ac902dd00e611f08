"""llama.cpp's `llama-server` seen from outside: its `/metrics`, `/slots` and `/props` (`endpoint`) and its
GGUF model files (`gguf_file`). Everything pure it knows (log lines, demo behaviour, identity) is
`kvtop.domain.engines.llamacpp`."""

MODEL_FILE_MODULE = "gguf_file"  # its model files (.gguf) are read by `gguf_file.read_model_file`
