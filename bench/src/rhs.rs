//! Right-hand sides per second of the projection method for every example with
//! dynamics: the generated route (`projection_rhs`: generated `null_space`,
//! `solve_dependent`, `gamma`, `mass_matrix`, `forces`) against the numeric-`D` route
//! (`projection_accelerations_numeric`: SVD basis of the generated Jacobian and numeric
//! solves) on the same model, at the same state.

use std::hint::black_box;

use mechgen::nalgebra::SVector;
use mechgen::runtime::{self, assemble::AssemblyOptions, Dynamics};

use crate::generated::{andrews, slider_crank, stewart};
use crate::harness::{ns_per_call, Config, Summary};

/// One example's figures.
#[derive(Clone, Debug)]
pub struct RhsRate {
    /// Mechanism name.
    pub mechanism: &'static str,
    /// ns per generated right-hand side.
    pub generated_ns: Summary,
    /// ns per numeric-`D` right-hand side.
    pub numeric_ns: Summary,
    /// Largest difference of `q̇` and of `u̇` between the routes, relative to the numeric
    /// route's largest entry (they must agree).
    pub agreement: f64,
}

impl RhsRate {
    /// Generated right-hand sides per second (from the median).
    pub fn generated_per_s(&self) -> f64 {
        1e9 / self.generated_ns.median
    }
    /// Numeric right-hand sides per second (from the median).
    pub fn numeric_per_s(&self) -> f64 {
        1e9 / self.numeric_ns.median
    }
    /// JSON of the figures.
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "mechanism": self.mechanism,
            "generated_ns": self.generated_ns.json(),
            "numeric_ns": self.numeric_ns.json(),
            "generated_rhs_per_s": self.generated_per_s(),
            "numeric_rhs_per_s": self.numeric_per_s(),
            "relative_difference_of_accelerations": self.agreement,
        })
    }
}

/// Times both right-hand sides at the assembled nominal configuration with every
/// independent velocity 0.5.
fn rate<M, const NQ: usize, const NC: usize, const DOF: usize>(
    mechanism: &'static str,
    p: &M::Params,
    cfg: &Config,
) -> Option<RhsRate>
where
    M: Dynamics<NQ, NC, DOF>,
{
    let q = runtime::assemble::assemble::<M, NQ, NC, DOF>(
        &M::nominal_q(),
        p,
        0.0,
        &AssemblyOptions::default(),
    )
    .ok()?
    .q;
    let u = SVector::<f64, DOF>::repeat(0.5);
    let generated = runtime::projection::projection_rhs::<M, NQ, NC, DOF>(
        &q,
        &u,
        p,
        0.0,
        runtime::null_space::DEFAULT_PIVOT_THRESHOLD,
    )
    .ok()?;
    let numeric =
        runtime::projection::projection_accelerations_numeric::<M, NQ, NC, DOF>(&q, &u, p, 0.0)
            .ok()?;
    // Both routes take the same state (q, u) and must return the same q̇ and u̇.
    let rel = |a: &[f64], b: &[f64]| {
        let scale = b.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(1e-300);
        a.iter()
            .zip(b)
            .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()))
            / scale
    };
    let agreement = rel(generated.0.as_slice(), numeric.qd.as_slice())
        .max(rel(generated.1.as_slice(), numeric.ud.as_slice()));
    let generated_ns = ns_per_call(cfg, || {
        runtime::projection::projection_rhs::<M, NQ, NC, DOF>(
            black_box(&q),
            black_box(&u),
            p,
            0.0,
            runtime::null_space::DEFAULT_PIVOT_THRESHOLD,
        )
        .map_or(f64::NAN, |r| r.1[0])
    });
    let numeric_ns = ns_per_call(cfg, || {
        runtime::projection::projection_accelerations_numeric::<M, NQ, NC, DOF>(
            black_box(&q),
            black_box(&u),
            p,
            0.0,
        )
        .map_or(f64::NAN, |r| r.ud[0])
    });
    Some(RhsRate {
        mechanism,
        generated_ns,
        numeric_ns,
        agreement,
    })
}

/// All examples with dynamics.
pub fn run(cfg: &Config) -> Vec<RhsRate> {
    [
        rate::<slider_crank::Model, 3, 2, 1>("slider crank", &slider_crank::Params::default(), cfg),
        rate::<andrews::Model, 7, 6, 1>("seven-body (Andrews)", &andrews::Params::default(), cfg),
        rate::<stewart::Model, 24, 18, 6>("Stewart platform", &stewart::Params::default(), cfg),
    ]
    .into_iter()
    .flatten()
    .collect()
}
