//! `calls MECHANISM FUNCTION N`: calls one generated function `N` times at the assembled
//! nominal configuration, for instruction counting with
//! `valgrind --tool=callgrind` (see `bench/instructions.sh`, which runs it at two `N` and
//! reports the difference per call: start-up and assembly cancel out).
//!
//! MECHANISM: `slider_crank`, `spatial_slider_crank`, `andrews`, `stewart`,
//! `four_bar_chain_64`, `closed_chain_16`. FUNCTION: `residual`, `jacobian`,
//! `null_space` (the default, atlas or fixed), `null_space_fixed`, `solve_dependent`.

use std::hint::black_box;
use std::process::ExitCode;

use mechgen::nalgebra::SVector;
use mechgen::runtime::{self, AssemblyOptions, Mechanism};
use mechgen_bench::generated as g;

/// A generated `null_space_fixed`.
type Basis<P, const NQ: usize, const DOF: usize> =
    fn(&SVector<f64, NQ>, &P, f64) -> (mechgen::nalgebra::SMatrix<f64, NQ, DOF>, f64);

fn run<M, const NQ: usize, const NC: usize, const DOF: usize>(
    function: &str,
    n: usize,
    fixed: Basis<M::Params, NQ, DOF>,
) -> Result<f64, String>
where
    M: Mechanism<NQ, NC, DOF>,
    M::Params: Default,
{
    let p = M::Params::default();
    let q =
        runtime::assemble::<M, NQ, NC, DOF>(&M::nominal_q(), &p, 0.0, &AssemblyOptions::default())
            .map_err(|e| e.to_string())?
            .q;
    let b = SVector::<f64, NC>::from_fn(|i, _| 0.1 * (i as f64 + 1.0));
    let mut acc = 0.0;
    for _ in 0..n {
        acc += match function {
            "residual" => black_box(M::residual(black_box(&q), black_box(&p), 0.0))[0],
            "jacobian" => black_box(M::jacobian(black_box(&q), black_box(&p), 0.0))[0],
            "null_space" => black_box(M::null_space(black_box(&q), black_box(&p), 0.0)).1,
            "null_space_fixed" => black_box(fixed(black_box(&q), black_box(&p), 0.0)).1,
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
    let r = match mech.as_str() {
        "slider_crank" => {
            run::<g::slider_crank::Model, 3, 2, 1>(function, n, g::slider_crank::null_space_fixed)
        }
        "spatial_slider_crank" => run::<g::spatial_slider_crank::Model, 4, 3, 1>(
            function,
            n,
            g::spatial_slider_crank::null_space_fixed,
        ),
        "andrews" => run::<g::andrews::Model, 7, 6, 1>(function, n, g::andrews::null_space_fixed),
        "stewart" => run::<g::stewart::Model, 24, 18, 6>(function, n, g::stewart::null_space_fixed),
        "four_bar_chain_64" => run::<g::four_bar_chain_64::Model, 129, 128, 1>(
            function,
            n,
            g::four_bar_chain_64::null_space_fixed,
        ),
        "closed_chain_16" => run::<g::closed_chain_16::Model, 19, 2, 17>(
            function,
            n,
            g::closed_chain_16::null_space_fixed,
        ),
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
