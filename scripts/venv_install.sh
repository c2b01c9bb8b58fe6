# Sourced by the setup scripts: `venv_install VENV [pip install arguments...]`.
#
# Installs with uv (pinned, bootstrapped into the venv with pip) because it resolves and
# unpacks in parallel: the app's venv takes about 1 minute instead of 5, vLLM's 1 instead
# of 4 to 8, which is most of a fresh clone's set-up. pip stays the fallback, and the only
# path when pip is told to stay offline (PIP_NO_INDEX, the GPU bundle's hosts) or
# PODIUM_INSTALLER=pip. uv reads no pip configuration, so pip's find-links (where this
# machine keeps its CPU torch wheel) are handed over explicitly.
UV_VERSION=0.13.8

_pip_find_links() {
  local venv=$1 links
  links=${PIP_FIND_LINKS:-$("$venv/bin/pip" config get global.find-links 2>/dev/null || true)}
  for link in $links; do
    [ -e "$link" ] && printf -- '--find-links\n%s\n' "$link"
  done
}

venv_install() {
  local venv=$1
  shift
  _venv_install "$venv" "$@"
  venv_bytecode "$venv"
}

# Every module compiled once, here: uv writes no bytecode, and where the environment sets
# PYTHONDONTWRITEBYTECODE (this project's CI machines do) Python never writes it either, so
# each process compiled every module it imported from source: `podium show` 0.62 s -> 0.30 s
# with bytecode, `import vllm.entrypoints.openai.api_server` 16 s -> 8 s (measured
# 2026-11-28). A file that does not compile (some packages ship such test data) cannot be
# imported either, so its error is not one.
venv_bytecode() {
  "$1/bin/python" -m compileall -qq -j0 "$1/lib" >/dev/null 2>&1 || true
}

_venv_install() {
  local venv=$1
  shift
  if [ "${PODIUM_INSTALLER:-uv}" = uv ] && [ -z "${PIP_NO_INDEX:-}" ]; then
    local uv=$venv/bin/uv
    [ -x "$uv" ] || "$venv/bin/pip" install -q "uv==$UV_VERSION" || uv=""
    if [ -n "$uv" ]; then
      local links=()
      mapfile -t links < <(_pip_find_links "$venv")
      if "$uv" pip install -q --python "$venv/bin/python" "${links[@]}" "$@"; then
        return 0
      fi
      echo "setup: uv could not install into $venv; trying pip" >&2
    fi
  fi
  "$venv/bin/pip" install -q "$@"
}
