//! Spatial slider crank through `mechanism!`: a crank turning in the x–y plane drives,
//! through a rod, a slider on a line parallel to the x axis, offset in y and z. A sweep of the
//! crank through a revolution: each pose assembled from the previous one, and the slider's
//! velocity ratio ds/dθ from the generated null-space basis beside a central difference of
//! assembled poses.
//!
//! `cargo run --release --example spatial_slider_crank`

include!("mechanisms/spatial_slider_crank.rs");

use mechgen::nalgebra::SVector;
use mechgen::runtime::assemble::{assemble, AssemblyOptions};
use mechgen::runtime::AssemblyError;
use spatial_slider_crank as m;

fn main() -> Result<(), AssemblyError> {
    let p = m::Params::default();
    let opts = AssemblyOptions::default();
    let names: Vec<&str> = m::INDEPENDENT.iter().map(|&i| m::COORD_NAMES[i]).collect();
    println!(
        "spatial slider crank: {} coordinates {:?}, {} constraints, independent {names:?}",
        m::NQ,
        m::COORD_NAMES,
        m::NC
    );
    let (theta, s) = (0, 3);
    assert_eq!(m::INDEPENDENT, [theta], "the crank angle drives");

    // The pose at crank angle `a`, assembled from a guess (the independent angle is kept).
    let pose = |a: f64, guess: &SVector<f64, 4>| {
        let mut q0 = *guess;
        q0[theta] = a;
        assemble::<m::Model, _, _, _>(&q0, &p, 0.0, &opts).map(|asm| asm.q)
    };

    println!("\n  θ (deg)    α (rad)    γ (rad)     s (m)   ds/dθ (D)   ds/dθ (diff.)   health");
    let mut q = SVector::from(m::NOMINAL_Q);
    let h = 1e-6;
    for k in 0..=12 {
        let a = std::f64::consts::TAU * k as f64 / 12.0;
        q = pose(a, &q)?;
        let (d, health) = m::null_space(&q, &p, 0.0);
        // An independent check of D: the slider's motion between two nearby assembled poses.
        let diff = (pose(a + h, &q)?[s] - pose(a - h, &q)?[s]) / (2.0 * h);
        println!(
            "{:9.1} {:10.5} {:10.5} {:9.5} {:11.6} {:15.6} {:8.3}",
            a.to_degrees(),
            q[1],
            q[2],
            q[s],
            d[s],
            diff,
            health
        );
    }
    Ok(())
}
