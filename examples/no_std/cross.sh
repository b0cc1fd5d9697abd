#!/usr/bin/env bash
# Builds the no_std static library for two bare-metal targets and runs check.c on one of them:
#
# * `thumbv7em-none-eabihf` (Cortex-M4F/M7F: 32-bit, single-precision FPU, f64 in software):
#   the library built, and `cortex_m/` (check.c's checks in Rust, on the library's functions)
#   linked with cortex-m-rt by the rustup toolchain's `rust-lld` and run under
#   `qemu-system-arm` on the mps2-an386 board (a Cortex-M4F), output and exit status through
#   semihosting;
# * `armv7a-none-eabihf` (bare-metal Cortex-A): built, linked into check.c by the ARM Linux
#   cross compiler and run under `qemu-arm` (user-mode emulation), so the checks' numbers are
#   those of 32-bit ARM code.
#
# Bare-metal targets need `core` built from source (`-Zbuild-std=core`). The rustup toolchain
# here has neither other targets nor `rust-src`, and none can be fetched, so this uses Debian's
# `rustc-web` 1.85 with its source (`rust-web-src`), cargo-web, `RUSTC_BOOTSTRAP=1` for
# `-Zbuild-std`, and two allowances for the locked nalgebra 0.35, which asks for rustc 1.89:
# `--ignore-rust-version` and `-Zcrate-attr=feature(unsigned_is_multiple_of)` (the one newer
# library function it uses, unstable in 1.85). The main workspace keeps the rustup toolchain.
#
# With `CI=true` the Debian packages are installed when missing (apt-get); elsewhere a missing
# package skips this check with a message. CI runs this.
set -euo pipefail
cd "$(dirname "$0")"

packages=(rustc-web rust-web-src cargo-web qemu-user qemu-system-arm gcc-arm-linux-gnueabihf libc6-dev-armhf-cross)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    if [[ "${CI:-}" == "true" ]]; then
        echo "no_std cross check: installing ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null ||
            { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null; }
    else
        echo "no_std cross check skipped: Debian packages missing (${missing[*]});"
        echo "  apt-get install ${missing[*]}   (CI=true installs them)"
        exit 0
    fi
fi

# The linker for the Cortex-M program: rustup's `rust-lld` (Debian's rustc has none).
lld="$(rustc --print sysroot)/lib/rustlib/$(rustc -vV | sed -n 's/^host: //p')/bin/rust-lld"
if [[ ! -x "$lld" ]]; then
    echo "no_std cross check: rust-lld not found at $lld" >&2
    exit 1
fi

export RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1
export RUSTFLAGS="-Zcrate-attr=feature(unsigned_is_multiple_of)"
export CARGO_TARGET_DIR="$PWD/target/cross"
cargo=(/usr/bin/cargo build --release --locked --ignore-rust-version -Zbuild-std=core)
"${cargo[@]}" --target armv7a-none-eabihf
lib="$CARGO_TARGET_DIR/armv7a-none-eabihf/release/libmechgen_no_std_check.a"
arm-linux-gnueabihf-gcc -O2 -Wall -static -o "$CARGO_TARGET_DIR/check-armv7a" check.c "$lib" -lm -Wl,--gc-sections
echo "on armv7a-none-eabihf under qemu-arm:"
qemu-arm "$CARGO_TARGET_DIR/check-armv7a"

# The Cortex-M4F program (it builds the library for the target too): cortex-m-rt's link.x
# (with cortex_m/memory.x, the board's map).
RUSTFLAGS="$RUSTFLAGS -C link-arg=-Tlink.x -C linker=$lld" "${cargo[@]}" --manifest-path cortex_m/Cargo.toml --target thumbv7em-none-eabihf
echo "on thumbv7em-none-eabihf under qemu-system-arm (mps2-an386, Cortex-M4F):"
# A panic loops (the library's handler): the time limit turns it into a failure.
status=0
timeout 300 qemu-system-arm -M mps2-an386 -cpu cortex-m4 -nographic -monitor none -serial none \
    -semihosting-config enable=on,target=native \
    -kernel "$CARGO_TARGET_DIR/thumbv7em-none-eabihf/release/mechgen-cortex-m-check" || status=$?
if ((status == 124)); then
    echo "the Cortex-M4F program did not finish in 300 s (a panic?)" >&2
fi
exit "$status"
