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
//! over [`Dual<8>`] numbers, eight seed directions per pass, so the Jacobian is exact for
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
//! [`simulate`](crate::simulate) to pass turning points).
//!
//! With the module's symbolic derivatives (`#![derivatives]`, [`StepDerivatives`]),
//! [`step_jacobians_symbolic`] composes every block from them and `f64` evaluations
//! instead.
//!
//! Vector–Jacobian (adjoint) products for long horizons are
//! [`StepJacobians::vjp`]: the transposed blocks applied to `(λ_q, λ_u)`.

use std::fmt;

use nalgebra::{SMatrix, SVector};

use crate::dual::Dual;
use crate::linalg::{mass_mul, mat_mul};
pub use crate::mechanism::{GenericDynamics, StepDerivatives};
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

/// Why a [`step`] failed.
#[derive(Clone, Debug, PartialEq)]
pub enum StepError {
    /// The primary chart's basis is not healthy at the step's start.
    Chart {
        /// The health figure found.
        health: f64,
        /// The time of the step's start.
        t: f64,
    },
    /// `Dᵀ M D` has a pivot that is not positive (singular or indefinite reduced mass).
    ReducedMass {
        /// The smallest pivot relative to the largest diagonal entry.
        ratio: f64,
        /// The time of the step's start.
        t: f64,
    },
    /// The position projection did not converge.
    Projection {
        /// The last update's size.
        update: f64,
        /// Iterations taken.
        iterations: usize,
        /// The time of the step's end.
        t: f64,
    },
    /// A quantity of the step is not finite (NaN or infinite inputs, or overflow).
    NonFinite {
        /// Which quantity.
        what: &'static str,
        /// The time of the step's start.
        t: f64,
    },
}

impl fmt::Display for StepError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StepError::Chart { health, t } => write!(
                f,
                "at t = {t}: the primary chart's basis has health {health:e}, below the step's \
                 threshold (a turning point or singular position of the fixed chart)"
            ),
            StepError::ReducedMass { ratio, t } => write!(
                f,
                "at t = {t}: the reduced mass matrix DᵀMD is singular or indefinite (pivot \
                 ratio {ratio:e})"
            ),
            StepError::Projection {
                update,
                iterations,
                t,
            } => write!(
                f,
                "at t = {t}: the position projection did not converge in {iterations} \
                 iterations (last update {update:e})"
            ),
            StepError::NonFinite { what, t } => write!(f, "at t = {t}: {what} is not finite"),
        }
    }
}

impl std::error::Error for StepError {}

fn finite<S: Real>(v: &[S]) -> bool {
    crate::linalg::finite_by(v, |x| x.value())
}

/// `a b` for `f64` ([`product_columns`]).
fn mul<const R: usize, const K: usize, const C: usize>(
    a: &SMatrix<f64, R, K>,
    b: &SMatrix<f64, K, C>,
) -> SMatrix<f64, R, C> {
    let mut out = SMatrix::<f64, R, C>::zeros();
    product_columns(a, b, out.as_mut_slice(), |col, acc| {
        col.copy_from_slice(acc)
    });
    out
}

/// `out += alpha a b`, in place (the products as in [`mul`]'s column-by-column form).
fn mul_acc<const R: usize, const K: usize, const C: usize>(
    out: &mut SMatrix<f64, R, C>,
    alpha: f64,
    a: &SMatrix<f64, R, K>,
    b: &SMatrix<f64, K, C>,
) {
    product_columns(a, b, out.as_mut_slice(), |col, acc| {
        for (o, x) in col.iter_mut().zip(acc) {
            *o += alpha * x;
        }
    });
}

/// Column `j` of `a b`, accumulated in a local array, handed to `store` with column `j` of
/// `out` (column-major, `R` rows). With fewer than four rows and fewer rows than the inner
/// dimension, one dot product per entry; otherwise contiguous inner loops over `a`'s
/// columns, which the compiler vectorises, skipping the exact zeros of `b` (the generated
/// derivative matrices are sparse; every zero of `b` saves a column of `a`) and `a`'s zero
/// columns.
fn product_columns<const R: usize, const K: usize, const C: usize>(
    a: &SMatrix<f64, R, K>,
    b: &SMatrix<f64, K, C>,
    out: &mut [f64],
    mut store: impl FnMut(&mut [f64], &[f64; R]),
) {
    // Column-major storage: column `k` of `a` is `a[k R .. (k + 1) R]`.
    let (av, bv) = (a.as_slice(), b.as_slice());
    if R < 4 && R < K {
        // A few rows (the `DOF`-row reductions of small mechanisms): one dot product per
        // entry, no branches (a zero test per entry costs more than the product).
        for (j, col) in out.chunks_exact_mut(R).enumerate() {
            let bcol = &bv[j * K..(j + 1) * K];
            let acc: [f64; R] = std::array::from_fn(|i| {
                let mut acc = 0.0;
                for (k, &x) in bcol.iter().enumerate() {
                    acc += av[k * R + i] * x;
                }
                acc
            });
            store(col, &acc);
        }
        return;
    }
    let live: [bool; K] = std::array::from_fn(|k| av[k * R..(k + 1) * R].iter().any(|&x| x != 0.0));
    for (j, col) in out.chunks_exact_mut(R).enumerate() {
        // The column accumulates in a local array (kept in registers for the small `R` of
        // mechanisms: one store per entry instead of one per term).
        let mut acc = [0.0f64; R];
        for k in 0..K {
            let bkj = bv[j * K + k];
            if bkj == 0.0 || !live[k] {
                continue;
            }
            for (o, x) in acc.iter_mut().zip(&av[k * R..(k + 1) * R]) {
                *o += x * bkj;
            }
        }
        store(col, &acc);
    }
}

