"""Embeddings from a registered model: a checkpoint served by vLLM in its pooling mode
(`--runner pooling --convert embed`: a chat checkpoint's last-token state becomes its
embedding), or an endpoint that answers OpenAI's `/v1/embeddings`.

A checkpoint's pooling server is this process's own (a generation server cannot make
embeddings, and one checkpoint's shared server is its generation server): started on
the first batch, stopped when the process ends or `stop_servers` is called. The
embedding signal (`podium.signals.embedding`) loads this module by path, as job kinds
are, since the models sit beside the signals, not below them.
"""

from __future__ import annotations

import atexit
import subprocess
from typing import Any

import numpy as np
import numpy.typing as npt
import openai

from generators.client import Endpoint
from podium.errors import InvalidInput, PodiumError
from podium.reporting import Reporter

POOLING_ARGS = ["--runner", "pooling", "--convert", "embed"]
# Texts a request: vLLM batches them itself; fewer round trips on a busy machine.
REQUEST_TEXTS = 64

_SERVERS: dict[str, tuple[subprocess.Popen[bytes], Endpoint]] = {}


def pooling_endpoint(model_name: str, reporter: Reporter | None = None) -> Endpoint:
    """Where `model_name` makes embeddings: its endpoint, or a pooling vLLM server of
    its checkpoint started now (once per process)."""
    from podium.models import get_model
    from podium.models.endpoint_keys import endpoint_key
    from podium.models.serving import START_TIMEOUT_S, launch_server

    model = get_model(model_name)
    if model.kind == "endpoint":
        served = model.remote_model or model.name
        return Endpoint(model.url or "", served, endpoint_key(model), model.name)
    if model.name not in _SERVERS:
        proc, url, _ = launch_server(
            model, START_TIMEOUT_S, reporter or Reporter(), extra_args=POOLING_ARGS, pooling=True
        )
        _SERVERS[model.name] = (proc, Endpoint(url, model.name, None, model.name))
    return _SERVERS[model.name][1]


@atexit.register
def stop_servers() -> None:
    """Stop every pooling server this process started."""
    from podium import processes

    while _SERVERS:
        _, (proc, _) = _SERVERS.popitem()
        processes.stop(proc, grace_s=10)


class ServedEmbedder:
    """Unit-length vectors from a served model; `dims` is fixed by the first answer
    (or asked for), and an answer of other dimensions is refused."""

    def __init__(self, model: str, max_chars: int, dims: int | None = None) -> None:
        self.model = model
        self.max_chars = max_chars
        self.dims = dims
        self.pinned: dict[str, str | None] = {}

    @property
    def name(self) -> str:
        return f"{self.model}:{self.dims}"

    def embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        from podium.signals.embedders import unit

        if not texts:
            return np.zeros((0, self.dims or 0), np.float32)
        client = pooling_endpoint(self.model).sync_client()
        parts = [
            self._request(client, [t[: self.max_chars] for t in texts[at : at + REQUEST_TEXTS]])
            for at in range(0, len(texts), REQUEST_TEXTS)
        ]
        return unit(np.concatenate(parts))

    def _request(self, client: Any, texts: list[str]) -> npt.NDArray[np.float32]:
        endpoint = pooling_endpoint(self.model)
        try:
            answer = client.embeddings.create(
                model=endpoint.model, input=texts, encoding_format="float"
            )
        except (openai.NotFoundError, openai.BadRequestError) as exc:
            raise InvalidInput(
                f"{self.model!r} is not an embedding model: its server answered /embeddings "
                f"with {exc.status_code} ({str(exc)[:200]}); register a checkpoint (served in "
                "vLLM's pooling mode) or an endpoint that makes embeddings."
            ) from None
        except openai.APIError as exc:
            raise PodiumError(f"{self.model!r} failed to embed a batch: {exc}") from exc
        rows = sorted(answer.data, key=lambda d: d.index)
        vectors = np.asarray([r.embedding for r in rows], np.float32)
        if self.dims is None:
            self.dims = int(vectors.shape[1])
        if vectors.shape != (len(texts), self.dims):
            raise InvalidInput(
                f"{self.model!r} made vectors of {vectors.shape[1]} dimensions, not the "
                f"{self.dims} this embedding run has; set embedding.dims to the model's "
                "own (or leave it blank). Nothing was written."
            )
        return vectors


def check_model(model_name: str) -> None:
    """The name is a registered model (a one-line refusal naming the known ones if not)."""
    from podium.models import get_model

    get_model(model_name)


def served_embedder(model: str, max_chars: int, dims: int | None) -> ServedEmbedder:
    """The embedder, its dimensions found (or checked) by one short request, and what
    made them pinned: the checkpoint's content digest or the endpoint."""
    from podium.models.registry import checkpoint_pin

    embedder = ServedEmbedder(model, max_chars, dims)
    embedder.embed(["dimensions"])
    embedder.pinned = {"model_pin": checkpoint_pin(model)}
    return embedder
