//! Gradients over a horizon by the adjoint (backward) sweep ([`rollout_adjoint`]).

use nalgebra::SVector;

use super::*;

/// What [`rollout_adjoint`] returns: the loss after the horizon and its gradient with respect
/// to the initial state and the parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct RolloutGradient<const NQ: usize, const DOF: usize, const NP: usize> {
    /// The loss at the final state.
    pub loss: f64,
    /// The final positions.
    pub q: SVector<f64, NQ>,
    /// The final independent velocities.
    pub u: SVector<f64, DOF>,
    /// `∂L/∂q₀`.
    pub dq0: SVector<f64, NQ>,
    /// `∂L/∂u₀`.
    pub du0: SVector<f64, DOF>,
    /// `∂L/∂p` (parameters in the order of `generic::PARAM_NAMES`).
    pub dp: SVector<f64, NP>,
}

/// `steps` steps of [`step`] from `(q0, u0)` at `t0`, a terminal loss
/// `loss(q_N, u_N) -> (L, ∂L/∂q_N, ∂L/∂u_N)`, and the gradient of `L` with respect to the
/// initial state and the parameters by the adjoint (backward) sweep over the stored step
/// Jacobians: `λ_k = (∂x_{k+1}/∂x_k)ᵀ λ_{k+1}`, `∂L/∂p = Σ_k (∂x_{k+1}/∂p)ᵀ λ_{k+1}`.
///
/// Memory: one [`StepJacobians`] per step. Cost: one `step_jacobians` per step (the
/// gradient of a scalar loss costs what the full forward Jacobians cost: forward mode).
#[allow(clippy::type_complexity, clippy::too_many_arguments)]
pub fn rollout_adjoint<M, const NQ: usize, const NC: usize, const DOF: usize, const NP: usize>(
    q0: &SVector<f64, NQ>,
    u0: &SVector<f64, DOF>,
    p: &M::Params,
    t0: f64,
    h: f64,
    steps: usize,
    opts: &StepOptions,
    loss: impl FnOnce(
        &SVector<f64, NQ>,
        &SVector<f64, DOF>,
    ) -> (f64, SVector<f64, NQ>, SVector<f64, DOF>),
) -> Result<RolloutGradient<NQ, DOF, NP>, StepError>
where
    M: GenericDynamics<NQ, NC, DOF, NP>,
{
    rollout_adjoint_with(q0, u0, t0, h, steps, loss, |q, u, t| {
        step_jacobians::<M, NQ, NC, DOF, NP>(q, u, p, t, h, &with_parameters(opts))
    })
}

/// [`rollout_adjoint`] with the step Jacobians composed from the module's symbolic
/// derivatives ([`step_jacobians_symbolic`]; `#![generic]` and `#![derivatives]`): the same
/// gradient to rounding, at 0.13–0.25× the instructions per step (Stewart platform, Andrews).
#[allow(clippy::type_complexity, clippy::too_many_arguments)]
pub fn rollout_adjoint_symbolic<
    M,
    const NQ: usize,
    const NC: usize,
    const DOF: usize,
    const NP: usize,
>(
    q0: &SVector<f64, NQ>,
    u0: &SVector<f64, DOF>,
    p: &M::Params,
    t0: f64,
    h: f64,
    steps: usize,
    opts: &StepOptions,
    loss: impl FnOnce(
        &SVector<f64, NQ>,
        &SVector<f64, DOF>,
    ) -> (f64, SVector<f64, NQ>, SVector<f64, DOF>),
) -> Result<RolloutGradient<NQ, DOF, NP>, StepError>
where
    M: StepDerivatives<NQ, NC, DOF, NP>,
{
    rollout_adjoint_with(q0, u0, t0, h, steps, loss, |q, u, t| {
        step_jacobians_symbolic::<M, NQ, NC, DOF, NP>(q, u, p, t, h, &with_parameters(opts))
    })
}

/// `opts` with the parameter blocks on (the gradient needs them).
fn with_parameters(opts: &StepOptions) -> StepOptions {
    StepOptions {
        parameter_jacobians: true,
        ..*opts
    }
}

/// The forward sweep storing each step's Jacobians (`jac(q, u, t)`), the loss, and the
/// backward sweep.
#[allow(clippy::type_complexity)]
fn rollout_adjoint_with<const NQ: usize, const DOF: usize, const NP: usize>(
    q0: &SVector<f64, NQ>,
    u0: &SVector<f64, DOF>,
    t0: f64,
    h: f64,
    steps: usize,
    loss: impl FnOnce(
        &SVector<f64, NQ>,
        &SVector<f64, DOF>,
    ) -> (f64, SVector<f64, NQ>, SVector<f64, DOF>),
    jac: impl Fn(
        &SVector<f64, NQ>,
        &SVector<f64, DOF>,
        f64,
    ) -> Result<StepJacobians<NQ, DOF, NP>, StepError>,
) -> Result<RolloutGradient<NQ, DOF, NP>, StepError> {
    let mut tape = Vec::with_capacity(steps);
    let (mut q, mut u) = (*q0, *u0);
    for k in 0..steps {
        let j = jac(&q, &u, t0 + k as f64 * h)?;
        (q, u) = (j.q, j.u);
        tape.push(j);
    }
    let (l, mut lq, mut lu) = loss(&q, &u);
    let mut dp = SVector::<f64, NP>::zeros();
    for j in tape.iter().rev() {
        let (aq, au, ap) = j.vjp(&lq, &lu);
        dp += ap;
        (lq, lu) = (aq, au);
    }
    Ok(RolloutGradient {
        loss: l,
        q,
        u,
        dq0: lq,
        du0: lu,
        dp,
    })
}
