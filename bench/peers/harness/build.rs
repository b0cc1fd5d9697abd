//! Generates mechgen's modules for the exported mechanisms, compiles the peers' C (gcc -O3,
//! no -march=native: mechgen's Rust is built without a target CPU either) and writes the
//! registry of functions the harness times. Inputs: `PEERS_DIR` (default `../../../target/peers`)
//! holding `modules.json`, `mech/*.mech`, `c/*.c` and `manifest.json` (bench/peers/run.sh).

use std::fmt::Write;
use std::path::PathBuf;

fn main() {
    let dir = PathBuf::from(
        std::env::var("PEERS_DIR").unwrap_or_else(|_| "../../../target/peers".to_string()),
    );
    let dir = std::fs::canonicalize(&dir).expect("PEERS_DIR exists (run bench/peers/run.sh)");
    println!("cargo:rerun-if-env-changed=PEERS_DIR");
    println!(
        "cargo:rerun-if-changed={}",
        dir.join("manifest.json").display()
    );
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("manifest.json")).expect("manifest.json"),
    )
    .expect("manifest json");
    let modules: Vec<String> = manifest["modules"]
        .as_array()
        .expect("modules")
        .iter()
        .map(|m| m.as_str().expect("name").to_string())
        .collect();
    let mut reg = String::new();
    // mechgen's modules and their adapters: `fn(&[f64], &[f64], &mut [f64])`.
    let mut mech_entries = String::new();
    for m in &modules {
        let src =
            std::fs::read_to_string(dir.join("mech").join(format!("{m}.mech"))).expect("mech");
        let g = mechgen_codegen::generate_str(&src, &mechgen_codegen::Options::default())
            .expect("generate");
        std::fs::write(
            out.join(format!("{m}.rs")),
            mechgen_codegen::pretty(&g.tokens),
        )
        .expect("write module");
        let spec: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join(format!("{m}.json"))).expect("json"),
        )
        .expect("spec");
        let params: Vec<&str> = spec["params"]
            .as_array()
            .expect("params")
            .iter()
            .map(|p| p.as_str().expect("param"))
            .collect();
        let fields: String = params
            .iter()
            .enumerate()
            .map(|(i, n)| format!("{n}: p[{i}], "))
            .collect();
        let defaults: String = spec["defaults"]
            .as_array()
            .expect("defaults")
            .iter()
            .map(|v| format!("{:?}, ", v.as_f64().expect("default")))
            .collect();
        let _ = writeln!(
            reg,
            r#"include!(concat!(env!("OUT_DIR"), "/{m}.rs"));
pub mod adapt_{m} {{
    use super::{m} as m;
    use mechgen::nalgebra::SVector;
    #[inline(always)]
    fn params(p: &[f64]) -> m::Params {{ m::Params {{ {fields} }} }}
    #[inline(always)]
    fn q(q: &[f64]) -> SVector<f64, {{ m::NQ }}> {{ SVector::from_column_slice(q) }}
    pub fn residual(qs: &[f64], p: &[f64], out: &mut [f64]) {{
        out.copy_from_slice(m::residual(&q(qs), &params(p), 0.0).as_slice());
    }}
    pub fn jacobian(qs: &[f64], p: &[f64], out: &mut [f64]) {{
        out.copy_from_slice(m::jacobian(&q(qs), &params(p), 0.0).as_slice());
    }}
    pub fn jacobian_sparse(qs: &[f64], p: &[f64], out: &mut [f64]) {{
        let mut v = [0.0; m::JACOBIAN_NNZ];
        m::jacobian_values(&q(qs), &params(p), 0.0, &mut v);
        // Scattered to dense (column-major) for the comparison only; timed without this.
        out.iter_mut().for_each(|x| *x = 0.0);
        for c in 0..m::NQ {{
            for k in m::JACOBIAN_COLPTR[c]..m::JACOBIAN_COLPTR[c + 1] {{
                out[c * m::NC + m::JACOBIAN_ROWIDX[k]] = v[k];
            }}
        }}
    }}
    pub fn null_space(qs: &[f64], p: &[f64], out: &mut [f64]) {{
        out.copy_from_slice(m::null_space_fixed(&q(qs), &params(p), 0.0).0.as_slice());
    }}
    /// The timed forms: results handed to `black_box`, no copies.
    pub fn call(f: &str) -> fn(&SVector<f64, {{ m::NQ }}>, &m::Params) {{
        match f {{
            "residual" => |q, p| {{ let v = m::residual(q, p, 0.0); std::hint::black_box(&v); }},
            "jacobian" => |q, p| {{ let v = m::jacobian(q, p, 0.0); std::hint::black_box(&v); }},
            "jacobian_sparse" => |q, p| {{
                let mut v = [0.0; m::JACOBIAN_NNZ];
                m::jacobian_values(q, p, 0.0, &mut v);
                std::hint::black_box(&v);
            }},
            _ => |q, p| {{ let v = m::null_space_fixed(q, p, 0.0); std::hint::black_box(&v); }},
        }}
    }}
    pub fn bench(f: &str, qs: &[f64], ps: &[f64], n: usize) {{
        let (qv, pv) = (q(qs), params(ps));
        if f == "jacobian_into" {{
            // The caller's storage, zeroed once (only the structural nonzeros are written),
            // called through a function pointer like the others (and the peers' C).
            type Jac = mechgen::nalgebra::SMatrix<f64, {{ m::NC }}, {{ m::NQ }}>;
            let g: fn(&SVector<f64, {{ m::NQ }}>, &m::Params, &mut Jac) =
                std::hint::black_box(|q, p, b| m::jacobian_into(q, p, 0.0, b));
            let mut buf = Box::new(Jac::zeros());
            for _ in 0..n {{
                g(std::hint::black_box(&qv), std::hint::black_box(&pv), &mut buf);
                std::hint::black_box(&*buf);
            }}
            return;
        }}
        let g = call(f);
        for _ in 0..n {{
            g(std::hint::black_box(&qv), std::hint::black_box(&pv));
        }}
    }}
    pub fn nominal() -> Vec<f64> {{ m::NOMINAL_Q.to_vec() }}
    pub const DEFAULTS: &[f64] = &[{defaults}];
    pub const NQ: usize = m::NQ;
    pub const NC: usize = m::NC;
    pub const DOF: usize = m::DOF;
}}"#
        );
        let _ = writeln!(
            mech_entries,
            "        Mech {{ module: \"{m}\", nq: adapt_{m}::NQ, nc: adapt_{m}::NC, dof: adapt_{m}::DOF, residual: adapt_{m}::residual, jacobian: adapt_{m}::jacobian, jacobian_sparse: adapt_{m}::jacobian_sparse, null_space: adapt_{m}::null_space, bench: adapt_{m}::bench, nominal: adapt_{m}::nominal, defaults: adapt_{m}::DEFAULTS }},"
        );
    }
    // The peers' C.
    let mut build = cc::Build::new();
    build.opt_level(3).flag("-fno-math-errno").warnings(false);
    let mut externs = String::new();
    let mut peer_entries = String::new();
    for f in manifest["functions"].as_array().expect("functions") {
        let Some(sym) = f["symbol"].as_str() else {
            continue;
        };
        build.file(dir.join("c").join(format!("{sym}.c")));
        let _ = writeln!(
            externs,
            "    fn {sym}(q: *const f64, p: *const f64, out: *mut f64);"
        );
        let sparsity = match (f["colind"].as_array(), f["row"].as_array()) {
            (Some(c), Some(r)) => format!(
                "Some((&[{}], &[{}]))",
                c.iter()
                    .map(|v| v.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                r.iter()
                    .map(|v| v.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            _ => "None".to_string(),
        };
        let _ = writeln!(
            peer_entries,
            "        Peer {{ module: \"{}\", peer: \"{}\", func: \"{}\", len: {}, f: {sym}, sparsity: {sparsity} }},",
            f["module"].as_str().expect("module"),
            f["peer"].as_str().expect("peer"),
            f["fn"].as_str().expect("fn"),
            f["len"]
        );
    }
    build.compile("peers");
    let _ = writeln!(
        reg,
        "extern \"C\" {{\n{externs}}}\npub fn peers() -> Vec<Peer> {{\n    vec![\n{peer_entries}    ]\n}}\npub fn mechs() -> Vec<Mech> {{\n    vec![\n{mech_entries}    ]\n}}"
    );
    std::fs::write(out.join("registry.rs"), reg).expect("write registry");
}
