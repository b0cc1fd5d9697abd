//! A documented fixed-step integrator of the projection method, generic over the scalar,
//! and the exact Jacobians of its discrete map by forward-mode dual numbers.
//!
//! The state is `x = (q, u)`: all `NQ` coordinates and the `DOF` independent velocities of
//! the module's primary chart (`INDEPENDENT`). One [`step`] of length `h` from time `t` is
//! semi-implicit Euler on the projection equations, then a projection of the positions:
//!
//! ```text
//! D, x_t       = D(q), −J_dep⁻¹ C_t          (null_space_fixed, solve_dependent)
//! q̇            = D u + x_t
//! Ḋu           = J_dep⁻¹ γ(q, q̇)             (zero independent part)
//! u̇            = (Dᵀ M D)⁻¹ Dᵀ (f(q, q̇) − M Ḋu)
//! u'           = u + h u̇
//! q̃            = q + h (D u' + x_t)
//! q'           = q̃ with its dependent part moved by Newton until C(q', p, t + h) = 0
//!                (independent part kept: q'_ind = q̃_ind)
//! ```
//!
//! [`step_jacobians`] returns `∂x'/∂x` in the blocks of Nimble/DiffDART (pos-pos `∂q'/∂q`,
//! pos-vel `∂q'/∂u`, vel-pos `∂u'/∂q`, vel-vel `∂u'/∂u`) and `∂x'/∂p` with respect to the
//! parameters (the force-vel block, while the language has no inputs): the same step is run
//! over [`Dual<8>`](crate::Dual) numbers, eight seed directions per pass, so the Jacobian is exact for
//! the discrete map, projection included, up to rounding. The Newton projection iterates
//! on the values (in `f64`) until converged and then takes one step in dual arithmetic
//! from the converged point: that step's derivative part is the implicit-function
//! derivative `−J_dep⁻¹ ∂C/∂(q̃, p)` exactly.
//!
//! With [`StepOptions::method`] = [`StepMethod::Rk4`] the step is instead the classical
//! fourth-order Runge–Kutta formula on `(q̇, u̇)` (the rates above at four stages) followed
//! by the same projection: fourth order for four evaluations of the rates.
//!
//! The chart is fixed: a step whose basis health falls below
//! [`StepOptions::min_health`] returns [`StepError::Chart`] (switching charts inside a
//! differentiated map would make it discontinuous; use the simulators of
//! [`simulate`](mod@crate::simulate) to pass turning points).
//!
//! With the module's symbolic derivatives (`#![derivatives]`, [`StepDerivatives`]),
//! [`step_jacobians_symbolic`] composes every block from them and `f64` evaluations
//! instead ([`step_jacobians_symbolic_into`] writes them into storage the caller keeps).
//!
//! Vector–Jacobian (adjoint) products for long horizons are
//! [`StepJacobians::vjp`]: the transposed blocks applied to `(λ_q, λ_u)`.

mod adjoint;
mod dual;
mod symbolic;

pub use adjoint::{rollout_adjoint, rollout_adjoint_symbolic, RolloutGradient};
pub use dual::{step_jacobians, StepJacobians, JACOBIAN_CHUNK};
pub use symbolic::{step_jacobians_symbolic, step_jacobians_symbolic_into};

use nalgebra::{SMatrix, SVector};

use crate::error::StepError;
use crate::linalg::{lu_solve, mass_mul, mat_mul, mul, mul_acc};
use crate::mechanism::{GenericDynamics, StepDerivatives};
use crate::real::Real;

/// Options of [`step`] and [`step_jacobians`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepOptions {
    /// Smallest accepted health of the primary chart's basis (default `1e-6`).
    pub min_health: f64,
    /// Newton projection: converged when the largest coordinate update is at most
    /// `tol · (1 + max |q|)` (default `1e-13`).
    pub tol: f64,
    /// Newton projection: most iterations (default 25).
    pub max_iter: usize,
    /// [`step_jacobians`] also differentiates with respect to the parameters (default
    /// `true`; `false` leaves `dq_dp`/`du_dp` zero and seeds only the `NQ + DOF` state
    /// directions: fewer dual passes).
    pub parameter_jacobians: bool,
    /// The integration formula (default [`StepMethod::SemiImplicitEuler`]).
    pub method: StepMethod,
}

