//! The Whipple bicycle (examples/mechanisms/whipple.rs, the benchmark bicycle of Meijaard
//! et al. 2007; issue 11, item 7): generation time of its module, and the cost of one
//! right-hand side by the projection method (`projection_accelerations`: the generated
//! basis, mass matrix, forces and γ, a 3 × 3 reduced solve) against the Lagrange route's:
//! its right-hand side `lagrange_qdd` (through the generated chart, no multipliers) and
//! `lagrange_accelerations` (the same chart, with the multipliers), measured in the same run,
//! interleaved, at 1,000 states near upright running at 5 m/s. PyDy's compiled RHS of the
//! same model takes 8.34 µs (published; other hardware, not measured here).
//!
//! `cargo bench -p mechgen --bench bicycle`

use std::hint::black_box;
use std::time::Instant;

use mechgen::nalgebra::SVector;
use mechgen::runtime::{
    assemble::assemble, assemble::AssemblyOptions, lagrange::lagrange_accelerations,
    lagrange::lagrange_qdd, projection::projection_accelerations, Mechanism,
};
use rand::RngExt;

include!("../examples/mechanisms/whipple.rs");

type M = whipple::Model;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    // Generation: the module's source through the engine (parse, lower, differentiate,
    // probe and LU, emit), median of 5.
    let src = include_str!("../examples/mechanisms/whipple.rs");
    let body = &src[src.find('{').map_or(0, |i| i + 1)..src.rfind('}').unwrap_or(src.len())];
    let opts = mechgen_codegen::Options::default();
    let mut gen = Vec::new();
    let mut stats = None;
    for _ in 0..5 {
        let t = Instant::now();
        let g = mechgen_codegen::generate_str(body, &opts).expect("generates");
        gen.push(t.elapsed().as_secs_f64());
        stats = Some(g.modules[0].clone());
    }
    let stats = stats.expect("one module");
    println!("generation: {:.1} ms (median of 5)", 1e3 * median(gen));
    for f in &stats.functions {
        if [
            "null_space_fixed",
            "mass_matrix",
            "forces",
            "gamma",
            "jacobian",
        ]
        .contains(&f.name.as_str())
        {
            println!("  {:<18} {:>6} ops", f.name, f.ops.total());
        }
    }

    let p = whipple::Params::default();
    let mut rng = mechgen_test_support::rng(1);
    let nominal = <M as Mechanism<8, 5, 3>>::nominal_q();
    let states: Vec<(SVector<f64, 8>, SVector<f64, 3>, SVector<f64, 8>)> = (0..1000)
        .map(|_| {
            let mut q0 = nominal;
            q0[3] = rng.random_range(-0.2..0.2);
            q0[5] = rng.random_range(-0.3..0.3);
            let q = assemble::<M, 8, 5, 3>(&q0, &p, 0.0, &AssemblyOptions::default())
                .expect("assembles")
                .q;
            let u = SVector::<f64, 3>::new(
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
                -5.0 / p.r_r,
            );
            let (d, _) = whipple::null_space_fixed(&q, &p, 0.0);
            (q, u, d * u)
        })
        .collect();
    let (mut proj, mut lag, mut qdd) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..21 {
        let t = Instant::now();
        for (q, u, _) in &states {
            black_box(
                projection_accelerations::<M, 8, 5, 3>(black_box(q), black_box(u), &p, 0.0, 1e-8)
                    .ok(),
            );
        }
        proj.push(t.elapsed().as_secs_f64() / states.len() as f64);
        let t = Instant::now();
        for (q, _, qd) in &states {
            black_box(
                lagrange_accelerations::<M, 8, 5, 3>(black_box(q), black_box(qd), &p, 0.0, None)
                    .ok(),
            );
        }
        lag.push(t.elapsed().as_secs_f64() / states.len() as f64);
        let t = Instant::now();
        for (q, _, qd) in &states {
            black_box(lagrange_qdd::<M, 8, 5, 3>(black_box(q), black_box(qd), &p, 0.0, None).ok());
        }
        qdd.push(t.elapsed().as_secs_f64() / states.len() as f64);
    }
    let (tp, tl, tq) = (median(proj), median(lag), median(qdd));
    println!("RHS, projection method: {:.2} µs", 1e6 * tp);
    println!(
        "RHS, Lagrange route (lagrange_qdd, generated chart): {:.2} µs ({:.2}× the projection method)",
        1e6 * tq,
        tq / tp
    );
    println!(
        "Lagrange accelerations with multipliers (generated chart): {:.2} µs ({:.2}× the projection method)",
        1e6 * tl,
        tl / tp
    );
    println!("PyDy (published, other hardware): 8.34 µs");
}
