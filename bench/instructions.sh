#!/usr/bin/env bash
# Instructions per call of the generated functions, from valgrind's callgrind (repeatable
# whatever the machine's load, unlike ns): each function is called N1 and N2 times in one
# process and the difference of the totals is divided by N2 − N1, so that start-up and
# assembly cancel out. Usage: bench/instructions.sh [MECHANISM ...]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p mechgen-bench --bin calls
bin=target/release/calls
n1=200
n2=1200
mechs=("$@")
if [ ${#mechs[@]} -eq 0 ]; then
  mechs=(slider_crank spatial_slider_crank andrews stewart four_bar_chain_64 closed_chain_16)
fi
total() {
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$1" "$2" "$3" 2>&1 >/dev/null \
    | sed -n 's/.*Collected : \([0-9]*\).*/\1/p; s/.*I *refs: *\([0-9,]*\).*/\1/p' | tr -d , | head -1
}
printf '| mechanism | function | instructions per call |\n| --- | --- | ---: |\n'
for m in "${mechs[@]}"; do
  for f in residual jacobian jacobian_into jacobian_values null_space null_space_fixed solve_dependent separate kinematics; do
    a=$(total "$m" "$f" $n1)
    b=$(total "$m" "$f" $n2)
    printf '| %s | %s | %d |\n' "$m" "$f" $(( (b - a) / (n2 - n1) ))
  done
done
