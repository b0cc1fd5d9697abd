//! Shared reporting for the example programs: sizes, operation counts, null-space timings.

use std::time::Instant;

use mechgen::nalgebra::{SMatrix, SVector};
use mechgen::runtime::{
    self, assemble::AssemblyOptions, null_space::NullSpacePath,
    null_space::DEFAULT_PIVOT_THRESHOLD, Mechanism,
};

/// Prints sizes, operation counts, and residual, Jacobian and null space at the nominal
/// configuration.
pub fn report<const NQ: usize, const NC: usize, const DOF: usize, M>(
    p: &M::Params,
    ops: &[(&str, usize)],
) where
    M: Mechanism<NQ, NC, DOF>,
{
    println!("{}: NQ = {NQ}, NC = {NC}, DOF = {DOF}", M::NAME);
    let indep: Vec<&str> = M::INDEPENDENT.iter().map(|&i| M::COORD_NAMES[i]).collect();
    println!("independent coordinates: {indep:?}");
    println!("operation counts:");
    for (name, n) in ops {
        println!("  {name:<16} {n}");
    }
    let q: SVector<f64, NQ> = M::nominal_q();
    let r = M::residual(&q, p, 0.0);
    let j = M::jacobian(&q, p, 0.0);
    let (d, health) = M::null_space(&q, p, 0.0);
    println!("at the nominal configuration:");
    println!("  |C(q)| = {:.3e}", r.norm());
    println!("  C(q) = {:?}", r.as_slice());
    if NQ <= 8 {
        println!("  C_J ={j:.6}");
    }
    println!(
        "  null space D ({NQ} x {DOF}): |C_J D| / (|C_J| |D|) = {:.3e}, smallest relative pivot {:.3e}",
        (j * d).norm() / (j.norm() * d.norm()),
        health
    );
}

/// Assembles `n` random valid configurations (a random walk of the independent
/// coordinates with steps up to `step`, each assembled with the runtime's Newton) and
/// prints the worst `‖C_J D‖ / (‖C_J‖ ‖D‖)`, the smallest relative pivot, how often the
/// pivot-health wrapper fell back to a numeric basis, and ns per generated `null_space`
/// call next to ns per nalgebra SVD null space of the same Jacobian.
pub fn null_space_study<const NQ: usize, const NC: usize, const DOF: usize, M>(
    p: &M::Params,
    n: usize,
    step: f64,
    seed: u64,
) where
    M: Mechanism<NQ, NC, DOF>,
{
    let opts = AssemblyOptions::default();
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut uniform = move || {
        // xorshift64*: enough for a random walk in an example.
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        (state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    };
    let mut q = match runtime::assemble::assemble::<M, NQ, NC, DOF>(&M::nominal_q(), p, 0.0, &opts)
    {
        Ok(a) => a.q,
        Err(e) => {
            println!("the nominal configuration does not assemble: {e}");
            return;
        }
    };
    let mut configs = Vec::with_capacity(n);
    let mut failures = 0usize;
    let mut iterations = 0usize;
    while configs.len() < n && failures < 10 * n {
        let mut trial = q;
        for &i in &M::INDEPENDENT {
            trial[i] += step * uniform();
        }
        match runtime::assemble::assemble::<M, NQ, NC, DOF>(&trial, p, 0.0, &opts) {
            Ok(a) => {
                iterations += a.iterations;
                q = a.q;
                configs.push(q);
            }
            Err(_) => failures += 1,
        }
    }
    let mut worst: f64 = 0.0;
    let mut min_pivot = f64::INFINITY;
    let mut fallbacks = 0usize;
    for q in &configs {
        let j = M::jacobian(q, p, 0.0);
        match runtime::null_space::null_space_checked::<M, NQ, NC, DOF>(
            q,
            p,
            0.0,
            DEFAULT_PIVOT_THRESHOLD,
        ) {
            Ok(out) => {
                if let NullSpacePath::Static { min_pivot: m } = out.path {
                    min_pivot = min_pivot.min(m);
                } else {
                    fallbacks += 1;
                    min_pivot = min_pivot.min(M::null_space(q, p, 0.0).1);
                }
                worst = worst.max((j * out.d).norm() / (j.norm() * out.d.norm()));
            }
            Err(e) => println!("  null space failed at {q:?}: {e}"),
        }
    }
    println!(
        "{} random valid configurations ({} failed assemblies, {:.1} Newton iterations each):",
        configs.len(),
        failures,
        iterations as f64 / configs.len().max(1) as f64
    );
    println!("  max |C_J D| / (|C_J| |D|) = {worst:.3e}");
    println!("  smallest relative pivot   = {min_pivot:.3e}");
    println!("  numeric fallbacks         = {fallbacks}");
    // Timing over the same configurations (many calls per measurement, median of rounds).
    let jacobians: Vec<SMatrix<f64, NC, NQ>> =
        configs.iter().map(|q| M::jacobian(q, p, 0.0)).collect();
    let generated = time_per_call(&configs, |q| {
        let (d, h) = M::null_space(q, p, 0.0);
        d[(0, 0)] + h
    });
    let svd = time_per_call(&jacobians, |j| {
        match runtime::null_space::svd_null_space::<NC, NQ, DOF>(j) {
            Ok(d) => d[(0, 0)],
            Err(_) => 0.0,
        }
    });
    println!(
        "  ns per null_space call: generated {generated:.1} ns, nalgebra SVD {svd:.1} ns ({:.0}x)",
        svd / generated
    );
}

/// Median over 7 rounds of the mean time per call of `f` over `inputs`.
fn time_per_call<T>(inputs: &[T], mut f: impl FnMut(&T) -> f64) -> f64 {
    if inputs.is_empty() {
        return f64::NAN;
    }
    let mut acc = 0.0;
    for x in inputs.iter().take(100) {
        acc += f(std::hint::black_box(x));
    }
    let mut rounds = Vec::new();
    for _ in 0..7 {
        let start = Instant::now();
        for x in inputs {
            acc += f(std::hint::black_box(x));
        }
        rounds.push(start.elapsed().as_secs_f64() * 1e9 / inputs.len() as f64);
    }
    std::hint::black_box(acc);
    rounds.sort_by(f64::total_cmp);
    rounds[rounds.len() / 2]
}

/// The value of `--csv PATH` on the command line, if given.
pub fn csv_path() -> Option<std::path::PathBuf> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == "--csv")
        .and_then(|i| args.get(i + 1))
        .map(std::path::PathBuf::from)
}
