//! Simulation of the seven-body mechanism (Andrews) with the generated projection route
//! and with a numeric-`D` route, over `t ∈ [0, 0.03]` at `rtol = 1e-10`.

use std::hint::black_box;
use std::time::Instant;

use mechgen::nalgebra::SVector;
use mechgen::runtime::{
    self, assemble::assemble, assemble::AssemblyOptions, ode::dopri5, ode::Dopri5Options,
    ode::OdeSystem, ode::Pair, simulate::Integrator, simulate::SimOptions, SimError,
};

use crate::generated::andrews as m;
use crate::harness::{ns_per_call, Config, Summary};

type M = m::Model;
const NQ: usize = m::NQ;
const NC: usize = m::NC;
const DOF: usize = m::DOF;

/// End time.
pub const T_END: f64 = 0.03;
/// Relative tolerance.
pub const RTOL: f64 = 1e-10;
/// Absolute tolerance.
pub const ATOL: f64 = 1e-12;

/// `q(0.03)` of the Bari test set's reference solution (`andsoln` of andrews.f).
pub const REFERENCE: [f64; 7] = [
    0.1581077119629904e2,
    -0.1575637105984298e2,
    0.4082224013073101e-1,
    -0.5347301163226948e0,
    0.5244099658805304e0,
    0.5347301163226948e0,
    0.1048080741042263e1,
];

/// One route's results.
#[derive(Clone, Debug)]
pub struct Route {
    /// Name.
    pub name: &'static str,
    /// Wall time of one whole simulation (ms).
    pub wall_ms: Summary,
    /// Right-hand-side evaluations of one simulation.
    pub rhs_calls: usize,
    /// Accepted and rejected steps.
    pub steps: usize,
    /// Rejected steps.
    pub rejected: usize,
    /// `rhs_calls / median wall time`.
    pub rhs_per_s: f64,
    /// ns per right-hand side, timed alone at the initial state.
    pub rhs_ns: Summary,
    /// `q(0.03)`.
    pub q_end: Vec<f64>,
    /// Largest relative error of `q(0.03)` against [`REFERENCE`].
    pub ref_err: f64,
}

/// Both routes and their difference.
#[derive(Clone, Debug)]
pub struct SimReport {
    /// Generated null space and dependent solve (`simulate_projection`).
    pub generated: Route,
    /// Numeric `D` (SVD) and numeric solves (`projection_accelerations_numeric`).
    pub numeric: Route,
    /// `max_i |q_gen(0.03) − q_num(0.03)|`.
    pub max_abs_diff: f64,
    /// `‖q_gen − q_num‖ / ‖q_gen‖`.
    pub rel_diff: f64,
}

fn options() -> SimOptions {
    SimOptions {
        integrator: Integrator::Dopri5(dopri_options()),
        ..SimOptions::default()
    }
}

fn dopri_options() -> Dopri5Options {
    Dopri5Options {
        rtol: RTOL,
        atol: ATOL,
        ..Dopri5Options::default()
    }
}

/// The projection method with `projection_accelerations_numeric` as right-hand side and
/// the same post-step projection (Newton assembly) as `simulate_projection`.
struct NumericSystem<'a> {
    p: &'a m::Params,
    assembly: AssemblyOptions,
}

impl OdeSystem<Pair<NQ, DOF>> for NumericSystem<'_> {
    type Error = SimError;
    fn rhs(&mut self, t: f64, y: &Pair<NQ, DOF>) -> Result<Pair<NQ, DOF>, SimError> {
        let a = runtime::projection::projection_accelerations_numeric::<M, NQ, NC, DOF>(
            &y.a, &y.b, self.p, t,
        )?;
        Ok(Pair::new(a.qd, a.ud))
    }
    fn project(&mut self, t: f64, y: &mut Pair<NQ, DOF>) -> Result<(), SimError> {
        let asm = assemble::<M, NQ, NC, DOF>(&y.a, self.p, t, &self.assembly)
            .map_err(|source| SimError::Assembly { t, source })?;
        y.a = asm.q;
        Ok(())
    }
}

struct Run {
    q_end: SVector<f64, NQ>,
    rhs_calls: usize,
    steps: usize,
    rejected: usize,
}

