//! `calls MECHANISM FUNCTION N`: calls one generated function `N` times at the assembled
//! nominal configuration, for instruction counting with
//! `valgrind --tool=callgrind` (see `bench/instructions.sh`, which runs it at two `N` and
//! reports the difference per call: start-up and assembly cancel out).
//!
//! MECHANISM: `slider_crank`, `spatial_slider_crank`, `andrews`, `stewart`,
//! `four_bar_chain_64`, `closed_chain_16`. FUNCTION: `residual`, `jacobian`,
//! `null_space` (the default, atlas or fixed), `null_space_fixed`, `solve_dependent`, and the
//! output forms `jacobian_into` (into a reused matrix), `jacobian_values` (CSC values into a
//! reused array), `kinematics` (fused C, C_J, D) against `separate` (`residual`, `jacobian`
//! and `null_space_fixed` called one after the other).

use std::hint::black_box;
use std::process::ExitCode;

use mechgen::nalgebra::SVector;
use mechgen::runtime::{self, assemble::AssemblyOptions, Mechanism};
use mechgen_bench::generated as g;

/// The module functions that are not trait methods, as closures of `(q, p)` returning one
/// entry of their output (so that the call is not optimised away).
struct Extra<'a, P, const NQ: usize> {
    fixed: &'a dyn Fn(&SVector<f64, NQ>, &P) -> f64,
    jacobian_into: &'a dyn Fn(&SVector<f64, NQ>, &P) -> f64,
    jacobian_values: &'a dyn Fn(&SVector<f64, NQ>, &P) -> f64,
    kinematics: &'a dyn Fn(&SVector<f64, NQ>, &P) -> f64,
    separate: &'a dyn Fn(&SVector<f64, NQ>, &P) -> f64,
}

fn run<M, const NQ: usize, const NC: usize, const DOF: usize>(
    function: &str,
    n: usize,
    extra: &Extra<'_, M::Params, NQ>,
) -> Result<f64, String>
where
    M: Mechanism<NQ, NC, DOF>,
    M::Params: Default,
{
    let p = M::Params::default();
    let q = runtime::assemble::assemble::<M, NQ, NC, DOF>(
        &M::nominal_q(),
        &p,
        0.0,
        &AssemblyOptions::default(),
    )
    .map_err(|e| e.to_string())?
    .q;
    let b = SVector::<f64, NC>::from_fn(|i, _| 0.1 * (i as f64 + 1.0));
    let mut acc = 0.0;
    for _ in 0..n {
        acc += match function {
            "residual" => black_box(M::residual(black_box(&q), black_box(&p), 0.0))[0],
            "jacobian" => black_box(M::jacobian(black_box(&q), black_box(&p), 0.0))[0],
            "null_space" => black_box(M::null_space(black_box(&q), black_box(&p), 0.0)).1,
            "null_space_fixed" => (extra.fixed)(black_box(&q), black_box(&p)),
            "jacobian_into" => (extra.jacobian_into)(black_box(&q), black_box(&p)),
            "jacobian_values" => (extra.jacobian_values)(black_box(&q), black_box(&p)),
            "kinematics" => (extra.kinematics)(black_box(&q), black_box(&p)),
            "separate" => (extra.separate)(black_box(&q), black_box(&p)),
            "solve_dependent" => black_box(M::solve_dependent(
                black_box(&q),
                black_box(&p),
                0.0,
                black_box(&b),
            ))[0],
            other => return Err(format!("unknown function {other}")),
        };
    }
    Ok(acc)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(mech), Some(function), Some(n)) = (
        args.first(),
        args.get(1),
        args.get(2).and_then(|v| v.parse::<usize>().ok()),
    ) else {
        eprintln!("usage: calls MECHANISM FUNCTION N");
        return ExitCode::FAILURE;
    };
    /// `run` on generated module `$m` with its [`Extra`] closures.
    macro_rules! arm {
        ($m:ident) => {{
            use g::$m as m;
            let jm = std::cell::RefCell::new(
                mechgen::nalgebra::SMatrix::<f64, { m::NC }, { m::NQ }>::zeros(),
            );
            let vals = std::cell::RefCell::new([0.0; m::JACOBIAN_NNZ]);
            let extra = Extra {
                fixed: &|q, p| black_box(m::null_space_fixed(q, p, 0.0)).1,
                jacobian_into: &|q, p| {
                    let mut jm = jm.borrow_mut();
                    m::jacobian_into(q, p, 0.0, &mut jm);
                    black_box(&*jm)[0]
                },
                jacobian_values: &|q, p| {
                    let mut v = vals.borrow_mut();
                    m::jacobian_values(q, p, 0.0, &mut v);
                    black_box(&*v)[0]
                },
                kinematics: &|q, p| black_box(m::kinematics(q, p, 0.0)).health,
                separate: &|q, p| {
                    let r = black_box(m::residual(q, p, 0.0));
                    let j = black_box(m::jacobian(q, p, 0.0));
                    let (d, h) = black_box(m::null_space_fixed(q, p, 0.0));
                    r[0] + j[0] + d[0] + h
                },
            };
            run::<m::Model, { m::NQ }, { m::NC }, { m::DOF }>(function, n, &extra)
        }};
    }
    let r = match mech.as_str() {
        "slider_crank" => arm!(slider_crank),
        "spatial_slider_crank" => arm!(spatial_slider_crank),
        "andrews" => arm!(andrews),
        "stewart" => arm!(stewart),
        "four_bar_chain_64" => arm!(four_bar_chain_64),
        "closed_chain_16" => arm!(closed_chain_16),
        other => Err(format!("unknown mechanism {other}")),
    };
    match r {
        Ok(v) => {
            println!("{v}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}
