//! What the three event-located simulators ([`super::simulate_contact_adaptive`],
//! [`super::simulate_friction_adaptive`], [`super::simulate_joint_friction_adaptive`])
//! share: their output grid, how they record a state, and the first step after an event.

use nalgebra::SVector;

/// The times a run over `[t0, t1]` stops at: the output times strictly inside, ascending,
/// then `t1`. The error names what is wrong.
pub(super) fn phase_grid(t0: f64, t1: f64, output_times: &[f64]) -> Result<Vec<f64>, &'static str> {
    if !(t0.is_finite() && t1.is_finite() && t1 > t0) {
        return Err("need finite t0 < t1");
    }
    let mut grid: Vec<f64> = output_times
        .iter()
        .copied()
        .filter(|&x| x > t0 && x < t1)
        .collect();
    if grid.windows(2).any(|w| w[1] <= w[0]) {
        return Err("output times must be strictly ascending");
    }
    grid.push(t1);
    Ok(grid)
}

/// The first step of the phase after an event at `te`: as long as the last phase's steps
/// (from `t` in `steps` steps), at least a rounding of `te`.
pub(super) fn next_h0(t: f64, te: f64, steps: usize) -> f64 {
    ((te - t) / steps.max(1) as f64).max(f64::EPSILON * te.abs().max(1.0))
}

/// A trajectory the simulators append states to.
pub(super) trait Record<const NQ: usize> {
    /// Appends `(t, q, q̇)`.
    fn record(&mut self, t: f64, q: &SVector<f64, NQ>, qd: SVector<f64, NQ>);
}

/// [`Record`] for trajectory types with `t`, `q` and `qd` vectors.
macro_rules! impl_record {
    ($($ty:ident),*) => {$(
        impl<const NQ: usize> $crate::contact::phases::Record<NQ> for $ty<NQ> {
            fn record(&mut self, t: f64, q: &SVector<f64, NQ>, qd: SVector<f64, NQ>) {
                self.t.push(t);
                self.q.push(*q);
                self.qd.push(qd);
            }
        }
    )*};
}
pub(super) use impl_record;
