//! Targets for `valgrind --tool=callgrind` (instruction counts, repeatable under load) on the
//! Stewart platform's generic family:
//!
//! * `profile_step jacobians` / `symbolic` / `step`: `step_jacobians` /
//!   `step_jacobians_symbolic` (state only) / `step`, 200 calls;
//! * `profile_step lanes` / `profile_step scalar`: `null_space_fixed` and `mass_matrix` on four
//!   configurations, 1,000 times, in `F64x4` lanes / as four `f64` calls.
//!
//! `cargo build --release -p mechgen-bench --example profile_step`, then
//! `valgrind --tool=callgrind target/release/examples/profile_step lanes` (and `scalar`): the
//! difference of the two totals over 1,000 is the per-batch difference.
use std::hint::black_box;

use mechgen::nalgebra::SVector;
use mechgen::runtime::{
    self, step_jacobians, step_jacobians_symbolic, AssemblyOptions, F64x4, GenericDynamics,
    StepOptions,
};
use mechgen_bench::generated::stewart as m;

const NQ: usize = m::NQ;

fn main() {
    let p = m::Params::default();
    let q = runtime::assemble::<m::Model, NQ, { m::NC }, { m::DOF }>(
        &SVector::from(m::NOMINAL_Q),
        &p,
        0.0,
        &AssemblyOptions::default(),
    )
    .expect("nominal configuration assembles")
    .q;
    let mode = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "jacobians".into());
    let pv = m::generic::param_values(&p);
    let qs: [SVector<f64, NQ>; 4] = std::array::from_fn(|l| q.map(|x| x + 1e-3 * (l as f64 + 1.0)));
    let q4 = SVector::<F64x4, NQ>::from_fn(|i, _| F64x4::new(std::array::from_fn(|l| qs[l][i])));
    let p4 = m::generic::params::<F64x4>(&p);
    type G = m::Model;
    const NC: usize = m::NC;
    const DOF: usize = m::DOF;
    const NP: usize = m::generic::NP;
    match mode.as_str() {
        "lanes" => {
            for _ in 0..1000 {
                let t = F64x4::splat(0.0);
                black_box(<G as GenericDynamics<NQ, NC, DOF, NP>>::null_space_s(
                    black_box(&q4),
                    &p4,
                    t,
                ));
                black_box(<G as GenericDynamics<NQ, NC, DOF, NP>>::mass_matrix_s(
                    black_box(&q4),
                    &p4,
                    t,
                ));
            }
        }
        "scalar" => {
            for _ in 0..1000 {
                for ql in &qs {
                    black_box(<G as GenericDynamics<NQ, NC, DOF, NP>>::null_space_s(
                        black_box(ql),
                        &pv,
                        0.0,
                    ));
                    black_box(<G as GenericDynamics<NQ, NC, DOF, NP>>::mass_matrix_s(
                        black_box(ql),
                        &pv,
                        0.0,
                    ));
                }
            }
        }
        "step" => {
            let u = SVector::<f64, DOF>::from_element(0.1);
            for _ in 0..200 {
                black_box(runtime::step::<G, NQ, NC, DOF, NP>(
                    black_box(&q),
                    &u,
                    &p,
                    0.0,
                    1e-3,
                    &StepOptions::default(),
                ))
                .ok();
            }
        }
        "symbolic" => {
            let u = SVector::<f64, DOF>::from_element(0.1);
            let opts = StepOptions {
                parameter_jacobians: false,
                ..StepOptions::default()
            };
            for _ in 0..200 {
                black_box(step_jacobians_symbolic::<G, NQ, NC, DOF, NP>(
                    black_box(&q),
                    &u,
                    &p,
                    0.0,
                    1e-3,
                    &opts,
                ))
                .ok();
            }
        }
        _ => {
            let u = SVector::<f64, DOF>::from_element(0.1);
            let opts = StepOptions {
                parameter_jacobians: false,
                ..StepOptions::default()
            };
            for _ in 0..200 {
                black_box(step_jacobians::<G, NQ, NC, DOF, NP>(
                    black_box(&q),
                    &u,
                    &p,
                    0.0,
                    1e-3,
                    &opts,
                ))
                .ok();
            }
        }
    }
}
