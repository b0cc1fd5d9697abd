//! Cost of the step Jacobians and of the generic family, as ratios against a baseline
//! measured in the same run (issue 13's benchmarks):
//!
//! * `step_jacobians` (all of ∂x'/∂(x, p) by `Dual<8>` passes) / `step`;
//! * `step_jacobians_symbolic` (the state blocks composed from the generated derivatives) /
//!   `step` and / the dual-number state Jacobian;
//! * central differences of the step in every input (2·(NQ + DOF + NP) steps) /
//!   `step_jacobians`, / `step_jacobians_symbolic` and / `step_jacobians_symbolic_into`
//!   (one output reused by every call);
//! * the same for the RK4 step (`StepMethod::Rk4`): its step / semi-implicit Euler's, its
//!   Jacobians by dual numbers and composed (also `_into`) / its step, composed / dual,
//!   differences / composed;
//! * the residual's Jacobian by one `Dual<NQ>`-free pass per 8 coordinates
//!   (`generic::residual::<Dual<8>>`) / the symbolic `jacobian`;
//! * `generic::null_space_fixed::<f32>` / the `f64` `null_space_fixed`;
//! * four configurations in `F64x4` lanes / four `f64` calls (`null_space_fixed`,
//!   `mass_matrix`).
//!
//! Timing: each pair is measured in alternation (rounds of a fixed number of calls, the
//! median round per call), so machine load affects both sides alike.
//!
//! `cargo bench -p mechgen-bench --bench step [FILTER…]` (rows whose `mechanism | measured`
//! contains a filter, e.g. `F64x4`; all rows without one)

use std::hint::black_box;
use std::time::Instant;

use mechgen::nalgebra::SVector;
use mechgen::runtime::{
    self, assemble::AssemblyOptions, step::step, step::step_generic, step::step_jacobians,
    step::step_jacobians_symbolic, step::step_jacobians_symbolic_into, step::StepJacobians,
    step::StepMethod, step::StepOptions, Dual, F64x4, StepDerivatives,
};
use mechgen_bench::generated as g;

/// Median nanoseconds per call of `a` and of `b`, measured in alternating rounds.
fn pair(mut a: impl FnMut(), mut b: impl FnMut()) -> (f64, f64) {
    // Calibrate a round to ~2 ms of `a`.
    let mut n = 1usize;
    loop {
        let t = Instant::now();
        for _ in 0..n {
            a();
        }
        if t.elapsed().as_secs_f64() > 2e-3 || n > 1 << 24 {
            break;
        }
        n *= 2;
    }
    let (mut ta, mut tb) = (Vec::new(), Vec::new());
    for _ in 0..15 {
        let t = Instant::now();
        for _ in 0..n {
            a();
        }
        ta.push(t.elapsed().as_secs_f64() * 1e9 / n as f64);
        let t = Instant::now();
        for _ in 0..n {
            b();
        }
        tb.push(t.elapsed().as_secs_f64() * 1e9 / n as f64);
    }
    ta.sort_by(f64::total_cmp);
    tb.sort_by(f64::total_cmp);
    (ta[ta.len() / 2], tb[tb.len() / 2])
}

/// Prints one row measured by `measure` (a [`pair`]) unless the command line has filters
/// (arguments other than `--bench`) and none is a substring of `mechanism | measured`.
fn row(mech: &str, what: &str, base: &str, measure: impl FnOnce() -> (f64, f64)) {
    let label = format!("{mech} | {what}");
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    if !filters.is_empty() && !filters.iter().any(|f| label.contains(f.as_str())) {
        return;
    }
    let (a, b) = measure();
    println!(
        "| {mech} | {what} | {a:.0} | {base} | {b:.0} | {:.2} |",
        a / b
    );
}

