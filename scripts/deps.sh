#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian packages the project uses; idempotent and quick when all are present.
#   scripts/deps.sh          install what is missing (as root, or through passwordless sudo)
#   scripts/deps.sh --check  only report what is missing (exit 1 if anything is)
#   scripts/deps.sh models   also torchvision and scikit-learn (scripts/make_models.py:
#                            make models, make bench-models, the ResNet test of make test-long)
set -euo pipefail

PACKAGES=(
  g++ make cmake pkg-config ccache          # build
  clang-format                              # C++ style check (make lint)
  verilator yosys                           # RTL simulation, lint and synthesis
  z3 cvc5                                   # yosys-smtbmc's solvers (make formal)
  libgtest-dev libfmt-dev libeigen3-dev     # tests, output, bf16 oracle
  libcli11-dev nlohmann-json3-dev           # command lines, configuration files
  libxtensor-dev                            # .npy files (io/: tpusim, the Python module)
  libsystemc-dev zlib1g-dev                 # SystemC system harnesses, FST waves
  gtkwave xvfb xauth x11-utils imagemagick  # waveform viewing, screenshots (scripts/wave_shots.sh)
  lcov gnuplot-nox                          # coverage and report tools
  python3 python3-tabulate                  # regression, coverage and report scripts (tables)
  libonnx-dev libprotobuf-dev libzip-dev    # ONNX models (tpusim onnx), .npz files
  libonnx-testdata                          # ONNX's own node tests (the conformance test)
  pybind11-dev python3-dev python3-numpy    # the Python module (python/tpusim)
  python3-torch python3-onnx                # training's gradients against PyTorch's autograd
  slurmctld slurmd slurm-client munge       # make regress LAUNCHER=slurm and its test (a local cluster)
)
if [ "${1:-}" = "models" ]; then
  PACKAGES+=(python3-torchvision python3-sklearn)
  shift
fi

missing=()
for p in "${PACKAGES[@]}"; do
  [ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" = "installed" ] || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "${1:-}" = "--check" ]; then
  echo "deps: missing Debian packages: ${missing[*]}" >&2
  exit 1
fi

if [ "$(id -u)" -eq 0 ]; then
  SUDO=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  SUDO=(sudo -n)
else
  cat >&2 <<MSG
deps: cannot install packages: not root and no passwordless sudo.
      Ask an administrator to run:
        sudo apt-get update && sudo apt-get install -y ${missing[*]}
      then re-run make.
MSG
  exit 1
fi
echo "deps: installing missing Debian packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -qq
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "deps: done"