/// The integration formula of one [`step`] (both end with the same position projection).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StepMethod {
    /// Semi-implicit (symplectic) Euler on `u`, then `q`: first order, one evaluation of
    /// the rates per step (see the [module docs](self)).
    #[default]
    SemiImplicitEuler,
    /// The classical fourth-order Runge–Kutta formula on `(q, u)`: fourth order, four
    /// evaluations of the rates per step ([`step_jacobians_symbolic`] chains the rates'
    /// Jacobians through the four stages).
    Rk4,
}

impl Default for StepOptions {
    fn default() -> Self {
        Self {
            min_health: 1e-6,
            tol: 1e-13,
            max_iter: 25,
            parameter_jacobians: true,
            method: StepMethod::SemiImplicitEuler,
        }
    }
}

fn finite<S: Real>(v: &[S]) -> bool {
    crate::linalg::finite_by(v, |x| x.value())
}

/// The projection method's rates at one `(q, u, t)` and what they are built from (see the
/// [module docs](self)), kept for the step's Jacobian.
struct Rates<S: Real, const NQ: usize, const DOF: usize> {
    /// `D(q)`, the primary chart's basis.
    d: SMatrix<S, NQ, DOF>,
    /// `x_t = −J_dep⁻¹ C_t` (zero for time-independent constraints).
    xt: SVector<S, NQ>,
    /// `q̇ = D u + x_t`.
    qd: SVector<S, NQ>,
    /// `Ḋu = J_dep⁻¹ γ(q, q̇)`.
    ddu: SVector<S, NQ>,
    /// `M(q) D` (the reduced mass matrix's factor, kept for `Dᵀ M S` and `M D u̇`).
    md: SMatrix<S, NQ, DOF>,
    /// `f(q, q̇) − M Ḋu`.
    rhs: SVector<S, NQ>,
    /// `Dᵀ M D`.
    a: SMatrix<S, DOF, DOF>,
    /// `u̇`.
    ud: SVector<S, DOF>,
}

/// One semi-implicit Euler step before its position projection: the rates at the start and
/// the unprojected end point.
struct Forward<S: Real, const NQ: usize, const DOF: usize> {
    /// The rates at `(q, u, t)`.
    rates: Rates<S, NQ, DOF>,
    /// `u' = u + h u̇`.
    u1: SVector<S, DOF>,
    /// `q̃ = q + h (D u' + x_t)`, before the projection.
    qn: SVector<S, NQ>,
}

/// The projection method's rates at `(q, u, t)`: the basis, `q̇ = D u + x_t`, `Ḋu`, the mass
/// matrix, the right-hand side, `Dᵀ M D` and `u̇` (see the [module docs](self)), with the
/// checks of the chart's health and of finiteness.
#[allow(clippy::type_complexity)]
fn rates<M, S, const NQ: usize, const NC: usize, const DOF: usize, const NP: usize>(
    q: &SVector<S, NQ>,
    u: &SVector<S, DOF>,
    p: &[S; NP],
    t: f64,
    opts: &StepOptions,
) -> Result<Rates<S, NQ, DOF>, StepError>
where
    M: GenericDynamics<NQ, NC, DOF, NP>,
    S: Real,
{
    let ts = S::from_f64(t);
    let (d, health) = M::null_space_s(q, p, ts);
    if health.is_nan() || health < opts.min_health {
        return Err(StepError::Chart { health, t });
    }
    let ct = M::jacobian_t_s(q, p, ts);
    // Scleronomic constraints (`C_t = 0`, most mechanisms): no solve for `x_t`.
    let xt = if ct.iter().all(|c| c.is_zero()) {
        SVector::<S, NQ>::from_fn(|_, _| S::from_f64(0.0))
    } else {
        M::solve_dependent_s(q, p, ts, &ct.map(|c| -c))
    };
    let qd = mat_mul(&d, u) + xt;
    let ddu = M::solve_dependent_s(q, p, ts, &M::gamma_s(q, &qd, p, ts));
    let mass = M::mass_matrix_s(q, p, ts);
    let rhs = M::forces_s(q, &qd, p, ts) - mass_mul(M::MASS_NONZEROS, &mass, &ddu);
    let dt = d.transpose();
    let md = mass_mul(M::MASS_NONZEROS, &mass, &d);
    let a = mat_mul(&dt, &md);
    let b = mat_mul(&dt, &rhs);
    if !finite(a.as_slice()) || !finite(b.as_slice()) {
        return Err(StepError::NonFinite {
            what: "the reduced mass matrix or forces",
            t,
        });
    }
    let ud = lu_solve(a, b).map_err(|ratio| StepError::ReducedMass { ratio, t })?;
    Ok(Rates {
        d,
        xt,
        qd,
        ddu,
        md,
        rhs,
        a,
        ud,
    })
}

