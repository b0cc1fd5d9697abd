//! Gradient descent through 1,000 steps of a closed-loop mechanism: tune the slider spring
//! (stiffness `k`, rest position `s0`) and the crank torque of a damped slider crank so
//! that after one second the slider stands at 0.32 m and the crank has stopped, with exact gradients
//! from `runtime::step::rollout_adjoint_symbolic` (step Jacobians composed from the generated
//! derivatives of the dynamics terms, then one backward sweep). The loss curve goes to
//! `target/gradient_loss.svg`.
//!
//! `cargo run --release --example gradient`

use mechgen::nalgebra::SVector;
use mechgen::runtime::{
    step::rollout_adjoint_symbolic, step::RolloutGradient, step::StepOptions, Mechanism, StepError,
};
use plotters::prelude::*;

include!("mechanisms/sprung_crank.rs");
use sprung_crank as m;

const H: f64 = 1e-3;
const STEPS: usize = 1_000;
const TARGET: f64 = 0.32;
/// The tuned parameters: their indices in `generic::PARAM_NAMES`.
const TUNED: [usize; 3] = [6, 7, 8];

fn loss_and_gradient(
    p: &m::Params,
) -> Result<RolloutGradient<{ m::NQ }, { m::DOF }, { m::generic::NP }>, StepError> {
    let q0 = m::Model::nominal_q();
    let u0 = SVector::zeros();
    rollout_adjoint_symbolic::<m::Model, _, _, _, _>(
        &q0,
        &u0,
        p,
        0.0,
        H,
        STEPS,
        &StepOptions::default(),
        |q, u| {
            let e = q[2] - TARGET;
            (
                e * e + 1e-3 * u[0] * u[0],
                SVector::from([0.0, 0.0, 2.0 * e]),
                SVector::from([2e-3 * u[0]]),
            )
        },
    )
}

fn with(p: &m::Params, x: &[f64; 3]) -> m::Params {
    m::Params {
        torque: x[0],
        k: x[1],
        s0: x[2],
        ..*p
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // A damped mechanism (c = 4 N s/m): after a second it is close to rest, so the final
    // position is a smooth function of the parameters.
    let base = m::Params {
        c: 4.0,
        ..m::Params::default()
    };
    let names = m::generic::PARAM_NAMES;
    assert_eq!(
        TUNED.map(|i| names[i]),
        ["torque", "k", "s0"],
        "parameter order"
    );
    let mut x = [base.torque, base.k, base.s0];
    // BFGS in scaled coordinates (each parameter relative to its start) with a backtracking
    // (Armijo) line search: plain gradient descent zig-zags on this loss (60 iterations
    // took it from 1.6e-3 to 5.8e-4 only).
    let scale = x.map(f64::abs);
    let grad = |g: &RolloutGradient<{ m::NQ }, { m::DOF }, { m::generic::NP }>| -> [f64; 3] {
        std::array::from_fn(|k| g.dp[TUNED[k]] * scale[k])
    };
    let mut g = loss_and_gradient(&with(&base, &x))?;
    let mut d = grad(&g);
    let mut hinv = [[0.0f64; 3]; 3];
    for (k, row) in hinv.iter_mut().enumerate() {
        row[k] = 1.0;
    }
    let mut curve = vec![g.loss];
    let t0 = std::time::Instant::now();
    println!("iteration  loss          torque (N m)  k (N/m)    s0 (m)   final s (m)");
    for it in 0..100 {
        println!(
            "{it:>9}  {:<12.6e}  {:<12.6}  {:<9.4}  {:<7.5}  {:.6}",
            g.loss, x[0], x[1], x[2], g.q[2]
        );
        if d.iter().map(|v| v * v).sum::<f64>().sqrt() < 1e-12 || g.loss < 1e-14 {
            break;
        }
        // Search direction −H⁻¹ ∇L (scaled).
        let dir: [f64; 3] =
            std::array::from_fn(|i| -(0..3).map(|j| hinv[i][j] * d[j]).sum::<f64>());
        let slope: f64 = (0..3).map(|i| dir[i] * d[i]).sum();
        let mut alpha = 1.0;
        let mut next = None;
        for _ in 0..40 {
            let trial: [f64; 3] = std::array::from_fn(|k| x[k] + alpha * dir[k] * scale[k]);
            if let Ok(gt) = loss_and_gradient(&with(&base, &trial)) {
                if gt.loss <= g.loss + 1e-4 * alpha * slope {
                    next = Some((trial, gt));
                    break;
                }
            }
            alpha *= 0.5;
        }
        let Some((xn, gn)) = next else {
            println!("line search found no decrease: stopping");
            break;
        };
        let dn = grad(&gn);
        // BFGS update of the inverse Hessian with s = Δx (scaled), y = Δ∇L.
        let sv: [f64; 3] = std::array::from_fn(|k| (xn[k] - x[k]) / scale[k]);
        let yv: [f64; 3] = std::array::from_fn(|k| dn[k] - d[k]);
        let sy: f64 = (0..3).map(|k| sv[k] * yv[k]).sum();
        if sy > 1e-300 {
            let hy: [f64; 3] = std::array::from_fn(|i| (0..3).map(|j| hinv[i][j] * yv[j]).sum());
            let yhy: f64 = (0..3).map(|k| yv[k] * hy[k]).sum();
            for i in 0..3 {
                for j in 0..3 {
                    hinv[i][j] += (sy + yhy) * sv[i] * sv[j] / (sy * sy)
                        - (hy[i] * sv[j] + sv[i] * hy[j]) / sy;
                }
            }
        }
        (x, g, d) = (xn, gn, dn);
        curve.push(g.loss);
    }
    println!(
        "final: loss {:.3e}, slider at {:.6} m (target {TARGET}), crank speed {:.3e} rad/s; {} gradients of {STEPS} steps in {:.2} s",
        g.loss,
        g.q[2],
        g.u[0],
        curve.len(),
        t0.elapsed().as_secs_f64()
    );
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/gradient_loss.svg");
    let root = SVGBackend::new(&path, (640, 420)).into_drawing_area();
    root.fill(&WHITE)?;
    let lo = curve
        .iter()
        .cloned()
        .fold(f64::INFINITY, f64::min)
        .max(1e-16);
    let hi = curve.iter().cloned().fold(0.0, f64::max);
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "slider crank: loss through 1,000 steps, by adjoint gradients",
            ("sans-serif", 16),
        )
        .margin(12)
        .x_label_area_size(30)
        .y_label_area_size(60)
        .build_cartesian_2d(0..curve.len(), (lo..hi * 2.0).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("iteration")
        .y_desc("loss")
        .draw()?;
    chart.draw_series(LineSeries::new(
        curve.iter().enumerate().map(|(i, &l)| (i, l)),
        BLUE.stroke_width(2),
    ))?;
    root.present()?;
    println!("wrote {}", path.display());
    Ok(())
}
