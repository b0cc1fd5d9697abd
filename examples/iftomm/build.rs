//! Generates the IFToMM benchmark mechanisms A01–A05 from their `.mech` files, as a user's
//! crate would. A03 is Andrews' mechanism of `examples/seven_body` (used from there, not
//! copied); A02, the N-four-bar mechanism, is written by [`four_bar_chain`] for
//! N = 1, 2, 3 and 40 (the language has no loops).

use std::path::PathBuf;

/// The `.mech` text of A02 with `n` four-bar windows: `n + 1` cranks `th0..thn` pivoted
/// at `(i, 0)` and `n` couplers `ps1..psn`, every link a uniform rod of 1 m and 1 kg;
/// gravity 9.81 N/kg along -y. Nominal configuration: cranks upright, couplers level.
fn four_bar_chain(n: usize) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "/// A02, N-four-bar mechanism with N = {n} (IFToMM / A Coruña library of\n\
         /// computational benchmark problems): {} links of 1 m and 1 kg (uniform rods),\n\
         /// gravity 9.81 N/kg along -y. At the flat positions (all links horizontal) the\n\
         /// mobility jumps from 1 to N + 1 = {}.\n\
         pub mod a02_n{n} {{\n    /// Gravity (N/kg).\n    param g = 9.81;\n",
        2 * n + 1,
        n + 1
    ));
    for i in 0..=n {
        s.push_str(&format!("    coord th{i} = 1.5707963267948966;\n"));
    }
    for i in 1..=n {
        s.push_str(&format!("    coord ps{i} = 0.0;\n"));
    }
    s.push_str(
        "    /// The first crank: it turns through whole revolutions.\n    independent th0;\n",
    );
    for i in 1..=n {
        let j = i - 1;
        s.push_str(&format!(
            "    constraint vec2({j}.0 + cos(th{j}), sin(th{j})) + vec2(cos(ps{i}), sin(ps{i})) == vec2({i}.0 + cos(th{i}), sin(th{i}));\n"
        ));
    }
    for i in 0..=n {
        s.push_str(&format!(
            "    body crank{i} {{ mass = 1.0, inertia = 1.0 / 12.0, com = vec2({i}.0 + 0.5 * cos(th{i}), 0.5 * sin(th{i})), angle = th{i} }}\n"
        ));
    }
    for i in 1..=n {
        let j = i - 1;
        s.push_str(&format!(
            "    body coupler{i} {{ mass = 1.0, inertia = 1.0 / 12.0, com = vec2({j}.0 + cos(th{j}) + 0.5 * cos(ps{i}), sin(th{j}) + 0.5 * sin(ps{i})), angle = ps{i} }}\n"
        ));
    }
    s.push_str("    gravity = vec2(0.0, -g);\n}\n");
    s
}

fn main() {
    let Some(out) = std::env::var_os("OUT_DIR").map(PathBuf::from) else {
        eprintln!("OUT_DIR is not set (run through cargo)");
        std::process::exit(1);
    };
    let mut files = vec![
        PathBuf::from("a01.mech"),
        PathBuf::from("../seven_body/andrews.mech"),
        PathBuf::from("a04.mech"),
        PathBuf::from("a05.mech"),
    ];
    for n in [1usize, 2, 3, 40] {
        let path = out.join(format!("a02_n{n}.mech"));
        if let Err(e) = std::fs::write(&path, four_bar_chain(n)) {
            eprintln!("{}: {e}", path.display());
            std::process::exit(1);
        }
        files.push(path);
    }
    if let Err(e) = mechgen_build::Builder::new().files(&files).generate() {
        eprintln!("{e}");
        std::process::exit(1);
    }
}