/// Checks the step's inputs: finite state, parameters and step length.
fn check_inputs<S: Real, const NQ: usize, const DOF: usize, const NP: usize>(
    q: &SVector<S, NQ>,
    u: &SVector<S, DOF>,
    p: &[S; NP],
    t: f64,
    h: f64,
) -> Result<(), StepError> {
    if !finite(q.as_slice()) || !finite(u.as_slice()) || !finite(p) || !h.is_finite() {
        return Err(StepError::NonFinite {
            what: "the state, the parameters or the step",
            t,
        });
    }
    Ok(())
}

/// The semi-implicit Euler step up to its position projection.
#[allow(clippy::type_complexity)]
fn forward<M, S, const NQ: usize, const NC: usize, const DOF: usize, const NP: usize>(
    q: &SVector<S, NQ>,
    u: &SVector<S, DOF>,
    p: &[S; NP],
    t: f64,
    h: f64,
    opts: &StepOptions,
) -> Result<Forward<S, NQ, DOF>, StepError>
where
    M: GenericDynamics<NQ, NC, DOF, NP>,
    S: Real,
{
    check_inputs(q, u, p, t, h)?;
    let hs = S::from_f64(h);
    let rates = rates::<M, S, NQ, NC, DOF, NP>(q, u, p, t, opts)?;
    let u1 = u + rates.ud.map(|x| x * hs);
    let v = mat_mul(&rates.d, &u1) + rates.xt;
    let qn = q + v.map(|x| x * hs);
    Ok(Forward { rates, u1, qn })
}

/// The classical fourth-order Runge–Kutta step of `(q̇, u̇)` up to its position projection:
/// `(q̃, u')` (stages at `t`, `t + h/2`, `t + h/2`, `t + h`; the stage positions are off the
/// constraint manifold by `O(h²)`, where the basis and the rates are still defined, and
/// the manifold is invariant under these rates). `visit` sees each stage's position, time
/// and rates.
#[allow(clippy::type_complexity)]
fn rk4<M, S, const NQ: usize, const NC: usize, const DOF: usize, const NP: usize>(
    q: &SVector<S, NQ>,
    u: &SVector<S, DOF>,
    p: &[S; NP],
    t: f64,
    h: f64,
    opts: &StepOptions,
    mut visit: impl FnMut(SVector<S, NQ>, f64, Rates<S, NQ, DOF>),
) -> Result<(SVector<S, NQ>, SVector<S, DOF>), StepError>
where
    M: GenericDynamics<NQ, NC, DOF, NP>,
    S: Real,
{
    check_inputs(q, u, p, t, h)?;
    let mut stage = |c: f64, dq: &SVector<S, NQ>, du: &SVector<S, DOF>| {
        let cs = S::from_f64(c * h);
        let qs = q + dq.map(|x| x * cs);
        let us = u + du.map(|x| x * cs);
        let ts = t + c * h;
        let r = rates::<M, S, NQ, NC, DOF, NP>(&qs, &us, p, ts, opts)?;
        let k = (r.qd, r.ud);
        visit(qs, ts, r);
        Ok::<_, StepError>(k)
    };
    let zq = SVector::<S, NQ>::from_fn(|_, _| S::from_f64(0.0));
    let zu = SVector::<S, DOF>::from_fn(|_, _| S::from_f64(0.0));
    let (k1q, k1u) = stage(0.0, &zq, &zu)?;
    let (k2q, k2u) = stage(0.5, &k1q, &k1u)?;
    let (k3q, k3u) = stage(0.5, &k2q, &k2u)?;
    let (k4q, k4u) = stage(1.0, &k3q, &k3u)?;
    let (w1, w2) = (S::from_f64(h / 6.0), S::from_f64(h / 3.0));
    let qn = q + (k1q + k4q).map(|x| x * w1) + (k2q + k3q).map(|x| x * w2);
    let un = u + (k1u + k4u).map(|x| x * w1) + (k2u + k3u).map(|x| x * w2);
    Ok((qn, un))
}

