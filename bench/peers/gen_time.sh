#!/usr/bin/env bash
# Generation time of J and D against CasADi's (issue 37), in one run: for each module
# exported by bench/peers/run.sh (target/peers), mechgen's generation from the `.mech` text
# to pretty-printed Rust with every function and with `functions = jacobian,
# null_space_fixed` (median of 21 runs, by stage), and CasADi's from the exported equations
# to C on disk (J and D in one `Function`, median of 21). Needs casadi; run bench/peers/run.sh
# first (or at least its export step). Usage: bench/peers/gen_time.sh [MODULE ...]
set -euo pipefail
cd "$(dirname "$0")/../.."
dir="$PWD/target/peers"
mods=("$@")
if [ ${#mods[@]} -eq 0 ]; then
  mods=(slider_crank stewart four_bar_chain_4)
fi
cargo build --release -q -p mechgen-bench --bin gen_time
for m in "${mods[@]}"; do
  target/release/gen_time "$dir/mech/$m.mech" jacobian,null_space_fixed
  target/release/gen_time "$dir/mech/$m.mech" all
  python3 bench/peers/gen_time.py "$dir" "$m"
done
