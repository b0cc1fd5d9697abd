//! Imports the robots of `models/` from their URDF files (`mechgen_codegen::import::urdf`)
//! and the models of `mjcf/` from their MJCF files (`mechgen_codegen::import::mjcf`), and
//! generates a module for each into `OUT_DIR` (`<name>.rs`, with the imported `<name>.mech`
//! beside it for reading, and `stats.txt`: generation time and lines); and for each robot
//! of `models/`, `<name>_kernel.rs`: the straight-line `LᵀDL` elimination of its mass
//! matrix's pattern (`MASS_NONZEROS`), in `TreeCholesky`'s layout (`src/symbolic.rs`).

#[allow(dead_code)]
#[path = "src/symbolic.rs"]
mod symbolic;

use std::path::{Path, PathBuf};

use mechgen_codegen::import::mjcf;
use mechgen_codegen::import::urdf::{import, ImportOptions};
use mechgen_codegen::{generate_file_text, Options};

/// The robots: module name, URDF file under `models/`, mimic joints as constraints,
/// floating base.
const ROBOTS: [(&str, &str, bool, bool); 4] = [
    ("ur5", "ur_description/ur5_robot.urdf", true, false),
    // Pinocchio's default model keeps the mimic finger joint independent: so does this one.
    ("panda", "panda_description/panda.urdf", false, false),
    // The quadruped and the humanoid on a floating base (Pinocchio's free-flyer root).
    ("solo", "solo_description/robots/solo12.urdf", true, true),
    (
        "romeo",
        "romeo_description/urdf/romeo_small.urdf",
        true,
        true,
    ),
];

/// The MJCF models under `mjcf/` (written for the tests; `tests/mujoco.rs`).
const MJCF: [&str; 5] = ["chain", "radian", "four_bar", "welded_arm", "ball_free"];

