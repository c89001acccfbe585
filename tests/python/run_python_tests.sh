#!/usr/bin/env bash
# The Python module as a user installs it: a fresh virtual environment, `pip install .` against
# this build's installed libgcomp.so (GCOMP_PREFIX), then the pytest tests.
# Usage: run_python_tests.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1
build=$2
prefix="$build/python_prefix"
venv="$build/python_venv"
rm -rf "$prefix" "$venv"
cmake --install "$build" --prefix "$prefix" > /dev/null
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check -r "$src/tests/python/requirements.txt"
GCOMP_PREFIX="$prefix" "$venv/bin/pip" install --quiet --disable-pip-version-check "$src"
cd "$build"   # not the source tree: `import gcomp` must find the installed package
GCOMP_CLI="$build/tools/gcomp" GCOMP_MODELS="$build/models" "$venv/bin/python" -m pytest -q -p no:cacheprovider \
  "$src/tests/python"
