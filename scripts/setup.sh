#!/usr/bin/env bash
# Installs what mcpredict needs on a Debian/Ubuntu machine, only what is
# missing: Debian's spin and gcc (Spin compiles its verifier with gcc),
# clang, cmake, autoconf and automake for the recorder's tests, Chromium
# for the HTML report test, the Go modules, and Docker for the nightly's
# end-to-end test (scripts/docker-setup.sh; MCPREDICT_SETUP_DOCKER=0 leaves
# it out). Safe to run again.
#
# `setup.sh run` installs only what `mcpredict run` and the recorder need
# (Spin, gcc, g++, make, the Go modules): what `make run` uses.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = run ]; then
  export MCPREDICT_SETUP_DOCKER=0 MCPREDICT_SETUP_BROWSER=0 MCPREDICT_SETUP_TEST_TOOLS=0
fi

need=()
command -v spin >/dev/null 2>&1 || need+=(spin)
command -v gcc >/dev/null 2>&1 || need+=(gcc)
command -v g++ >/dev/null 2>&1 || need+=(g++) # C++ programs for the recorder
command -v make >/dev/null 2>&1 || need+=(make)
if [ "${MCPREDICT_SETUP_TEST_TOOLS:-1}" = 1 ]; then
  # tcc compiles Spin verifiers ~20x faster than gcc; the differential tests use it.
  command -v tcc >/dev/null 2>&1 || need+=(tcc)
  # The recorder's tests with clang and with CMake (TestCMake, TestBuildSystem).
  command -v clang >/dev/null 2>&1 || need+=(clang)
  command -v cmake >/dev/null 2>&1 || need+=(cmake)
  # TestAutotools: autoreconf is autoconf's, aclocal automake's.
  command -v autoreconf >/dev/null 2>&1 || need+=(autoconf)
  command -v automake >/dev/null 2>&1 || need+=(automake)
  command -v curl >/dev/null 2>&1 || need+=(curl) # deploy/nightly.sh and its test
  [ -x /usr/bin/time ] || need+=(time) # peak memory in make bench
fi
if [ "${MCPREDICT_SETUP_BROWSER:-1}" = 1 ]; then
  command -v chromium >/dev/null 2>&1 || need+=(chromium)
fi
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]} with apt-get" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
if ! command -v go >/dev/null 2>&1; then
  echo "setup: Go is not installed (want Go 1.26 or later: https://go.dev/dl/)" >&2
  exit 1
fi
go mod download
# Docker for the nightly's end-to-end test (make docker-test, part of make
# test): the engine, Compose v2 and debootstrap; starts dockerd as root.
if [ "${MCPREDICT_SETUP_DOCKER:-1}" = 1 ]; then
  scripts/docker-setup.sh
fi
