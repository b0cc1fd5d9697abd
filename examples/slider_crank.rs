//! Planar slider crank through `mechanism!`: what the generated module holds, its functions at
//! the nominal configuration, and a simulation driven by a torque on the crank.
//!
//! `cargo run --release --example slider_crank`

include!("mechanisms/slider_crank.rs");

use mechgen::nalgebra::SVector;
use mechgen::runtime::{simulate, Options, State};
use slider_crank as m;

fn main() -> Result<(), mechgen::runtime::SimError> {
    // Sizes and the coordinate the static pivots keep independent.
    println!(
        "slider crank: {} coordinates {:?}, {} constraints, {} degree of freedom",
        m::NQ,
        m::COORD_NAMES,
        m::NC,
        m::DOF
    );
    let independent: Vec<&str> = m::INDEPENDENT.iter().map(|&i| m::COORD_NAMES[i]).collect();
    println!("independent: {independent:?}");
    println!("arithmetic operations per function: {:?}", m::OP_COUNTS);

    // The generated functions at the nominal configuration.
    let p = m::Params::default();
    let q = SVector::from(m::NOMINAL_Q);
    let (d, health) = m::null_space(&q, &p, 0.0);
    let j = m::jacobian(&q, &p, 0.0);
    println!(
        "residual C(q)       = {}",
        row(m::residual(&q, &p, 0.0).iter())
    );
    for r in 0..m::NC {
        println!("Jacobian C_J, row {r} = {}", row(j.row(r).iter()));
    }
    println!(
        "null space D        = {} (health {health:.3})",
        row(d.iter())
    );
    println!("C_J D               = {}", row((j * d).iter()));
    // A dependent solve: the change of β and s that moves the first residual row by 1e-3.
    let dx = m::solve_dependent(&q, &p, 0.0, &SVector::from([1e-3, 0.0]));
    println!("solve_dependent     = {}", row(dx.iter()));

    // One second from rest, a torque of 2 N m on the crank, ten outputs. The torque's work is
    // τ (θ − θ₀), so the energy minus τ θ stays constant.
    let p = m::Params {
        torque: 2.0,
        ..m::Params::default()
    };
    let start = State::at_rest(0.0, q);
    let opts = Options::default().with_output_steps(0.0, 1.0, 10);
    let run = simulate(m::Model, &p, &start, 1.0, &opts)?;
    println!("\n     t      θ (rad)     s (m)    energy (J)   E − τθ (J)   ‖C(q)‖");
    for k in 0..run.t.len() {
        let (t, q, qd) = (run.t[k], run.q[k], run.qd[k]);
        println!(
            "{t:6.2} {:12.5} {:9.5} {:12.6} {:12.8} {:9.1e}",
            q[0],
            q[2],
            m::energy(&q, &qd, &p, t),
            m::energy(&q, &qd, &p, t) - p.torque * q[0],
            m::residual(&q, &p, t).norm()
        );
    }
    println!(
        "{} right-hand sides; routes: {:?}",
        run.stats.ode.rhs_calls,
        run.stretches.iter().map(|s| s.route).collect::<Vec<_>>()
    );
    Ok(())
}

/// The entries of a vector or matrix row, for printing.
fn row<'a>(values: impl Iterator<Item = &'a f64>) -> String {
    let v: Vec<String> = values.map(|x| format!("{x:10.3e}")).collect();
    format!("[{}]", v.join(", "))
}
