#!/usr/bin/env bash
# Generation time of J and D against CasADi's (issue 37), in one run: for each module
# exported by bench/peers/run.sh (target/peers), mechgen's generation from the `.mech` text
# to pretty-printed Rust with `functions = jacobian, null_space_fixed` (median of 21 runs, by
# stage) and CasADi's from the exported equations to C text (J and D in one `Function`,
# median of 21; in memory, as mechgen's: gen_time.py's `--to-disk` writes it), in
# alternating rounds (GEN_TIME_ROUNDS, default 5), then each side's median over the rounds
# and their ratio; mechgen with every function once at the end. Needs casadi; run
# bench/peers/run.sh first (or at least its export step:
# `cargo run --release -p mechgen-bench --bin export_equations -- target/peers`).
# Usage: bench/peers/gen_time.sh [MODULE ...]
set -euo pipefail
cd "$(dirname "$0")/../.."
dir="$PWD/target/peers"
mods=("$@")
if [ ${#mods[@]} -eq 0 ]; then
  mods=(slider_crank four_bar_chain_4 stewart)
fi
rounds="${GEN_TIME_ROUNDS:-5}"
cargo build --release -q -p mechgen-bench --bin gen_time
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for r in $(seq "$rounds"); do
  for m in "${mods[@]}"; do
    target/release/gen_time "$dir/mech/$m.mech" jacobian,null_space_fixed | tee -a "$log"
    python3 bench/peers/gen_time.py "$dir" "$m" | tee -a "$log"
  done
done
for m in "${mods[@]}"; do
  target/release/gen_time "$dir/mech/$m.mech" all
done
echo "== medians over $rounds rounds (ms): mechgen J+D, CasADi J+D, ratio"
python3 - "$log" "${mods[@]}" <<'PY'
import re, statistics, sys
text = open(sys.argv[1]).read()
for m in sys.argv[2:]:
    ours = [float(x) for x in re.findall(r"/%s\.mech \[[^]]*\]: ([0-9.]+) ms" % re.escape(m), text)]
    theirs = [float(x) for x in re.findall(r"^casadi %s ([0-9.]+)$" % re.escape(m), text, re.M)]
    a, b = statistics.median(ours), statistics.median(theirs)
    print(f"{m}: mechgen {a:.2f}, casadi {b:.2f}, ratio {a / b:.2f}")
PY
