//! Targets for `valgrind --tool=callgrind` (instruction counts, repeatable under load) on the
//! generic family of a mechanism (`stewart`, the default, `andrews` or `slider_crank`):
//!
//! * `profile_step MODE [MECHANISM]` with MODE `step` / `jacobians` / `symbolic`: 200 calls of
//!   `step` / `step_jacobians` (state only) / `step_jacobians_symbolic` (state only); a suffix
//!   `+p` (`symbolic+p`) adds the parameter blocks; a prefix `rk4-` (`rk4-symbolic+p`) takes
//!   the RK4 step instead of semi-implicit Euler; MODE `symbolic-into` (`symbolic-into+p`,
//!   `rk4-symbolic-into+p`) calls `step_jacobians_symbolic_into` with one reused output;
//! * MODE `rhs`: 200 right-hand sides of the projection method (`projection_rhs`, the `f64`
//!   functions); MODE `lagrange`: 200 of the Lagrange route's (`lagrange_qdd`);
//! * MODE `setup`: the assembly alone (subtract it from the others' totals);
//! * MODE `lanes` / `scalar`: `null_space_fixed` and `mass_matrix` on four configurations,
//!   1,000 times, in `F64x4` lanes / as four `f64` calls.
//!
//! `cargo build --release -p mechgen-bench --example profile_step`, then e.g.
//! `valgrind --tool=callgrind target/release/examples/profile_step symbolic andrews` and
//! `callgrind_annotate --inclusive=yes` for the function's own count.
use std::hint::black_box;

use mechgen::nalgebra::SVector;
use mechgen::runtime::{
    self, assemble::AssemblyOptions, step::step_jacobians, step::step_jacobians_symbolic,
    step::step_jacobians_symbolic_into, step::StepJacobians, step::StepMethod, step::StepOptions,
    F64x4, StepDerivatives,
};
use mechgen_bench::generated as g;

fn run<M, const NQ: usize, const NC: usize, const DOF: usize, const NP: usize>(mode: &str)
where
    M: StepDerivatives<NQ, NC, DOF, NP>,
    M::Params: Default,
{
    let p = M::Params::default();
    let q = runtime::assemble::assemble::<M, NQ, NC, DOF>(
        &M::nominal_q(),
        &p,
        0.0,
        &AssemblyOptions::default(),
    )
    .expect("nominal configuration assembles")
    .q;
    let pv = M::param_values(&p);
    let u = SVector::<f64, DOF>::from_element(0.1);
    // A trailing `+p` in the mode (`symbolic+p`) differentiates with respect to the
    // parameters too.
    let (mode, with_p) = match mode.strip_suffix("+p") {
        Some(m) => (m, true),
        None => (mode, false),
    };
    let (mode, method) = match mode.strip_prefix("rk4-") {
        Some(m) => (m, StepMethod::Rk4),
        None => (mode, StepMethod::SemiImplicitEuler),
    };
    let state_only = StepOptions {
        parameter_jacobians: with_p,
        method,
        ..StepOptions::default()
    };
    // The projection method's right-hand side at `q` with the velocities `u`.
    let rhs = |q: &SVector<f64, NQ>| {
        runtime::projection::projection_rhs::<M, NQ, NC, DOF>(
            q,
            &u,
            &p,
            0.0,
            runtime::null_space::DEFAULT_PIVOT_THRESHOLD,
        )
    };
    // 200 calls of a step function at the assembled state.
    macro_rules! two_hundred {
        ($($f:ident)::+) => {
            for _ in 0..200 {
                let r = $($f)::+::<M, NQ, NC, DOF, NP>(
                    black_box(&q),
                    &u,
                    &p,
                    0.0,
                    1e-3,
                    &state_only,
                );
                black_box(&r);
            }
        };
    }
    match mode {
        "lanes" | "scalar" => {
            let qs: [SVector<f64, NQ>; 4] =
                std::array::from_fn(|l| q.map(|x| x + 1e-3 * (l as f64 + 1.0)));
            let q4 =
                SVector::<F64x4, NQ>::from_fn(|i, _| F64x4::new(std::array::from_fn(|l| qs[l][i])));
            let p4: [F64x4; NP] = std::array::from_fn(|i| F64x4::splat(pv[i]));
            for _ in 0..1000 {
                if mode == "lanes" {
                    let t = F64x4::splat(0.0);
                    black_box(&M::null_space_s(black_box(&q4), &p4, t));
                    black_box(&M::mass_matrix_s(black_box(&q4), &p4, t));
                } else {
                    for ql in &qs {
                        black_box(&M::null_space_s(black_box(ql), &pv, 0.0));
                        black_box(&M::mass_matrix_s(black_box(ql), &pv, 0.0));
                    }
                }
            }
        }
        // The setup alone (assembly), to subtract from the others' totals.
        "setup" => {}
        "step" => two_hundred!(runtime::step::step),
        // 200 right-hand sides of the projection method (the `f64` functions, not the
        // generic family).
        "rhs" => {
            for _ in 0..200 {
                black_box(rhs(black_box(&q))).ok();
            }
        }
        "lagrange" => {
            // The consistent velocity of `u` from the projection route, then 200 of the
            // Lagrange route's accelerations (through the generated chart).
            let (qd, _) = rhs(&q).expect("right-hand side at the assembled state");
            for _ in 0..200 {
                black_box(runtime::lagrange::lagrange_qdd::<M, NQ, NC, DOF>(
                    black_box(&q),
                    &qd,
                    &p,
                    0.0,
                    None,
                ))
                .ok();
            }
        }
        "symbolic" => two_hundred!(step_jacobians_symbolic),
        // `step_jacobians_symbolic_into`, one `StepJacobians` reused by the 200 calls.
        "symbolic-into" => {
            let mut out = StepJacobians::<NQ, DOF, NP>::zeros();
            for _ in 0..200 {
                let r = step_jacobians_symbolic_into::<M, NQ, NC, DOF, NP>(
                    black_box(&q),
                    &u,
                    &p,
                    0.0,
                    1e-3,
                    &state_only,
                    &mut out,
                );
                black_box(&r);
                black_box(&out);
            }
        }
        _ => two_hundred!(step_jacobians),
    }
}

macro_rules! run {
    ($m:ident, $mode:expr) => {
        run::<g::$m::Model, { g::$m::NQ }, { g::$m::NC }, { g::$m::DOF }, { g::$m::generic::NP }>(
            $mode,
        )
    };
}

fn main() {
    let mode = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "jacobians".into());
    match std::env::args().nth(2).as_deref() {
        Some("andrews") => run!(andrews, &mode),
        Some("slider_crank") => run!(slider_crank, &mode),
        _ => run!(stewart, &mode),
    }
}
