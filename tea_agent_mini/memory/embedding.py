"""Choosing the embedder from the config, and embedding texts while learning which model did it.

Key rule: the main model's API key goes to an embeddings endpoint only when that endpoint is the
main model's own host; a different host gets ``embedding.api_key`` or nothing.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING
from urllib.parse import SplitResult, urlsplit

from ..errors import ConfigError
from .embedder import Embedder, FallbackEmbedder, LocalEmbedder, RemoteEmbedder

if TYPE_CHECKING:
    from ..config import EmbeddingConfig, ModelConfig

__all__ = ["LOCAL_DIMENSION", "build_embedder", "embed_texts", "same_host"]

log = logging.getLogger(__name__)

LOCAL_DIMENSION = 256
_LOCAL_PROVIDERS = ("", "local", "builtin", "none")


def build_embedder(config: EmbeddingConfig, main_model: ModelConfig | None = None) -> Embedder:
    """The embedder ``config`` asks for.

    No provider and no ``api_url`` (or provider ``local``): the built-in :class:`LocalEmbedder`.
    Otherwise a :class:`RemoteEmbedder` wrapped in a :class:`FallbackEmbedder` that falls back
    to the local one while the endpoint fails. Provider ``openai`` without ``api_url`` uses the
    main model's endpoint (and, being the same host, its key).

    Raises:
        ConfigError: a remote embedder is configured without a model name.
    """
    local = LocalEmbedder(LOCAL_DIMENSION)
    provider = config.provider.strip().lower()
    url = config.api_url.strip().rstrip("/")
    if provider in _LOCAL_PROVIDERS and not url:
        return local
    if provider == "local":
        return local
    if not url and main_model is not None:
        url = main_model.api_url.strip().rstrip("/")
    if not url:
        log.warning("embedding.provider is %r but no api_url is set; using %s", provider, local)
        return local
    if not config.model.strip():
        raise ConfigError(
            "embedding.model is not set; expected the embedding model's name "
            "(e.g. text-embedding-3-small), or remove embedding.api_url to use the local embedder"
        )
    remote = RemoteEmbedder(
        url,
        config.model.strip(),
        api_key=_api_key_for(url, config, main_model),
        dimensions=config.dimension if config.dimension > 0 else None,
    )
    return FallbackEmbedder(remote, local)


def _api_key_for(url: str, config: EmbeddingConfig, main_model: ModelConfig | None) -> str | None:
    if config.api_key:
        return config.api_key
    if main_model is not None and main_model.api_key and same_host(url, main_model.api_url):
        return main_model.api_key
    return None


def same_host(a: str, b: str) -> bool:
    """True when both URLs name the same scheme, host and port."""
    first, second = urlsplit(a.strip()), urlsplit(b.strip())
    if not first.hostname or not second.hostname:
        return False
    return (first.scheme.lower(), first.hostname.lower(), _port(first)) == (
        second.scheme.lower(),
        second.hostname.lower(),
        _port(second),
    )


def _port(parts: SplitResult) -> int | None:
    try:
        port = parts.port
    except ValueError:
        return None
    if port is not None:
        return port
    return {"http": 80, "https": 443}.get(parts.scheme.lower())


def embed_texts(embedder: Embedder, texts: list[str]) -> tuple[str, list[list[float]]]:
    """``(model_name, vectors)`` naming the model that really made the vectors.

    A :class:`FallbackEmbedder` may answer from its fallback; its ``embed_with_model`` says so.

    Raises:
        LLMError: a remote embedder without a fallback failed.
    """
    if not texts:
        return embedder.model_name, []
    with_model = getattr(embedder, "embed_with_model", None)
    if with_model is not None:
        model, vectors = with_model(texts)
        return str(model), vectors
    return embedder.model_name, embedder.embed(texts)