/// One row: `M::$f` on four configurations in `F64x4` lanes against four `f64` calls.
macro_rules! lanes_row {
    ($name:expr, $label:expr, $f:ident, $q4:expr, $p4:expr, $qs:expr, $pv:expr) => {{
        let lanes = || {
            black_box(&M::$f(black_box(&$q4), black_box(&$p4), F64x4::splat(0.0)));
        };
        let scalar = || {
            for ql in &$qs {
                black_box(&M::$f(black_box(ql), black_box(&$pv), 0.0f64));
            }
        };
        row(
            $name,
            &format!("{}, 4 configs in F64x4", $label),
            "4 f64 calls",
            || pair(lanes, scalar),
        );
    }};
}

fn bench<M, const NQ: usize, const NC: usize, const DOF: usize, const NP: usize>(
    name: &str,
    h: f64,
    u: f64,
) where
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
    let u = SVector::<f64, DOF>::from_element(u);
    let opts = StepOptions::default();
    let pv = M::param_values(&p);
    let n = NQ + DOF + NP;
    // A closure calling `$f::<M, NQ, NC, DOF, NP>(&q, &u, &p, 0.0, h, &$opts)` on black-boxed
    // inputs (the step or one of its Jacobians).
    macro_rules! call {
        ($f:ident, $opts:ident) => {
            || {
                black_box($f::<M, NQ, NC, DOF, NP>(
                    black_box(&q),
                    black_box(&u),
                    black_box(&p),
                    0.0,
                    h,
                    &$opts,
                ))
                .ok();
            }
        };
    }
    let sj = call!(step_jacobians, opts);
    let st = call!(step, opts);
    row(
        name,
        &format!("step_jacobians (n = {n} inputs)"),
        "step",
        || pair(sj, st),
    );
    let state_only = StepOptions {
        parameter_jacobians: false,
        ..opts
    };
    let sx = call!(step_jacobians, state_only);
    row(
        name,
        &format!("step_jacobians, state only (n = {})", NQ + DOF),
        "step",
        || pair(sx, st),
    );
    let sym = call!(step_jacobians_symbolic, state_only);
    row(
        name,
        &format!("step_jacobians_symbolic, state only (n = {})", NQ + DOF),
        "step",
        || pair(sym, st),
    );
    row(
        name,
        "step_jacobians_symbolic, state only",
        "step_jacobians, state only",
        || pair(sym, sx),
    );
    let sym_full = call!(step_jacobians_symbolic, opts);
    row(
        name,
        &format!("step_jacobians_symbolic (n = {n} inputs)"),
        "step",
        || pair(sym_full, st),
    );
    // Central differences of the step with options `o` in every input.
    let fd = |o: StepOptions| {
        move || {
            for c in 0..n {
                for s in [1.0, -1.0] {
                    let (mut qq, mut uu, mut pp) = (q, u, pv);
                    let e = s * 1e-6;
                    if c < NQ {
                        qq[c] += e;
                    } else if c < NQ + DOF {
                        uu[c - NQ] += e;
                    } else {
                        pp[c - NQ - DOF] += e;
                    }
                    black_box(step_generic::<M, f64, NQ, NC, DOF, NP>(
                        black_box(&qq),
                        &uu,
                        &pp,
                        0.0,
                        h,
                        &o,
                    ))
                    .ok();
                }
            }
        }
    };
    row(
        name,
        "central differences of step",
        "step_jacobians",
        || pair(fd(opts), sj),
    );
    row(
        name,
        "central differences of step",
        "step_jacobians_symbolic",
        || pair(fd(opts), sym_full),
    );
    // `step_jacobians_symbolic_into` with options `o`, one output reused by every call.
    let pr = &p;
    let into = |o: StepOptions| {
        let mut out = StepJacobians::<NQ, DOF, NP>::zeros();
        move || {
            black_box(step_jacobians_symbolic_into::<M, NQ, NC, DOF, NP>(
                black_box(&q),
                black_box(&u),
                black_box(pr),
                0.0,
                h,
                &o,
                &mut out,
            ))
            .ok();
            black_box(&out);
        }
    };
    row(
        name,
        "central differences of step",
        "step_jacobians_symbolic_into",
        || pair(fd(opts), into(opts)),
    );
    // The fourth-order step: its cost against semi-implicit Euler's, and its Jacobians by
    // dual numbers, composed from the generated derivatives, and by central differences.
    let rk4_opts = StepOptions {
        method: StepMethod::Rk4,
        ..opts
    };
    let st4 = call!(step, rk4_opts);
    row(name, "step (RK4)", "step", || pair(st4, st));
    let sj4 = call!(step_jacobians, rk4_opts);
    row(
        name,
        &format!("step_jacobians RK4 (n = {n} inputs)"),
        "step (RK4)",
        || pair(sj4, st4),
    );
    let sym4 = call!(step_jacobians_symbolic, rk4_opts);
    row(
        name,
        &format!("step_jacobians_symbolic RK4 (n = {n} inputs)"),
        "step (RK4)",
        || pair(sym4, st4),
    );
    row(
        name,
        "step_jacobians_symbolic RK4",
        "step_jacobians RK4",
        || pair(sym4, sj4),
    );
    row(
        name,
        &format!("step_jacobians_symbolic_into RK4 (n = {n} inputs)"),
        "step (RK4)",
        || pair(into(rk4_opts), st4),
    );
    row(
        name,
        "central differences of step (RK4)",
        "step_jacobians_symbolic RK4",
        || pair(fd(rk4_opts), sym4),
    );
    let dual_jac = || {
        let pd: [Dual<8>; NP] = std::array::from_fn(|i| Dual::constant(pv[i]));
        let mut start = 0;
        while start < NQ {
            let qs =
                SVector::<Dual<8>, NQ>::from_fn(|i, _| Dual::variable(q[i], i.wrapping_sub(start)));
            black_box(M::residual_s(black_box(&qs), &pd, Dual::constant(0.0)));
            start += 8;
        }
    };
    let sym_jac = || {
        black_box(M::jacobian(black_box(&q), black_box(&p), 0.0));
    };
    row(
        name,
        "C_J by Dual<8> residual passes",
        "symbolic jacobian",
        || pair(dual_jac, sym_jac),
    );
    let p32: [f32; NP] = std::array::from_fn(|i| pv[i] as f32);
    let q32 = q.map(|x| x as f32);
    let ns32 = || {
        black_box(&M::null_space_s(black_box(&q32), black_box(&p32), 0.0f32));
    };
    let ns64 = || {
        black_box(&M::null_space_s(black_box(&q), black_box(&pv), 0.0f64));
    };
    row(name, "null_space_fixed over f32", "over f64", || {
        pair(ns32, ns64)
    });
    // Four configurations per call in F64x4 lanes against four f64 calls.
    let qs: [SVector<f64, NQ>; 4] = std::array::from_fn(|l| q.map(|x| x + 1e-3 * (l as f64 + 1.0)));
    let q4 = SVector::<F64x4, NQ>::from_fn(|i, _| F64x4::new(std::array::from_fn(|l| qs[l][i])));
    let p4: [F64x4; NP] = std::array::from_fn(|i| F64x4::splat(pv[i]));
    lanes_row!(name, "null_space_fixed", null_space_s, q4, p4, qs, pv);
    lanes_row!(name, "mass_matrix", mass_matrix_s, q4, p4, qs, pv);
}

macro_rules! run {
    ($m:ident, $h:expr, $u:expr) => {
        bench::<g::$m::Model, { g::$m::NQ }, { g::$m::NC }, { g::$m::DOF }, { g::$m::generic::NP }>(
            stringify!($m),
            $h,
            $u,
        )
    };
}

fn main() {
    // `cargo test --benches` runs bench targets with `--bench` absent: keep that quick.
    if !std::env::args().any(|a| a == "--bench") {
        println!("step benchmark: run with `cargo bench -p mechgen-bench --bench step`");
        return;
    }
    println!("| mechanism | measured | ns | baseline | ns | ratio |");
    println!("| --- | --- | ---: | --- | ---: | ---: |");
    run!(slider_crank, 1e-3, 2.0);
    run!(andrews, 1e-5, 100.0);
    run!(stewart, 1e-3, 0.3);
}
