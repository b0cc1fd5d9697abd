#!/usr/bin/env bash
# Builds the no_std static library (generated code + the runtime without std, libm for the
# elementary functions), links it into check.c and runs the checks. CI runs this.
set -euo pipefail
cd "$(dirname "$0")"
cargo fmt --check
cargo clippy --release --locked -- -D warnings
cargo build --release --locked
cc -O2 -Wall -o target/check check.c target/release/libmechgen_no_std_check.a -lm -Wl,--gc-sections
./target/check
