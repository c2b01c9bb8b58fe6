#!/usr/bin/env bash
# Another engine to read Podium's tables with: DuckDB 1.5.5 and its Iceberg reader (PyPI's
# extension packages; DuckDB cannot download extensions here), in a venv of its own because
# the app pins DuckDB 2.0, for which no Iceberg extension is published. The tests use it
# to check that merge-on-read edits read the same from outside Podium.
set -euo pipefail
venv=${1:-.venv-duckdb-iceberg}
python=${PYTHON:-python3.11}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/venv_install.sh
. "$here/venv_install.sh"
test -x "$venv/bin/python" || "$python" -m venv "$venv"
venv_install "$venv" duckdb==1.5.5 duckdb-extension-iceberg==1.5.5 duckdb-extension-avro==1.5.5
"$venv/bin/python" -c "import duckdb; print('duckdb', duckdb.__version__)"
