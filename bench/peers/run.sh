#!/usr/bin/env bash
# mechgen against SymPy's and CasADi's generated C, side by side in one harness (issue 14):
# the same equations (exported from mechgen's DAG), the same configurations, values compared
# to 1e-9, wall time per call in alternating rounds, and callgrind instructions per call.
#
# Needs python3 with sympy and casadi (`pip install sympy casadi`), gcc, and valgrind for the
# instruction counts. Not run in CI. Usage: bench/peers/run.sh [--no-callgrind]
# Environment: PEERS_TIME_LIMIT (seconds per peer function, default 120),
# PEERS_MODULES (comma-separated subset of slider_crank, stewart, four_bar_chain_{1,4,16,64}).
set -euo pipefail
cd "$(dirname "$0")/../.."
missing=()
python3 -c "import sympy" 2>/dev/null || missing+=("sympy (pip install sympy)")
python3 -c "import casadi" 2>/dev/null || missing+=("casadi (pip install casadi)")
command -v gcc >/dev/null || missing+=("gcc")
if [ ${#missing[@]} -gt 0 ]; then
  echo "bench/peers: skipped, missing: ${missing[*]}"
  exit 0
fi
callgrind=1
if [ "${1:-}" = "--no-callgrind" ] || ! command -v valgrind >/dev/null; then
  callgrind=0
fi
dir="$PWD/target/peers"
mkdir -p "$dir"
echo "== exporting mechgen's equations to $dir"
cargo run --release -q -p mechgen-bench --bin export_equations -- "$dir"
echo "== generating the peers' C (SymPy, CasADi)"
python3 bench/peers/gen.py "$dir" | tee "$dir/generation.log"
echo "== building the harness (gcc -O3 for the peers, release for mechgen)"
export PEERS_DIR="$dir"
export CARGO_TARGET_DIR="$PWD/target/peers-harness"
cargo build --release -q --manifest-path bench/peers/harness/Cargo.toml
bin="$CARGO_TARGET_DIR/release/mechgen-peers-harness"
echo "== wall time (ns per call, median of 15 alternating rounds)"
"$bin" | tee "$dir/wall.md"
if [ "$callgrind" = 1 ]; then
  echo "== instructions per call (callgrind, (I(1200) − I(200)) / 1000)"
  total() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" count "$@" 2>&1 >/dev/null \
      | sed -n 's/.*Collected : \([0-9]*\).*/\1/p' | head -1
  }
  {
    echo "| mechanism | function | implementation | instructions per call |"
    echo "| --- | --- | --- | ---: |"
    "$bin" list | while read -r m f i; do
      a=$(total "$m" "$f" "$i" 200)
      b=$(total "$m" "$f" "$i" 1200)
      echo "| $m | $f | $i | $(( (b - a) / 1000 )) |"
    done
  } | tee "$dir/instructions.md"
fi
