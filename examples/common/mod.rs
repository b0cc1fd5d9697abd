//! Shared reporting for the examples.

use mechgen::nalgebra::SVector;
use mechgen::runtime::Mechanism;

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
    println!("  C_J =\n{j:.6}");
    println!(
        "  null space D ({} x {}), |C_J D| / (|C_J| |D|) = {:.3e}, smallest relative pivot {:.3e}",
        NQ,
        DOF,
        (j * d).norm() / (j.norm() * d.norm()),
        health
    );
}
