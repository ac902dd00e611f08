"""The files kvtop fetches from the Hugging Face hub once it has answered: a repo's config.json (a Mistral-format
repo's params.json) and hf_quant_config.json into the cache, and the checkpoint's exact tensor bytes from its safetensors
headers over HTTP range requests (huggingface_hub's `get_safetensors_metadata`), never from the weights. Split out of
hub.py, which decides where a model's config comes from (path, folder, preset, cache or hub) and reads it."""

from __future__ import annotations

from pathlib import Path

from kvtop.domain.errors import InputError
from kvtop.domain.redact import shown_cut
from kvtop.domain.safetensors_header import header_bytes

HUB_READ_TIMEOUT_S = 10.0  # per request once the hub has answered
MISTRAL_PARAMS = "params.json"  # a Mistral-format checkpoint's config (vLLM --config-format mistral)


def download_config(repo_id: str) -> tuple[Path, Path | None]:
    """config.json (and hf_quant_config.json where the repo has one) into the cache."""
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import EntryNotFoundError, HfHubHTTPError

    try:
        config = Path(hf_hub_download(repo_id, "config.json", etag_timeout=HUB_READ_TIMEOUT_S))
    except EntryNotFoundError:  # a Mistral-format repo (its probe found params.json)
        return download_params(repo_id), None
    except (HfHubHTTPError, OSError) as err:
        raise InputError(
            f"cannot fetch config.json from the hub ({err.__class__.__name__})",
            field="--model",
            source=repo_id,
            value_is_file=True,
        ) from None
    try:
        quant: Path | None = Path(
            hf_hub_download(repo_id, "hf_quant_config.json", etag_timeout=HUB_READ_TIMEOUT_S)
        )
    except (HfHubHTTPError, EntryNotFoundError, OSError):
        quant = None
    return config, quant


def download_params(repo_id: str) -> Path:
    """A Mistral-format repo's params.json into the cache."""
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import EntryNotFoundError, HfHubHTTPError

    try:
        return Path(hf_hub_download(repo_id, MISTRAL_PARAMS, etag_timeout=HUB_READ_TIMEOUT_S))
    except (HfHubHTTPError, EntryNotFoundError, OSError) as err:
        raise InputError(
            f"cannot fetch config.json or params.json from the hub ({err.__class__.__name__})",
            field="--model",
            source=repo_id,
            value_is_file=True,
        ) from None


def hub_safetensors_bytes(repo_id: str) -> int | None:
    """The repo's tensor bytes from its safetensors headers (HTTP range requests); None if it has none.

    A network failure here leaves the bytes unknown (the config was read); a malformed header is
    an InputError naming the shard and the tensor.
    """
    from huggingface_hub import HfApi
    from huggingface_hub.errors import HfHubHTTPError, NotASafetensorsRepoError, SafetensorsParsingError
    from huggingface_hub.utils.tqdm import disable_progress_bars

    disable_progress_bars()  # its per-shard progress bar would land on kvtop's stderr
    try:
        metadata = HfApi().get_safetensors_metadata(repo_id)
    except NotASafetensorsRepoError:
        return None
    except SafetensorsParsingError as err:
        raise InputError(f"unreadable safetensors header: {shown_cut(str(err), 160)}", source=repo_id) from None
    except Exception as err:
        if isinstance(err, (HfHubHTTPError, OSError, TimeoutError)) or _is_transport_error(err):
            return None
        raise
    total = 0
    for filename, file_metadata in sorted(metadata.files_metadata.items()):
        header = {
            name: {"dtype": info.dtype, "shape": list(info.shape), "data_offsets": list(info.data_offsets)}
            for name, info in file_metadata.tensors.items()
        }
        total += header_bytes(header, source=f"{repo_id}/{filename}")
    return total


def _is_transport_error(err: BaseException) -> bool:
    """A connection or timeout error of the HTTP client huggingface_hub uses (httpx or requests)."""
    return any(cls.__name__ in ("TransportError", "RequestException") for cls in type(err).__mro__)
