//! The UR5 imported by build.rs from its URDF file, with `ur5_table.mech` added inside the
//! imported module: its tool's flange held on a table (a closed loop through the ground), a
//! torque on the shoulder's pan joint. Released at rest from a bent pose with the tool on the
//! table, it falls under gravity while the tool slides on the table; simulated by the
//! runtime's one entry point with default options.
//!
//! `cargo run --release -p imported_robot`

use imported_robot::{start_pose, ur5};
use mechgen::runtime::{simulate, Options, SimError, State};

fn main() -> Result<(), SimError> {
    let mut p = ur5::Params::default();
    let q0 = start_pose();
    // The table at the tool's height in the start pose; a small torque on the pan joint.
    p.table = ur5::outputs(&q0, &p, 0.0)[2];
    p.pan_torque = 2.0;
    let independent: Vec<&str> = ur5::INDEPENDENT
        .iter()
        .map(|&i| ur5::COORD_NAMES[i])
        .collect();
    println!(
        "UR5 from its URDF + ur5_table.mech: {} coordinates, {} constraint, {} degrees of freedom (independent {independent:?})",
        ur5::NQ,
        ur5::NC,
        ur5::DOF
    );
    let t1 = 2.0;
    let opts = Options::default().with_output_steps(0.0, t1, 8);
    let clock = std::time::Instant::now();
    let run = simulate(ur5::Model, &p, &State::at_rest(0.0, q0), t1, &opts)?;
    let wall = clock.elapsed();
    // With no damping, the energy less the pan torque's work is conserved.
    let balance =
        |k: usize| ur5::energy(&run.q[k], &run.qd[k], &p, run.t[k]) - p.pan_torque * run.q[k][0];
    println!("   t      tool (x, y, z) m                 |C|       energy - work (J)");
    for k in 0..run.t.len() {
        let o = ur5::outputs(&run.q[k], &p, run.t[k]);
        println!(
            "{:5.2}   ({:+.4}, {:+.4}, {:.6})   {:.1e}   {:.9}",
            run.t[k],
            o[0],
            o[1],
            o[2],
            ur5::residual(&run.q[k], &p, run.t[k]).norm(),
            balance(k)
        );
    }
    println!(
        "{} steps, {} right-hand sides, {} route hand-overs, {:.1} ms",
        run.stats.ode.steps,
        run.stats.ode.rhs_calls,
        run.handovers(),
        wall.as_secs_f64() * 1e3
    );
    Ok(())
}