fn run_generated(p: &m::Params, q0: &SVector<f64, NQ>) -> Run {
    let tr = runtime::simulate::simulate_projection::<M, NQ, NC, DOF>(
        q0,
        &SVector::zeros(),
        p,
        0.0,
        T_END,
        &options(),
    )
    .expect("generated route");
    Run {
        q_end: tr.q[tr.q.len() - 1],
        rhs_calls: tr.stats.ode.rhs_calls,
        steps: tr.stats.ode.steps + tr.stats.ode.rejected,
        rejected: tr.stats.ode.rejected,
    }
}

fn run_numeric(p: &m::Params, q0: &SVector<f64, NQ>) -> Run {
    let assembly = AssemblyOptions::default();
    let asm = assemble::<M, NQ, NC, DOF>(q0, p, 0.0, &assembly).expect("initial assembly");
    let mut sys = NumericSystem { p, assembly };
    let sol = dopri5(
        &mut sys,
        0.0,
        Pair::new(asm.q, SVector::zeros()),
        &[T_END],
        &dopri_options(),
    )
    .expect("numeric route");
    Run {
        q_end: sol.y[sol.y.len() - 1].a,
        rhs_calls: sol.stats.rhs_calls,
        steps: sol.stats.steps + sol.stats.rejected,
        rejected: sol.stats.rejected,
    }
}

fn route(
    name: &'static str,
    runs: usize,
    cfg: &Config,
    sim: impl Fn() -> Run,
    rhs: impl Fn() -> f64,
) -> Route {
    let first = sim();
    let mut walls = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t = Instant::now();
        black_box(sim());
        walls.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let wall_ms = Summary::of(&walls);
    let ref_err = (0..NQ)
        .map(|i| ((first.q_end[i] - REFERENCE[i]) / REFERENCE[i]).abs())
        .fold(0.0, f64::max);
    Route {
        name,
        wall_ms,
        rhs_calls: first.rhs_calls,
        steps: first.steps,
        rejected: first.rejected,
        rhs_per_s: first.rhs_calls as f64 / (wall_ms.median * 1e-3),
        rhs_ns: ns_per_call(cfg, rhs),
        q_end: first.q_end.as_slice().to_vec(),
        ref_err,
    }
}

/// Runs both routes (`runs` timed simulations each, after one untimed).
pub fn run(runs: usize, cfg: &Config) -> SimReport {
    let p = m::Params::default();
    let q0 = SVector::<f64, NQ>::from(m::NOMINAL_Q);
    let u0 = SVector::<f64, DOF>::zeros();
    let generated = route(
        "generated (simulate_projection)",
        runs,
        cfg,
        || run_generated(&p, &q0),
        || {
            runtime::projection::projection_rhs::<M, NQ, NC, DOF>(
                black_box(&q0),
                black_box(&u0),
                &p,
                0.0,
                runtime::null_space::DEFAULT_PIVOT_THRESHOLD,
            )
            .map_or(f64::NAN, |r| r.1[0])
        },
    );
    let numeric = route(
        "numeric D (projection_accelerations_numeric)",
        runs,
        cfg,
        || run_numeric(&p, &q0),
        || {
            runtime::projection::projection_accelerations_numeric::<M, NQ, NC, DOF>(
                black_box(&q0),
                black_box(&u0),
                &p,
                0.0,
            )
            .map_or(f64::NAN, |r| r.ud[0])
        },
    );
    let a = SVector::<f64, NQ>::from_column_slice(&generated.q_end);
    let b = SVector::<f64, NQ>::from_column_slice(&numeric.q_end);
    SimReport {
        max_abs_diff: (a - b).abs().max(),
        rel_diff: (a - b).norm() / a.norm(),
        generated,
        numeric,
    }
}

impl Route {
    /// JSON of this route.
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "name": self.name,
            "wall_ms": self.wall_ms.json(),
            "rhs_calls": self.rhs_calls,
            "steps": self.steps,
            "rejected": self.rejected,
            "rhs_per_second": self.rhs_per_s,
            "rhs_ns": self.rhs_ns.json(),
            "q_end": self.q_end,
            "max_rel_error_vs_reference": self.ref_err,
        })
    }
}

impl SimReport {
    /// JSON of the report.
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "mechanism": "andrews",
            "t_end": T_END, "rtol": RTOL, "atol": ATOL,
            "generated": self.generated.json(),
            "numeric": self.numeric.json(),
            "q_end_max_abs_diff": self.max_abs_diff,
            "q_end_rel_diff": self.rel_diff,
        })
    }
}
