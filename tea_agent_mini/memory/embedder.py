"""Text embedders: an offline feature-hashing one, an OpenAI-compatible remote one, and a
wrapper that falls back from the remote to the local one.

All are synchronous (memory work runs in worker threads) and return L2-normalised vectors as
lists of floats. Each has a ``model_name``; callers store it with every vector so vectors made
by another model can be re-embedded lazily.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import math
import re
import threading
import time
import unicodedata
from array import array
from collections import Counter, OrderedDict
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import LLMError, UpstreamError
from ..redact import mask_text, mask_url, url_secrets
from ..vectors import normalize, unpack

if TYPE_CHECKING:
    import httpx

__all__ = ["Embedder", "FallbackEmbedder", "LocalEmbedder", "RemoteEmbedder"]

log = logging.getLogger(__name__)


class Embedder(Protocol):
    """Turns texts into normalised vectors, one per text, in order."""

    @property
    def model_name(self) -> str: ...

    def embed(self, texts: list[str]) -> list[list[float]]: ...


# Kana, CJK extension A, CJK unified ideographs, compatibility ideographs, Hangul syllables.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_TOKENS = re.compile(f"([{_CJK}]+)|([^\\W_{_CJK}]+)")

# Whole words and CJK bigrams carry meaning; character n-grams and single CJK characters only
# soften the match (plurals, inflections, word order), so they weigh less.
_WEIGHTS = {"w": 1.0, "g": 0.5, "b": 1.0, "c": 0.5}


def _features(text: str) -> Counter[str]:
    """Counts of prefixed features: w:word, g:3-gram of <word>, b:CJK bigram, c:CJK char."""
    counts: Counter[str] = Counter()
    for cjk, word in _TOKENS.findall(unicodedata.normalize("NFKC", text).lower()):
        if cjk:
            counts.update("c:" + char for char in cjk)
            counts.update("b:" + cjk[i : i + 2] for i in range(len(cjk) - 1))
        else:
            counts["w:" + word] += 1
            marked = f"<{word}>"
            counts.update("g:" + marked[i : i + 3] for i in range(len(marked) - 2))
    return counts


class LocalEmbedder:
    """Offline embedder: signed feature hashing of words, word 3-grams and CJK 1/2-grams.

    Deterministic across processes and platforms (blake2b, not ``hash()``), with sublinear
    term frequency. It finds keyword overlap, not paraphrase.
    """

    def __init__(self, dim: int = 256) -> None:
        if dim <= 0:
            raise ValueError(f"embedding dimension must be positive, got {dim}")
        self._dim = dim

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def model_name(self) -> str:
        return f"local-hash-{self._dim}"

    def embed(self, texts: list[str]) -> list[list[float]]:
        return [self._embed_one(text) for text in texts]

    def _embed_one(self, text: str) -> list[float]:
        vec = [0.0] * self._dim
        for feature, count in _features(text).items():
            digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
            value = int.from_bytes(digest, "little")
            weight = _WEIGHTS[feature[0]] * (1.0 + math.log(count))
            vec[value % self._dim] += weight if value >> 63 else -weight
        return normalize(vec)


class RemoteEmbedder:
    """Embeddings from an OpenAI-compatible ``POST {api_url}/embeddings``.

    Texts are sent in batches of ``batch_size``; results are cached in memory (LRU of
    ``cache_size`` texts, keyed by SHA-256) so a text is fetched once. Thread-safe.
    ``Authorization`` is sent only when ``api_key`` is given. Call :meth:`close` when done.
    """

    def __init__(
        self,
        api_url: str,
        model: str,
        api_key: str | None = None,
        dimensions: int | None = None,
        batch_size: int = 64,
        timeout: float = 30,
        cache_size: int = 4096,
    ) -> None:
        if batch_size <= 0:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        self._url = api_url.rstrip("/") + "/embeddings"
        self._shown_url = mask_url(self._url)  # for errors: no credentials or query values
        self._model = model
        self._api_key = api_key
        self._dimensions = dimensions
        self._batch_size = batch_size
        self._timeout = timeout
        self._cache_size = cache_size
        self._cache: OrderedDict[bytes, tuple[float, ...]] = OrderedDict()
        self._lock = threading.Lock()
        self._client: httpx.Client | None = None

    @property
    def model_name(self) -> str:
        # Vectors of one model at another size are not comparable, so the size is part of it.
        return self._model if self._dimensions is None else f"{self._model}@{self._dimensions}"

    def embed(self, texts: list[str]) -> list[list[float]]:
        """One normalised vector per text.

        Raises:
            UpstreamError: the endpoint could not be reached or answered with an error or
                with something that is not a list of embeddings.
        """
        keys = [hashlib.sha256(text.encode("utf-8")).digest() for text in texts]
        found = self._cached(keys)
        missing = {key: text for key, text in zip(keys, texts, strict=True) if key not in found}
        pending = list(missing.items())
        for start in range(0, len(pending), self._batch_size):
            batch = pending[start : start + self._batch_size]
            vectors = self._request([text for _, text in batch])
            fetched = {key: tuple(vec) for (key, _), vec in zip(batch, vectors, strict=True)}
            found.update(fetched)
            self._remember(fetched)
        return [list(found[key]) for key in keys]

    def close(self) -> None:
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def __enter__(self) -> RemoteEmbedder:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _cached(self, keys: list[bytes]) -> dict[bytes, tuple[float, ...]]:
        found = {}
        with self._lock:
            for key in keys:
                vec = self._cache.get(key)
                if vec is not None:
                    self._cache.move_to_end(key)
                    found[key] = vec
        return found

    def _remember(self, fetched: dict[bytes, tuple[float, ...]]) -> None:
        with self._lock:
            self._cache.update(fetched)
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)

    def _http(self) -> httpx.Client:
        import httpx

        with self._lock:
            if self._client is None:
                self._client = httpx.Client(timeout=self._timeout)
            return self._client

    def _request(self, inputs: list[str]) -> list[list[float]]:
        import httpx

        payload: dict[str, Any] = {"model": self._model, "input": inputs}
        if self._dimensions is not None:
            payload["dimensions"] = self._dimensions
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        try:
            response = self._http().post(self._url, json=payload, headers=headers)
        except httpx.HTTPError as exc:
            raise UpstreamError(
                f"embeddings request to {self._shown_url} failed: {self._clean(str(exc))}",
                hint="check api_url",
            ) from exc
        if response.status_code >= 400:
            raise UpstreamError(self._error_text(response.content), status=response.status_code)
        try:
            data = response.json()
        except ValueError as exc:
            raise UpstreamError(f"embeddings response from {self._shown_url} is not JSON") from exc
        if isinstance(data, dict) and data.get("error"):  # some proxies send errors with 200
            raise UpstreamError(self._error_text(response.content))
        return _parse_embeddings(data, len(inputs))

    def _error_text(self, body: bytes) -> str:
        from ..llm.http_errors import extract_error_message

        message, _ = extract_error_message(body)
        return self._clean(message)

    def _clean(self, text: str) -> str:
        return mask_text(text, [self._api_key or "", *url_secrets(self._url)])


def _parse_embeddings(data: Any, count: int) -> list[list[float]]:
    """Normalised vectors from an OpenAI embeddings response, in input order."""
    items = data.get("data") if isinstance(data, dict) else None
    if not isinstance(items, list) or len(items) != count:
        got = len(items) if isinstance(items, list) else "no"
        raise UpstreamError(f"expected {count} embeddings in the response, got {got}")
    if all(isinstance(item, dict) and isinstance(item.get("index"), int) for item in items):
        items = sorted(items, key=lambda item: item["index"])
    vectors = []
    for item in items:
        raw = item.get("embedding") if isinstance(item, dict) else None
        try:
            if isinstance(raw, str):  # encoding_format="base64": little-endian float32
                raw = unpack(base64.b64decode(raw, validate=True))
            if not isinstance(raw, (list, array)) or not raw:
                raise ValueError("an embedding is not a list of numbers")
            if not all(isinstance(x, (int, float)) for x in raw):
                raise ValueError("an embedding is not a list of numbers")
            vectors.append(normalize(raw))
        except ValueError as exc:  # binascii.Error is a ValueError too
            raise UpstreamError(f"malformed embedding in the response: {exc}") from exc
    if len({len(vec) for vec in vectors}) > 1:
        raise UpstreamError("the response mixes embeddings of different lengths")
    return vectors


class FallbackEmbedder:
    """``primary`` while it works, else ``fallback`` (normally a :class:`LocalEmbedder`).

    After a failure the primary is left alone for ``retry_interval`` seconds, so a dead
    endpoint does not cost a timeout per call; one warning is logged per outage.
    ``last_model`` names the model behind the latest :meth:`embed`; with several threads
    use :meth:`embed_with_model`, which returns it alongside the vectors.
    """

    def __init__(self, primary: Embedder, fallback: Embedder, retry_interval: float = 60.0) -> None:
        self._primary = primary
        self._fallback = fallback
        self._retry_interval = retry_interval
        self._lock = threading.Lock()
        self._retry_at = -math.inf
        self._failing = False
        self.last_model: str | None = None

    @property
    def model_name(self) -> str:
        """The model vectors should come from: the primary's."""
        return self._primary.model_name

    def close(self) -> None:
        """Close the embedders' connections (the remote one holds an HTTP client)."""
        for embedder in (self._primary, self._fallback):
            close = getattr(embedder, "close", None)
            if callable(close):
                close()

    def embed(self, texts: list[str]) -> list[list[float]]:
        model, vectors = self.embed_with_model(texts)
        self.last_model = model
        return vectors

    def embed_with_model(self, texts: list[str]) -> tuple[str, list[list[float]]]:
        """``(model_name, vectors)``, naming whichever embedder produced the vectors."""
        if time.monotonic() >= self._retry_at:
            try:
                vectors = self._primary.embed(texts)
            except LLMError as exc:
                self._note_failure(exc)
            else:
                self._note_success()
                return self._primary.model_name, vectors
        return self._fallback.model_name, self._fallback.embed(texts)

    def _note_failure(self, exc: LLMError) -> None:
        with self._lock:
            first = not self._failing
            self._failing = True
            self._retry_at = time.monotonic() + self._retry_interval
        if first:
            log.warning(
                "embedding model %s failed (%s); using %s until it recovers",
                self._primary.model_name,
                exc,
                self._fallback.model_name,
            )
        else:
            log.debug("embedding model %s still failing: %s", self._primary.model_name, exc)

    def _note_success(self) -> None:
        with self._lock:
            recovered, self._failing = self._failing, False
        if recovered:
            log.info("embedding model %s is back", self._primary.model_name)