/// Newton on the dependent part of `qn` at time `t1` (the independent part is kept by
/// `solve_dependent`'s zero independent entries), on the values.
fn project<M, const NQ: usize, const NC: usize, const DOF: usize, const NP: usize>(
    mut qf: SVector<f64, NQ>,
    pf: &[f64; NP],
    t1: f64,
    opts: &StepOptions,
) -> Result<SVector<f64, NQ>, StepError>
where
    M: GenericDynamics<NQ, NC, DOF, NP>,
{
    let size = 1.0 + qf.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let mut update = f64::INFINITY;
    let mut converged = false;
    for _ in 0..opts.max_iter {
        let r = M::residual_s(&qf, pf, t1);
        let dx = M::solve_dependent_s(&qf, pf, t1, &r);
        if !finite(dx.as_slice()) {
            return Err(StepError::NonFinite {
                what: "the position projection's update",
                t: t1,
            });
        }
        qf -= dx;
        // Stop after the update that follows a converged one (quadratic convergence:
        // that one is at rounding level).
        let done = update <= opts.tol * size;
        update = dx.amax();
        if done {
            converged = true;
            break;
        }
    }
    if !converged {
        return Err(StepError::Projection {
            update,
            iterations: opts.max_iter,
            t: t1,
        });
    }
    Ok(qf)
}

/// One step of the projection method over any scalar (see the [module docs](self)):
/// `(q, u)` at time `t` to `(q', u')` at `t + h`, with the parameters' values `p`.
///
/// This is the map that [`step`] evaluates in `f64` and [`step_jacobians`] in dual
/// numbers; call it with your own [`Real`] to carry other derivatives.
#[allow(clippy::type_complexity)]
pub fn step_generic<M, S, const NQ: usize, const NC: usize, const DOF: usize, const NP: usize>(
    q: &SVector<S, NQ>,
    u: &SVector<S, DOF>,
    p: &[S; NP],
    t: f64,
    h: f64,
    opts: &StepOptions,
) -> Result<(SVector<S, NQ>, SVector<S, DOF>), StepError>
where
    M: GenericDynamics<NQ, NC, DOF, NP>,
    S: Real,
{
    let (qn, u1) = match opts.method {
        StepMethod::SemiImplicitEuler => {
            let fw = forward::<M, S, NQ, NC, DOF, NP>(q, u, p, t, h, opts)?;
            (fw.qn, fw.u1)
        }
        StepMethod::Rk4 => rk4::<M, S, NQ, NC, DOF, NP>(q, u, p, t, h, opts, |_, _, _| ())?,
    };
    let t1 = t + h;
    let pf: [f64; NP] = p.map(|x| x.value());
    let qf = project::<M, NQ, NC, DOF, NP>(qn.map(|x| x.value()), &pf, t1, opts)?;
    if !S::DERIVATIVES {
        return Ok((qn.zip_map(&qf, |_, v| S::from_f64(v)), u1));
    }
    // One Newton step in `S` at the converged point, carrying q̃'s derivative parts: its
    // derivative part is the implicit-function derivative −J_dep⁻¹ ∂C/∂(q̃, p) exactly
    // (the dependent parts' derivatives cancel; the independent ones are kept).
    let t1s = S::from_f64(t1);
    let base = qn.zip_map(&qf, |x, v| x + S::from_f64(v - x.value()));
    let r = M::residual_s(&base, p, t1s);
    let dx = M::solve_dependent_s(&base, p, t1s, &r);
    if !finite(dx.as_slice()) {
        return Err(StepError::NonFinite {
            what: "the position projection's derivative",
            t: t1,
        });
    }
    Ok((base - dx, u1))
}

/// One step of the projection method in `f64` (see the [module docs](self)), e.g.
/// `step::<crank::Model, 3, 2, 1, 8>(&q, &u, &params, t, 1e-3, &StepOptions::default())?`
/// for a `#![generic]` module `crank` (sizes `NQ`, `NC`, `DOF`, `generic::NP`).
#[allow(clippy::type_complexity)]
pub fn step<M, const NQ: usize, const NC: usize, const DOF: usize, const NP: usize>(
    q: &SVector<f64, NQ>,
    u: &SVector<f64, DOF>,
    p: &M::Params,
    t: f64,
    h: f64,
    opts: &StepOptions,
) -> Result<(SVector<f64, NQ>, SVector<f64, DOF>), StepError>
where
    M: GenericDynamics<NQ, NC, DOF, NP>,
{
    step_generic::<M, f64, NQ, NC, DOF, NP>(q, u, &M::param_values(p), t, h, opts)
}