/// Solves `a x = b` (any number of right-hand sides) by LU with partial pivoting on the values (for dual numbers the pivot
/// order is the value's, and the derivative parts follow it exactly). `None` when a pivot
/// is at most `1e-14` of the largest entry.
pub(crate) fn lu_solve<S: Real, const N: usize, const C: usize>(
    mut a: SMatrix<S, N, N>,
    mut b: SMatrix<S, N, C>,
) -> Result<SMatrix<S, N, C>, f64> {
    let scale = a.iter().fold(0.0f64, |m, x| m.max(x.value().abs()));
    let mut worst = f64::INFINITY;
    for k in 0..N {
        let mut p = k;
        for i in k + 1..N {
            if a[(i, k)].value().abs() > a[(p, k)].value().abs() {
                p = i;
            }
        }
        let piv = a[(p, k)].value().abs();
        worst = worst.min(piv / scale);
        // (NaN fails the comparison too.)
        if piv.partial_cmp(&(1e-14 * scale)) != Some(std::cmp::Ordering::Greater) {
            return Err(worst);
        }
        if p != k {
            a.swap_rows(p, k);
            b.swap_rows(p, k);
        }
        for i in k + 1..N {
            let l = a[(i, k)] / a[(k, k)];
            for j in k..N {
                let akj = a[(k, j)];
                a[(i, j)] -= l * akj;
            }
            for c in 0..C {
                let bk = b[(k, c)];
                b[(i, c)] -= l * bk;
            }
        }
    }
    for c in 0..C {
        for k in (0..N).rev() {
            let mut acc = b[(k, c)];
            for j in k + 1..N {
                acc -= a[(k, j)] * b[(j, c)];
            }
            b[(k, c)] = acc / a[(k, k)];
        }
    }
    Ok(b)
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

/// Seed directions per dual-number pass of [`step_jacobians`].
pub const JACOBIAN_CHUNK: usize = 8;

/// The result of [`step_jacobians`]: the step's value and its exact Jacobians.
#[derive(Clone, Debug, PartialEq)]
pub struct StepJacobians<const NQ: usize, const DOF: usize, const NP: usize> {
    /// `q'`.
    pub q: SVector<f64, NQ>,
    /// `u'`.
    pub u: SVector<f64, DOF>,
    /// Pos-pos block `∂q'/∂q`.
    pub dq_dq: SMatrix<f64, NQ, NQ>,
    /// Pos-vel block `∂q'/∂u`.
    pub dq_du: SMatrix<f64, NQ, DOF>,
    /// Vel-pos block `∂u'/∂q`.
    pub du_dq: SMatrix<f64, DOF, NQ>,
    /// Vel-vel block `∂u'/∂u`.
    pub du_du: SMatrix<f64, DOF, DOF>,
    /// `∂q'/∂p` (parameters in the order of `generic::PARAM_NAMES`).
    pub dq_dp: SMatrix<f64, NQ, NP>,
    /// `∂u'/∂p`.
    pub du_dp: SMatrix<f64, DOF, NP>,
}

impl<const NQ: usize, const DOF: usize, const NP: usize> StepJacobians<NQ, DOF, NP> {
    /// The vector–Jacobian product `(∂x'/∂x)ᵀ λ'` and `(∂x'/∂p)ᵀ λ'` for the adjoint
    /// `λ' = (λ_q, λ_u)` of the step's output: `(λ_q, λ_u, λ_p)` of its input, for a
    /// backward sweep over a horizon (accumulate `λ_p` over the steps).
    #[allow(clippy::type_complexity)]
    pub fn vjp(
        &self,
        lq: &SVector<f64, NQ>,
        lu: &SVector<f64, DOF>,
    ) -> (SVector<f64, NQ>, SVector<f64, DOF>, SVector<f64, NP>) {
        (
            self.dq_dq.transpose() * lq + self.du_dq.transpose() * lu,
            self.dq_du.transpose() * lq + self.du_du.transpose() * lu,
            self.dq_dp.transpose() * lq + self.du_dp.transpose() * lu,
        )
    }

    /// The Jacobian–vector product: the change of `(q', u')` for a change `(δq, δu, δp)`
    /// of the step's input.
    pub fn jvp(
        &self,
        dq: &SVector<f64, NQ>,
        du: &SVector<f64, DOF>,
        dp: &SVector<f64, NP>,
    ) -> (SVector<f64, NQ>, SVector<f64, DOF>) {
        (
            self.dq_dq * dq + self.dq_du * du + self.dq_dp * dp,
            self.du_dq * dq + self.du_du * du + self.du_dp * dp,
        )
    }
}

/// One [`step`] and its exact Jacobians with respect to the state `(q, u)` and the
/// parameters (see [`StepJacobians`]): `⌈(NQ + DOF + NP) / 8⌉` evaluations of the step
/// over [`Dual<8>`] numbers.
#[allow(clippy::type_complexity)]
pub fn step_jacobians<M, const NQ: usize, const NC: usize, const DOF: usize, const NP: usize>(
    q: &SVector<f64, NQ>,
    u: &SVector<f64, DOF>,
    p: &M::Params,
    t: f64,
    h: f64,
    opts: &StepOptions,
) -> Result<StepJacobians<NQ, DOF, NP>, StepError>
where
    M: GenericDynamics<NQ, NC, DOF, NP>,
{
    let n = if opts.parameter_jacobians {
        NQ + DOF + NP
    } else {
        NQ + DOF
    };
    let mut out = StepJacobians::zeroed(q, u);
    dual_columns::<M, NQ, NC, DOF, NP>(q, u, p, t, h, opts, 0, n, &mut out)?;
    Ok(out)
}

impl<const NQ: usize, const DOF: usize, const NP: usize> StepJacobians<NQ, DOF, NP> {
    /// The state `(q, u)` with every block zero.
    fn zeroed(q: &SVector<f64, NQ>, u: &SVector<f64, DOF>) -> Self {
        Self {
            q: *q,
            u: *u,
            dq_dq: SMatrix::zeros(),
            dq_du: SMatrix::zeros(),
            du_dq: SMatrix::zeros(),
            du_du: SMatrix::zeros(),
            dq_dp: SMatrix::zeros(),
            du_dp: SMatrix::zeros(),
        }
    }
}

/// Columns `first..n` of the step's Jacobian (inputs numbered `q`, `u`, then `p`) by
/// [`Dual<8>`] passes, eight directions each; the first pass also sets `out.q`, `out.u`.
#[allow(clippy::too_many_arguments)]
fn dual_columns<M, const NQ: usize, const NC: usize, const DOF: usize, const NP: usize>(
    q: &SVector<f64, NQ>,
    u: &SVector<f64, DOF>,
    p: &M::Params,
    t: f64,
    h: f64,
    opts: &StepOptions,
    first: usize,
    n: usize,
    out: &mut StepJacobians<NQ, DOF, NP>,
) -> Result<(), StepError>
where
    M: GenericDynamics<NQ, NC, DOF, NP>,
{
    const K: usize = JACOBIAN_CHUNK;
    let pv = M::param_values(p);
    let mut start = first;
    while start < n {
        // Direction `start + k` seeds input number `start + k` of (q, u, p).
        let seed = |i: usize, v: f64| Dual::<K>::variable(v, i.wrapping_sub(start));
        let qs = SVector::<Dual<K>, NQ>::from_fn(|i, _| seed(i, q[i]));
        let us = SVector::<Dual<K>, DOF>::from_fn(|i, _| seed(NQ + i, u[i]));
        let ps: [Dual<K>; NP] = std::array::from_fn(|i| seed(NQ + DOF + i, pv[i]));
        let (q1, u1) = step_generic::<M, Dual<K>, NQ, NC, DOF, NP>(&qs, &us, &ps, t, h, opts)?;
        if start == first {
            out.q = q1.map(|x| x.re);
            out.u = u1.map(|x| x.re);
        }
        for k in 0..K.min(n.saturating_sub(start)) {
            let j = start + k;
            for i in 0..NQ {
                let v = q1[i].eps[k];
                match j {
                    j if j < NQ => out.dq_dq[(i, j)] = v,
                    j if j < NQ + DOF => out.dq_du[(i, j - NQ)] = v,
                    j => out.dq_dp[(i, j - NQ - DOF)] = v,
                }
            }
            for i in 0..DOF {
                let v = u1[i].eps[k];
                match j {
                    j if j < NQ => out.du_dq[(i, j)] = v,
                    j if j < NQ + DOF => out.du_du[(i, j - NQ)] = v,
                    j => out.du_dp[(i, j - NQ - DOF)] = v,
                }
            }
        }
        start += K;
    }
    Ok(())
}

/// [`step_jacobians`] composed from the module's symbolic derivatives (`#![derivatives]`:
/// `∂f/∂q`, `∂f/∂q̇`, `∂f/∂p`, `∂(M b)/∂q`, `∂(M b)/∂p`, `∂γ/∂q`, `∂γ/∂q̇`, `∂γ/∂p`, `∂C/∂p`,
/// `∂(C_J b)/∂p`) and `f64` evaluations instead of dual-number passes through the whole
/// step, every block included; models whose constraints depend on time
/// ([`StepDerivatives::RHEONOMIC`]) take the dual-number route. For the [`StepMethod::Rk4`]
/// step the Jacobian `F` of the rates `(q̇, u̇)` is composed the same way at each of the four
/// stage points and chained through the stages (`δK_s = F_s (I + c_s h δK_{s−1})`), then
/// through the projection.
///
/// Differentiating the step of the [module docs](self) along a direction `(δq, δu)`, with
/// `(C_J v)_q = −½ ∂γ/∂q̇ (q, v)` for time-independent constraints:
///
/// ```text
/// δD_j   = J_dep⁻¹ (½ ∂γ/∂q̇(q, D_j) δq)                 (C_J D = 0, zero independent part)
/// δq̇     = δD u + D δu
/// δḊu    = J_dep⁻¹ (∂γ/∂q δq + ∂γ/∂q̇ δq̇ + ½ ∂γ/∂q̇(q, Ḋu) δq)
/// δrhs   = ∂f/∂q δq + ∂f/∂q̇ δq̇ − ∂(M Ḋu)/∂q δq − M δḊu
/// δA     = δDᵀ M D + Dᵀ [∂(M D_j)/∂q δq]_j + Dᵀ M δD,   δb = δDᵀ rhs + Dᵀ δrhs
/// δu̇     = A⁻¹ (δb − δA u̇),   δu' = δu + h δu̇
/// δq̃     = δq + h (δD u' + D δu'),   δq' = D(q') δq̃_ind   (the projection keeps q̃_ind)
/// ```
///
/// and along a parameter `δp` the same with `δq = δu = 0` and the direct terms
/// `δD_j = −J_dep⁻¹ ∂(C_J D_j)/∂p δp`, `∂γ/∂p δp − ∂(C_J Ḋu)/∂p δp` in `δḊu`,
/// `∂f/∂p δp − ∂(M Ḋu)/∂p δp` in `δrhs`, `Dᵀ [∂(M D_j)/∂p δp]_j` in `δA`, and
/// `− J_dep(q')⁻¹ ∂C/∂p(q') δp` added to `δq'`.
///
/// All directions are composed at once, as matrix products: the generated derivatives
/// that are linear in a vector argument are called on the combination the step needs
/// (`∂(M q̈)/∂q` with `q̈ = Ḋu + D u̇` instead of one call per basis column), and the
/// `NQ`-long chains of `δb − δA u̇` are reduced from the left by `Dᵀ` first (`Dᵀ M S`,
/// `Dᵀ ∂f/∂q̇ − Dᵀ M S ∂γ/∂q̇`, with `S` the dependent solve as a matrix), so that each
/// direction costs `DOF`-row products only; `δu̇ = A⁻¹ R`, one LU of `A` per block. The
/// parameter block's `R` is formed by the generated weighted reductions
/// ([`StepDerivatives::dynamics_vjp_p`], [`StepDerivatives::acceleration_vjp_p`],
/// [`StepDerivatives::jacobian_vjp_p`]: `Wᵀ ∂e/∂p` with `DOF` weight columns, no `NQ × NP`
/// matrix) and the projection's term by [`StepDerivatives::dependent_jacobian_p`].
///
/// Equal to the dual-number Jacobian to rounding (tests/step.rs, the Andrews mechanism
/// and the Stewart platform at 100 random states).
pub fn step_jacobians_symbolic<
    M,
    const NQ: usize,
    const NC: usize,
    const DOF: usize,
    const NP: usize,
>(
    q: &SVector<f64, NQ>,
    u: &SVector<f64, DOF>,
    p: &M::Params,
    t: f64,
    h: f64,
    opts: &StepOptions,
) -> Result<StepJacobians<NQ, DOF, NP>, StepError>
where
    M: StepDerivatives<NQ, NC, DOF, NP>,
{
    if M::RHEONOMIC {
        return step_jacobians::<M, NQ, NC, DOF, NP>(q, u, p, t, h, opts);
    }
    if opts.method == StepMethod::Rk4 {
        return rk4_jacobians_symbolic::<M, NQ, NC, DOF, NP>(q, u, p, t, h, opts);
    }
    let pv = M::param_values(p);
    let Forward { rates: fw, u1, qn } = forward::<M, f64, NQ, NC, DOF, NP>(q, u, &pv, t, h, opts)?;
    let t1 = t + h;
    let q1 = project::<M, NQ, NC, DOF, NP>(qn, &pv, t1, opts)?;
    let d1 = basis_at::<M, NQ, NC, DOF, NP>(&q1, &pv, t1)?;
    let d = &fw.d;
    let rj = acceleration_jacobians::<M, NQ, NC, DOF, NP>(q, p, t, &fw, opts.parameter_jacobians)?;
    // `S` has zero independent rows (`solve_dependent`'s contract), so `δD` has a zero
    // independent part: only `D δu'` moves `q̃_ind`.
    let d_ind = rows(d, &M::INDEPENDENT);
    // δu' = δu + h δu̇; δq̃_ind = δq_ind + h (D δu')_ind; δq' = D(q') δq̃_ind (the
    // projection keeps q̃'s independent part and restores C(q', p) = 0).
    let du1_q = rj.ud_q * h;
    let mut dqn_q = mul(&d_ind, &du1_q) * h;
    for (j, &c) in M::INDEPENDENT.iter().enumerate() {
        dqn_q[(j, c)] += 1.0;
    }
    let dq_dq = mul(&d1, &dqn_q);
    let mut du1_u = rj.ud_u * h;
    for c in 0..DOF {
        du1_u[(c, c)] += 1.0;
    }
    let dq_du = mul(&d1, &(mul(&d_ind, &du1_u) * h));
    // Every block is written once (the parameter blocks stay zero without
    // `parameter_jacobians`).
    let (dq_dp, du_dp) = match rj.ud_p {
        Some(ud_p) => {
            let du1_p = ud_p * h;
            let dqn_p = mul(&d_ind, &du1_p) * h;
            let dq_dp = projected_p::<M, NQ, NC, DOF, NP>(&q1, p, t1, &d1, &dqn_p);
            (dq_dp, du1_p)
        }
        None => (SMatrix::zeros(), SMatrix::zeros()),
    };
    let out = StepJacobians {
        q: q1,
        u: u1,
        dq_dq,
        dq_du,
        du_dq: du1_q,
        du_du: du1_u,
        dq_dp,
        du_dp,
    };
    out.check_finite(t)?;
    Ok(out)
}

impl<const NQ: usize, const DOF: usize, const NP: usize> StepJacobians<NQ, DOF, NP> {
    /// [`StepError::NonFinite`] unless every block is finite (read by reference).
    fn check_finite(&self, t: f64) -> Result<(), StepError> {
        let blocks = [
            self.dq_dq.as_slice(),
            self.dq_du.as_slice(),
            self.du_dq.as_slice(),
            self.du_du.as_slice(),
            self.dq_dp.as_slice(),
            self.du_dp.as_slice(),
        ];
        if !blocks.iter().all(|b| finite(b)) {
            return Err(StepError::NonFinite {
                what: "the step's Jacobian",
                t,
            });
        }
        Ok(())
    }
}

/// `∂q'/∂p` through the projection: `D(q') δq̃_ind − S(q') ∂C/∂p(q')` for the independent
/// rows `dqn_p` of `∂q̃/∂p`, accumulated in place (no zeroed temporary).
fn projected_p<M, const NQ: usize, const NC: usize, const DOF: usize, const NP: usize>(
    q1: &SVector<f64, NQ>,
    p: &M::Params,
    t1: f64,
    d1: &SMatrix<f64, NQ, DOF>,
    dqn_p: &SMatrix<f64, DOF, NP>,
) -> SMatrix<f64, NQ, NP>
where
    M: StepDerivatives<NQ, NC, DOF, NP>,
{
    let mut dq_dp = M::dependent_jacobian_p(q1, p, t1);
    dq_dp.gemm(1.0, d1, dqn_p, 1.0);
    dq_dp
}

/// The primary chart's basis at the projected position `q1` (its derivative is
/// `D(q') δq̃_ind`), checked finite.
fn basis_at<M, const NQ: usize, const NC: usize, const DOF: usize, const NP: usize>(
    q1: &SVector<f64, NQ>,
    pv: &[f64; NP],
    t1: f64,
) -> Result<SMatrix<f64, NQ, DOF>, StepError>
where
    M: GenericDynamics<NQ, NC, DOF, NP>,
{
    let (d1, health1) = M::null_space_s(q1, pv, t1);
    if !health1.is_finite() || !finite(d1.as_slice()) {
        return Err(StepError::NonFinite {
            what: "the basis at the projected position",
            t: t1,
        });
    }
    Ok(d1)
}

/// The derivatives of `u̇` at one point of the rates, composed from the generated
/// derivatives (see [`step_jacobians_symbolic`]), and the dependent solve `S` there.
struct AccelerationJacobians<const NQ: usize, const NC: usize, const DOF: usize, const NP: usize> {
    /// `S`, the dependent solve as a matrix.
    s: SMatrix<f64, NQ, NC>,
    /// `∂u̇/∂q` (`u` held).
    ud_q: SMatrix<f64, DOF, NQ>,
    /// `∂u̇/∂u`.
    ud_u: SMatrix<f64, DOF, DOF>,
    /// `∂u̇/∂p`, when asked for.
    ud_p: Option<SMatrix<f64, DOF, NP>>,
}

/// `∂u̇/∂(q, u, p)` at the point whose rates are `r` (time-independent constraints; see
/// [`step_jacobians_symbolic`] for the derivation).
fn acceleration_jacobians<M, const NQ: usize, const NC: usize, const DOF: usize, const NP: usize>(
    q: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
    r: &Rates<f64, NQ, DOF>,
    parameters: bool,
) -> Result<AccelerationJacobians<NQ, NC, DOF, NP>, StepError>
where
    M: StepDerivatives<NQ, NC, DOF, NP>,
{
    let d = &r.d;
    // Every generated derivative below is linear in its vector argument (`b` of
    // `mass_times_jacobian`, `jacobian_times_jacobian_p`, and `q̇` of `gamma_jacobian_qd`
    // for time-independent constraints): sums over the basis columns are taken before the
    // call, e.g. `Σ_j u̇_j ∂(M D_j)/∂q + ∂(M Ḋu)/∂q = ∂(M q̈)/∂q`.
    let qdd = r.ddu + mul(d, &r.ud);
    // `solve_dependent` is linear in its right-hand side: its matrix `S` once.
    let s = M::dependent_solve_matrix(q, p, t);
    // `u̇ = A⁻¹ Dᵀ rhs` differentiates to `δu̇ = A⁻¹ R` with, per direction,
    // `R = δDᵀ r₀ + Dᵀ (δrhs − ∂(M D u̇) δ − M δD u̇)`, `r₀ = rhs − M D u̇`; the `NQ`-long
    // chains are reduced by `Dᵀ` from the left first (`P = Dᵀ M S`, `K = Dᵀ ∂f/∂q̇ − P ∂γ/∂q̇`),
    // so that each direction costs `DOF`-row products only. The reductions `Wᵀ ∂e/∂q` are
    // generated (`*_vjp_q`, `*_vjp_qd`: `DOF` weight columns, no `NQ × NQ` matrix formed);
    // `∂γ/∂q̇` is linear in the velocities it is taken at (`γ` quadratic in `q̇`), so
    // `s₀ᵀ ∂γ/∂q̇(D_j)` is row `j` of the Hessian of `s₀ᵀγ` applied to `D` (`gamma_hessian_qd`).
    let r0 = r.rhs - mul(&r.md, &r.ud);
    let s0 = s.tr_mul(&r0);
    let pm = mul(&r.md.transpose(), &s);
    let pm_w = pm.transpose();
    // `Pᵀ ∂γ/∂q`, `Pᵀ ∂γ/∂q̇(q̇)`, `Pᵀ ∂γ/∂q̇(q̈)` from one generated body.
    let [g_q, g_qd, g_qdd] = M::gamma_reductions(q, &r.qd, p, t, &qdd, &pm_w);
    let k = M::forces_vjp_qd(q, &r.qd, p, t, d) - g_qd;
    let ks = mul(&k, &s);
    let ks_w = ks.transpose();
    // Along δq = e_c: δD_j = ½ S ∂γ/∂q̇(D_j) e_c, δq̇ = ½ S ∂γ/∂q̇(q̇) e_c,
    // δḊu = S (∂γ/∂q + ½ ∂γ/∂q̇(Ḋu) + ∂γ/∂q̇ δq̇) e_c, δrhs = (∂f/∂q − ∂(M Ḋu)/∂q) e_c + …
    // Row `j`: `D_jᵀ ∂(f − M q̈)/∂q − P_jᵀ (∂γ/∂q + ½ ∂γ/∂q̇(q̈)) + ½ (KS)_jᵀ ∂γ/∂q̇(q̇)
    // + ½ s₀ᵀ ∂γ/∂q̇(D_j)`.
    let half = M::gamma_vjp_qd(q, &r.qd, p, t, &ks_w) + M::gamma_hessian_qd(q, &r.qd, p, t, d, &s0)
        - g_qdd;
    let r_q = M::dynamics_vjp_q(q, &r.qd, p, t, &qdd, d) - g_q + half * 0.5;
    // Along δu = e_c: δq̇ = D e_c, nothing else direct.
    let r_u = mul(&k, d);
    let reduced = |ratio| StepError::ReducedMass { ratio, t };
    let ud_q = lu_solve(r.a, r_q).map_err(reduced)?;
    let ud_u = lu_solve(r.a, r_u).map_err(reduced)?;
    let ud_p = if parameters {
        // Along δp = e_k: δD_j = −S ∂(C_J D_j)/∂p e_k, and the direct terms `∂γ/∂p`,
        // `∂f/∂p`, `∂(M q̈)/∂p`, `∂(C_J q̈)/∂p`. `R` is a sum of weighted reductions
        // (`Wᵀ ∂e/∂p`, each linear in its vector argument, `q̇ = D u` for time-independent
        // constraints), row `j`:
        // `D_jᵀ ∂(f − M q̈)/∂p − P_jᵀ ∂(γ − C_J q̈)/∂p − K_jᵀ ∂(C_J q̇)/∂p − s₀ᵀ ∂(C_J D_j)/∂p`
        // with `P_j`, `K_j` the rows of `Dᵀ M S` and `K S`: no `NQ × NP` matrix is formed.
        let qd_cols = SMatrix::<f64, NQ, DOF>::from_fn(|i, _| r.qd[i]);
        let s0_cols = SMatrix::<f64, NC, DOF>::from_fn(|i, _| s0[i]);
        let r_p = M::dynamics_vjp_p(q, &r.qd, p, t, &qdd, d)
            - M::acceleration_vjp_p(q, &r.qd, p, t, &qdd, &pm_w)
            - M::jacobian_vjp_p(q, p, t, &qd_cols, &ks_w)
            - M::jacobian_vjp_p(q, p, t, d, &s0_cols);
        Some(lu_solve(r.a, r_p).map_err(reduced)?)
    } else {
        None
    };
    Ok(AccelerationJacobians {
        s,
        ud_q,
        ud_u,
        ud_p,
    })
}

/// The RK4 step's Jacobians from the generated derivatives: the rates' Jacobian `F` at each
/// of the four stage points (`∂q̇/∂q = ½ S ∂γ/∂q̇(q̇)`, `∂q̇/∂u = D`, `∂q̇/∂p = −S ∂(C_J q̇)/∂p`,
/// and `∂u̇/∂(q, u, p)` as in [`step_jacobians_symbolic`]), chained through the stages
/// (`δX_s = I + c_s h δK_{s−1}`, `δK_s = F_s δX_s`), summed with the RK4 weights, and
/// through the projection (`δq' = D(q') δq̃_ind − S(q') ∂C/∂p(q')`).
fn rk4_jacobians_symbolic<M, const NQ: usize, const NC: usize, const DOF: usize, const NP: usize>(
    q: &SVector<f64, NQ>,
    u: &SVector<f64, DOF>,
    p: &M::Params,
    t: f64,
    h: f64,
    opts: &StepOptions,
) -> Result<StepJacobians<NQ, DOF, NP>, StepError>
where
    M: StepDerivatives<NQ, NC, DOF, NP>,
{
    let pv = M::param_values(p);
    let parameters = opts.parameter_jacobians;
    // The stage derivatives `δK_s`, composed as the stages are visited, and their weighted
    // sum `δX̃ = I + h/6 (δK₁ + 2 δK₂ + 2 δK₃ + δK₄)`.
    let mut sum = Tangent::identity();
    // `δK` of the even and the odd stages (each stage reads the previous one's).
    let mut dks = [Tangent::zeros(), Tangent::zeros()];
    let mut failed = None;
    let mut stage = 0;
    let (qn, un) = rk4::<M, f64, NQ, NC, DOF, NP>(q, u, &pv, t, h, opts, |qs, ts, r| {
        if failed.is_some() {
            return;
        }
        match rate_jacobian::<M, NQ, NC, DOF, NP>(&qs, p, ts, &r, parameters) {
            Ok(f) => {
                let [even, odd] = &mut dks;
                let (dk, prev) = if stage % 2 == 0 {
                    (even, &*odd)
                } else {
                    (odd, &*even)
                };
                if stage == 0 {
                    // `δX₁ = I`: `δK₁ = F₁`.
                    *dk = f;
                } else {
                    f.chain_into(prev, RK4_C[stage] * h, dk);
                }
                sum.add_scaled(RK4_W[stage] * h / 6.0, dk);
            }
            Err(e) => failed = Some(e),
        }
        stage += 1;
    })?;
    if let Some(e) = failed {
        return Err(e);
    }
    let t1 = t + h;
    let q1 = project::<M, NQ, NC, DOF, NP>(qn, &pv, t1, opts)?;
    let d1 = basis_at::<M, NQ, NC, DOF, NP>(&q1, &pv, t1)?;
    // δq' = D(q') δq̃_ind (the projection keeps q̃'s independent part).
    let ind = &M::INDEPENDENT;
    let dq_dq = mul(&d1, &rows(&sum.dq_dq, ind));
    let dq_du = mul(&d1, &rows(&sum.dq_du, ind));
    let dq_dp = if parameters {
        projected_p::<M, NQ, NC, DOF, NP>(&q1, p, t1, &d1, &rows(&sum.dq_dp, ind))
    } else {
        SMatrix::zeros()
    };
    let out = StepJacobians {
        q: q1,
        u: un,
        dq_dq,
        dq_du,
        du_dq: sum.du_dq,
        du_du: sum.du_du,
        dq_dp,
        du_dp: sum.du_dp,
    };
    out.check_finite(t)?;
    Ok(out)
}

/// `y += a x`, in place.
fn axpy<const R: usize, const C: usize>(
    y: &mut SMatrix<f64, R, C>,
    a: f64,
    x: &SMatrix<f64, R, C>,
) {
    for (yi, xi) in y.as_mut_slice().iter_mut().zip(x.as_slice()) {
        *yi += a * xi;
    }
}

/// RK4's stage offsets `c_s` (the stage point is `X + c_s h K_{s−1}`) and weights (`/6`).
const RK4_C: [f64; 4] = [0.0, 0.5, 0.5, 1.0];
const RK4_W: [f64; 4] = [1.0, 2.0, 2.0, 1.0];

/// The Jacobian `F` of the rates `(q̇, u̇)` with respect to `(q, u, p)` at the point whose
/// rates are `r` (`dq_*` the rows of `q̇`, `du_*` of `u̇`).
fn rate_jacobian<M, const NQ: usize, const NC: usize, const DOF: usize, const NP: usize>(
    q: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
    r: &Rates<f64, NQ, DOF>,
    parameters: bool,
) -> Result<Tangent<NQ, DOF, NP>, StepError>
where
    M: StepDerivatives<NQ, NC, DOF, NP>,
{
    let aj = acceleration_jacobians::<M, NQ, NC, DOF, NP>(q, p, t, r, parameters)?;
    // δq̇ = δD u + D δu with δD_j = ½ S ∂γ/∂q̇(D_j) δq (and `−S ∂(C_J D_j)/∂p δp`): linear in
    // the velocity argument, so `δD u = ½ S ∂γ/∂q̇(q̇) δq`.
    let mut dq_dq = SMatrix::zeros();
    mul_acc(
        &mut dq_dq,
        0.5,
        &aj.s,
        &M::gamma_jacobian_qd(q, &r.qd, p, t),
    );
    let mut dq_dp = SMatrix::zeros();
    if parameters {
        mul_acc(
            &mut dq_dp,
            -1.0,
            &aj.s,
            &M::jacobian_times_jacobian_p(q, p, t, &r.qd),
        );
    }
    Ok(Tangent {
        dq_dq,
        dq_du: r.d,
        du_dq: aj.ud_q,
        du_du: aj.ud_u,
        dq_dp,
        du_dp: aj.ud_p.unwrap_or_else(SMatrix::zeros),
    })
}

/// Rows `ind` of `m`.
fn rows<const R: usize, const C: usize, const N: usize>(
    m: &SMatrix<f64, R, C>,
    ind: &[usize; N],
) -> SMatrix<f64, N, C> {
    SMatrix::from_fn(|j, c| m[(ind[j], c)])
}

/// A linear map of `(δq, δu, δp)` to `(δq, δu)` (a derivative of the state or of the rates)
/// in the blocks of [`StepJacobians`].
struct Tangent<const NQ: usize, const DOF: usize, const NP: usize> {
    dq_dq: SMatrix<f64, NQ, NQ>,
    dq_du: SMatrix<f64, NQ, DOF>,
    dq_dp: SMatrix<f64, NQ, NP>,
    du_dq: SMatrix<f64, DOF, NQ>,
    du_du: SMatrix<f64, DOF, DOF>,
    du_dp: SMatrix<f64, DOF, NP>,
}

impl<const NQ: usize, const DOF: usize, const NP: usize> Tangent<NQ, DOF, NP> {
    /// The zero map.
    fn zeros() -> Self {
        Self {
            dq_dq: SMatrix::zeros(),
            dq_du: SMatrix::zeros(),
            dq_dp: SMatrix::zeros(),
            du_dq: SMatrix::zeros(),
            du_du: SMatrix::zeros(),
            du_dp: SMatrix::zeros(),
        }
    }

    /// The identity on the state (zero parameter blocks).
    fn identity() -> Self {
        let mut out = Self::zeros();
        out.dq_dq.fill_with_identity();
        out.du_du.fill_with_identity();
        out
    }

    /// `out = self (I + a other)` as linear maps of `(δq, δu, δp)`: `self`'s blocks plus `a`
    /// times its state blocks applied to every column of `other` (`self`'s own parameter
    /// blocks are added once, not applied to `other`).
    fn chain_into(&self, other: &Self, a: f64, out: &mut Self) {
        // Block `o` of the result: `self.o + a (self.{lq} other.{rq} + self.{lu} other.{ru})`.
        macro_rules! block {
            ($o:ident = $lq:ident . $rq:ident + $lu:ident . $ru:ident) => {
                out.$o.copy_from(&self.$o);
                mul_acc(&mut out.$o, a, &self.$lq, &other.$rq);
                mul_acc(&mut out.$o, a, &self.$lu, &other.$ru);
            };
        }
        block!(dq_dq = dq_dq.dq_dq + dq_du.du_dq);
        block!(dq_du = dq_dq.dq_du + dq_du.du_du);
        block!(dq_dp = dq_dq.dq_dp + dq_du.du_dp);
        block!(du_dq = du_dq.dq_dq + du_du.du_dq);
        block!(du_du = du_dq.dq_du + du_du.du_du);
        block!(du_dp = du_dq.dq_dp + du_du.du_dp);
    }

    /// `self += a · other`, block by block.
    fn add_scaled(&mut self, a: f64, other: &Self) {
        axpy(&mut self.dq_dq, a, &other.dq_dq);
        axpy(&mut self.dq_du, a, &other.dq_du);
        axpy(&mut self.dq_dp, a, &other.dq_dp);
        axpy(&mut self.du_dq, a, &other.du_dq);
        axpy(&mut self.du_du, a, &other.du_du);
        axpy(&mut self.du_dp, a, &other.du_dp);
    }
}

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

#[cfg(test)]
mod tests {
    use super::{mul, mul_acc};
    use crate::linalg::{mass_mul, mat_mul};
    use nalgebra::SMatrix;

    /// A matrix with exact zeros (a zero column included) and values from a fixed xorshift.
    fn sample<const R: usize, const C: usize>(seed: &mut u64) -> SMatrix<f64, R, C> {
        SMatrix::from_fn(|i, j| {
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            let v = (*seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
            if j == 1 || (i + 2 * j) % 3 == 0 {
                0.0
            } else {
                v
            }
        })
    }

    fn check<const R: usize, const K: usize, const C: usize>(seed: &mut u64) {
        let a = sample::<R, K>(seed);
        let b = sample::<K, C>(seed);
        let want = a * b;
        let got = mul(&a, &b);
        assert!(
            (got - want).amax() <= 1e-15 * (1.0 + want.amax()),
            "{R}×{K}·{K}×{C}"
        );
        // `out += alpha a b` on a nonzero `out`.
        let c = sample::<R, C>(seed);
        let mut acc = c;
        mul_acc(&mut acc, -0.75, &a, &b);
        let want = c - want * 0.75;
        assert!(
            (acc - want).amax() <= 1e-15 * (1.0 + want.amax()),
            "accumulated {R}×{K}·{K}×{C}"
        );
    }

    #[test]
    fn mass_products_over_the_nonzeros_equal_the_dense_ones() {
        let mut seed = 0x9e37_79b9_7f4a_7c15;
        let full = sample::<9, 9>(&mut seed);
        // A symmetric matrix with the sample's zeros, and its nonzeros column by column.
        let m = full + full.transpose();
        let mut nonzeros = Vec::new();
        for k in 0..9 {
            for i in 0..9 {
                if m[(i, k)] != 0.0 {
                    nonzeros.push((i, k));
                }
            }
        }
        assert!(
            nonzeros.len() < 70,
            "the sample is sparse: {}",
            nonzeros.len()
        );
        let x = sample::<9, 4>(&mut seed);
        let dense = mat_mul(&m, &x);
        // The same products in the same order: equal, not only close.
        assert_eq!(mass_mul(Some(&nonzeros), &m, &x), dense);
        assert!((dense - m * x).amax() <= 1e-15 * (1.0 + dense.amax()));
        assert_eq!(mass_mul(None, &m, &x), dense);
        // A list with an index out of range is not trusted: the dense product.
        nonzeros.push((9, 0));
        assert_eq!(mass_mul(Some(&nonzeros), &m, &x), dense);
    }

    #[test]
    fn products_equal_nalgebras_in_both_forms_and_accumulated() {
        let mut seed = 0x2545_f491_4f6c_dd1d;
        // Dot-product form (fewer than four rows, fewer than the inner dimension).
        check::<1, 7, 42>(&mut seed);
        check::<3, 6, 5>(&mut seed);
        // Column form (zeros of `b` and zero columns of `a` skipped).
        check::<7, 6, 42>(&mut seed);
        check::<6, 24, 15>(&mut seed);
        check::<7, 1, 42>(&mut seed);
        check::<2, 2, 3>(&mut seed);
    }
}