fn main() {
    if let Err(e) = run() {
        eprintln!("{e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let out = PathBuf::from(std::env::var("OUT_DIR").map_err(|e| format!("OUT_DIR: {e}"))?);
    let mut stats = String::new();
    for (name, file, mimic, floating_base) in ROBOTS {
        let path = Path::new("models").join(file);
        println!("cargo:rerun-if-changed={}", path.display());
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let opts = ImportOptions {
            module: Some(name.to_string()),
            mimic_constraints: mimic,
            floating_base,
            ..ImportOptions::default()
        };
        let imported = import(&text, &opts).map_err(|e| format!("{}:{e}", path.display()))?;
        let rust = generate(&out, name, &imported.mech, &mut stats)?;
        // The base's seven coordinates stay for the floating-base mapping.
        let stop = if floating_base { 7 } else { 0 };
        let kernel = kernel(name, &rust, stop)?;
        let dest = out.join(format!("{name}_kernel.rs"));
        std::fs::write(&dest, kernel).map_err(|e| format!("{}: {e}", dest.display()))?;
    }
    // Published MJCF robots, behind the crate's features (their generated modules are large:
    // Cassie's is 110,000 lines, minutes of rustc).
    let published = [(
        "cassie",
        "agility_cassie/cassie.xml",
        "CARGO_FEATURE_CASSIE",
    )];
    let mut mjcf_files: Vec<(&str, PathBuf)> = MJCF
        .iter()
        .map(|name| (*name, Path::new("mjcf").join(format!("{name}.xml"))))
        .collect();
    for (name, file, feature) in published {
        if std::env::var_os(feature).is_some() {
            mjcf_files.push((name, Path::new("models").join(file)));
        }
    }
    for (name, path) in mjcf_files {
        println!("cargo:rerun-if-changed={}", path.display());
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let imported = mjcf::import(&text, &mjcf::ImportOptions::default())
            .map_err(|e| format!("{}:{e}", path.display()))?;
        generate(&out, name, &imported.mech, &mut stats)?;
    }
    let dest = out.join("stats.txt");
    std::fs::write(&dest, stats).map_err(|e| format!("{}: {e}", dest.display()))?;
    Ok(())
}

/// Writes `<name>.mech` and the generated `<name>.rs` into `out`; the generation time and
/// size into `stats`. Returns the generated text.
fn generate(out: &Path, name: &str, text: &str, stats: &mut String) -> Result<String, String> {
    let mech = out.join(format!("{name}.mech"));
    std::fs::write(&mech, text).map_err(|e| format!("{}: {e}", mech.display()))?;
    let t = std::time::Instant::now();
    let (_, rust) =
        generate_file_text(&mech, text, &Options::for_files()).map_err(|e| e.to_string())?;
    // Generation time (import excluded) and size, for bench/RESULTS.md.
    stats.push_str(&format!(
        "{name}: generated in {:.1} ms, {} lines\n",
        t.elapsed().as_secs_f64() * 1e3,
        rust.lines().count()
    ));
    let dest = out.join(format!("{name}.rs"));
    std::fs::write(&dest, &rust).map_err(|e| format!("{}: {e}", dest.display()))?;
    Ok(rust)
}

/// The `(row, column)` entries of the generated module's `MASS_NONZEROS`, and its `NQ`.
fn mass_pattern(rust: &str) -> Result<(usize, Vec<(usize, usize)>), String> {
    let number = |s: &str| {
        s.trim()
            .parse::<usize>()
            .map_err(|e| format!("{s:?} in the generated module: {e}"))
    };
    let nq = rust
        .split_once("pub const NQ: usize = ")
        .and_then(|(_, rest)| rest.split_once(';'))
        .ok_or("no NQ in the generated module")?
        .0;
    let list = rust
        .split_once("pub const MASS_NONZEROS: [(usize, usize); ")
        .and_then(|(_, rest)| rest.split_once("= ["))
        .and_then(|(_, rest)| rest.split_once("];"))
        .ok_or("no MASS_NONZEROS in the generated module")?
        .0;
    let numbers = list
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(number)
        .collect::<Result<Vec<_>, _>>()?;
    if numbers.len() % 2 != 0 {
        return Err("MASS_NONZEROS: an odd count of indices".into());
    }
    let pairs = numbers.chunks(2).map(|p| (p[0], p[1])).collect();
    Ok((number(nq)?, pairs))
}

/// The straight-line kernel of robot `name` (module `kernels::<name>`): the packed rows in
/// locals `v<p>` and the right-hand side in `b<k>`, the operations of
/// `TreeCholesky::eliminate` and `back_substitute` in the same order.
fn kernel(name: &str, rust: &str, stop: usize) -> Result<String, String> {
    use std::fmt::Write;
    let (n, pattern) = mass_pattern(rust)?;
    let sym = symbolic::Symbolic::new(n, &pattern)
        .map_err(|(r, c)| format!("{name}: MASS_NONZEROS entry ({r}, {c}) outside {n} × {n}"))?;
    let stored = sym.stored;
    let mut o = String::new();
    let w = &mut o;
    let parents: Vec<String> = sym
        .parent
        .iter()
        .map(|&p| {
            if p == symbolic::ROOT {
                "usize::MAX".into()
            } else {
                p.to_string()
            }
        })
        .collect();
    let _ = writeln!(
        w,
        "/// `{name}`'s mass matrix: straight-line `LᵀDL` elimination down to row {stop} and back \
         substitution,\n/// emitted by the build script from `MASS_NONZEROS` ({} packed entries, \
         {} of them fill-in).\npub mod {name} {{\n\
         use crate::{{Kernel, NotPositiveDefinite}};\n\
         use mechgen::nalgebra::{{SMatrix, SVector}};\n\
         const N: usize = {n};\n\
         /// Packed entries of `L` and `D`.\npub const STORED: usize = {stored};\n\
         /// The elimination tree (`usize::MAX`: a root).\n\
         pub const PARENT: [usize; N] = [{}];\n\
         /// The kernel, for `TreeCholesky::with_kernel`.\n\
         pub const KERNEL: Kernel<N> = Kernel {{ parent: &PARENT, stop: {stop}, eliminate, back_substitute }};",
        stored,
        sym.fill,
        parents.join(", ")
    );
    // The elimination.
    let _ = writeln!(
        w,
        "#[allow(unused_mut, clippy::too_many_lines)]\n\
         fn eliminate(a: &SMatrix<f64, N, N>, b: &mut SVector<f64, N>, l: &mut [f64], inv_d: &mut [f64; N]) \
         -> Result<(), NotPositiveDefinite> {{\n\
         let a = a.as_slice();\nlet a = &a[..N * N];\nlet b = b.as_mut_slice();\nlet l = &mut l[..STORED];"
    );
    for k in 0..n {
        let s = sym.start[k];
        let _ = writeln!(w, "let mut v{s} = a[{}];", k + k * n);
        for (m, &a) in sym.ancestors_of(k).iter().enumerate() {
            let p = s + 1 + m;
            if sym.fill_entries.contains(&p) {
                let _ = writeln!(w, "let mut v{p} = 0.0;");
            } else {
                let _ = writeln!(w, "let mut v{p} = a[{}];", a + k * n);
            }
        }
        let _ = writeln!(w, "let mut b{k} = b[{k}];");
    }
    for k in (stop..n).rev() {
        let s = sym.start[k];
        let anc = sym.ancestors_of(k);
        let d = anc.len();
        let _ = writeln!(
            w,
            "if !(v{s} > 0.0 && v{s} < f64::INFINITY) {{ return Err(NotPositiveDefinite {{ row: {k} }}); }}\n\
             let inv = 1.0 / v{s};\ninv_d[{k}] = inv;"
        );
        for (m, &i) in anc.iter().enumerate() {
            let si = sym.start[i];
            let h = s + 1 + m;
            let _ = writeln!(w, "let lk = v{h} * inv;\nv{si} -= lk * v{h};");
            for j in 1..d - m {
                let _ = writeln!(w, "v{} -= lk * v{};", si + j, h + j);
            }
            let _ = writeln!(w, "b{i} -= lk * b{k};\nv{h} = lk;");
        }
    }
    for p in 0..stored {
        let _ = writeln!(w, "l[{p}] = v{p};");
    }
    for k in 0..n {
        let _ = writeln!(w, "b[{k}] = b{k};");
    }
    let _ = writeln!(w, "Ok(())\n}}");
    // The back substitution.
    let _ = writeln!(
        w,
        "#[allow(clippy::too_many_lines)]\n\
         fn back_substitute(l: &[f64], inv_d: &[f64; N], b: &mut SVector<f64, N>) {{\n\
         let l = &l[..STORED];\nlet b = b.as_mut_slice();"
    );
    for k in 0..n {
        let _ = writeln!(w, "let b{k} = b[{k}];");
    }
    for k in stop..n {
        let s = sym.start[k];
        let terms: String = sym
            .ancestors_of(k)
            .iter()
            .enumerate()
            .map(|(m, &i)| format!(" - l[{}] * b{i}", s + 1 + m))
            .collect();
        let _ = writeln!(w, "let b{k} = b{k} * inv_d[{k}]{terms};");
    }
    for k in stop..n {
        let _ = writeln!(w, "b[{k}] = b{k};");
    }
    let _ = writeln!(w, "}}\n}}");
    Ok(o)
}
