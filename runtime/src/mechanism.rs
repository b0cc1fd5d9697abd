//! The traits that every generated mechanism module implements.
//!
//! Sizes are const generics (`NQ` coordinates, `NC` constraint equations, `DOF`
//! degrees of freedom) so that every runtime routine works on fixed-size,
//! stack-allocated nalgebra types with no allocation in the hot loop.

use nalgebra::{SMatrix, SVector};

use crate::real::Real;

/// Kinematics of a constrained mechanism: `C(q, p, t) = 0` with `NC` equations in
/// `NQ` generalised coordinates, `DOF = NQ - rank(C_J)` degrees of freedom.
///
/// Generated modules implement this on a unit struct (`Model`); every method is an
/// associated function so that calls are static and inlinable.
pub trait Mechanism<const NQ: usize, const NC: usize, const DOF: usize> {
    /// The runtime parameters (one field per `param` of the mechanism).
    type Params;

    /// Name of the mechanism module.
    const NAME: &'static str;
    /// Coordinate names, in coordinate order.
    const COORD_NAMES: [&'static str; NQ];
    /// Indices of the independent coordinates (the identity block of the null-space
    /// basis), in the order of the columns of [`Mechanism::null_space`].
    const INDEPENDENT: [usize; DOF];
    /// The typical health figure of [`Mechanism::null_space`] along the motion (a generated
    /// module's is the median over the configurations sampled at generation: large models
    /// have small healthy figures: 0.01 for the Stewart platform near its nominal pose).
    /// The projection method switches charts below `TYPICAL_HEALTH / 10` where that is under
    /// `SimOptions::switch_threshold`, and takes the generated chart back once its health is
    /// `TYPICAL_HEALTH / 2`, kept within 2 and 10 times that threshold; below a tenth of it,
    /// the pivot atlas's charts with the same independent coordinates stand in for the
    /// primary one. 1 by default (switch at the threshold, return at 10 times it).
    const TYPICAL_HEALTH: f64 = 1.0;
    /// How many of the `NC` constraint rows are velocity (nonholonomic) constraints
    /// `A(q, t) q̇ + a₀(q, t) = 0`: the last `VELOCITY_ROWS` rows of [`Mechanism::jacobian`],
    /// [`Mechanism::jacobian_t`] (and `γ`), whose [`Mechanism::residual`] rows are identically
    /// zero. They restrict velocities, never configurations: position assembly
    /// ([`crate::assemble::assemble`]) solves the first `NC − VELOCITY_ROWS` (holonomic) rows
    /// only. 0 by default (every row holonomic).
    const VELOCITY_ROWS: usize = 0;

    /// Nominal coordinates given in the model.
    fn nominal_q() -> SVector<f64, NQ>;
    /// Constraint residual `C(q, p, t)`.
    fn residual(q: &SVector<f64, NQ>, p: &Self::Params, t: f64) -> SVector<f64, NC>;
    /// Constraint Jacobian `C_J = ∂C/∂q` (`NC × NQ`).
    fn jacobian(q: &SVector<f64, NQ>, p: &Self::Params, t: f64) -> SMatrix<f64, NC, NQ>;
    /// Partial time derivative `C_t = ∂C/∂t`.
    fn jacobian_t(q: &SVector<f64, NQ>, p: &Self::Params, t: f64) -> SVector<f64, NC>;
    /// Null-space basis `D` (`NQ × DOF`, `C_J D = 0`, identity rows at
    /// [`Mechanism::INDEPENDENT`]) and the smallest relative pivot `min_k |U_kk| / scale_k`
    /// of the static LU (near 0 means the static pivot order is breaking down).
    fn null_space(q: &SVector<f64, NQ>, p: &Self::Params, t: f64) -> (SMatrix<f64, NQ, DOF>, f64);
    /// Solves `C_J x = b` for `x` with zero independent part (`x[INDEPENDENT[j]] = 0`), using the
    /// static LU factors. With redundant constraints only the independent rows of `b` are used.
    fn solve_dependent(
        q: &SVector<f64, NQ>,
        p: &Self::Params,
        t: f64,
        b: &SVector<f64, NC>,
    ) -> SVector<f64, NQ>;

    /// Independent coordinates of the pivot atlas's further charts (`CHARTS[1..]` of a
    /// generated module: static pivot sequences healthy where the primary one is not), in
    /// the order of [`Mechanism::null_space_in_atlas`]. The runtime's partition switching
    /// takes these first, with their generated code. Empty by default.
    const ATLAS_CHARTS: &'static [[usize; DOF]] = &[];

    /// Basis and health figure of atlas chart `k` (an index into
    /// [`Mechanism::ATLAS_CHARTS`]), as [`Mechanism::null_space`]; `None` past the end.
    fn null_space_in_atlas(
        _k: usize,
        _q: &SVector<f64, NQ>,
        _p: &Self::Params,
        _t: f64,
    ) -> Option<(SMatrix<f64, NQ, DOF>, f64)> {
        None
    }

    /// The dependent solve of atlas chart `k` (zero at its independent coordinates), as
    /// [`Mechanism::solve_dependent`]; `None` past the end.
    fn solve_dependent_in_atlas(
        _k: usize,
        _q: &SVector<f64, NQ>,
        _p: &Self::Params,
        _t: f64,
        _b: &SVector<f64, NC>,
    ) -> Option<SVector<f64, NQ>> {
        None
    }
}

/// Dynamics of a constrained mechanism: `M(q) q̈ = f(q, q̇, t) + C_Jᵀ λ`, `C(q, t) = 0`.
pub trait Dynamics<const NQ: usize, const NC: usize, const DOF: usize>:
    Mechanism<NQ, NC, DOF>
{
    /// Where the mass matrix may be nonzero: `(row, column)` pairs of both triangles, or
    /// `None` (the default) for a dense `M`. Generated models list their structural nonzeros,
    /// so that the runtime's products with `M` skip the others (the Stewart platform's
    /// `24 × 24` matrix has 66 of 576); an entry outside the list must be zero.
    const MASS_NONZEROS: Option<&'static [(usize, usize)]> = None;
    /// What the smooth routes of [`simulate`](crate::simulate()) cannot carry: `None` (the
    /// default) for a model of equality constraints only, or the runtime function that
    /// simulates the model and the names of its inequality constraints or frictional joints.
    /// Generated models with `inequality` items or joint friction set it, and `simulate`'s
    /// smooth routes, asked for by name, refuse them with
    /// [`SimError::NotSmooth`](crate::SimError::NotSmooth) naming that function, rather than
    /// simulate them as if the inequalities were not there (`Route::Auto` carries them by
    /// [`Dynamics::event_route`]).
    const NOT_SMOOTH: Option<(&'static str, &'static [&'static str])> = None;
    /// The event-located route of [`simulate`](crate::simulate()) for a model with contacts
    /// or friction: generated models with `inequality` items or joint friction call the
    /// route of [`EventRoutes`] that fits them; `None` (the default) for the others, which
    /// the smooth routes carry. Not for users to call: use `simulate`.
    #[doc(hidden)]
    fn event_route<R: EventRoutes<Self, NQ, NC, DOF>>(_routes: R) -> Option<R::Output>
    where
        Self: Sized,
    {
        None
    }
    /// Generalised mass matrix `M(q, p, t)` (symmetric, `NQ × NQ`).
    fn mass_matrix(q: &SVector<f64, NQ>, p: &Self::Params, t: f64) -> SMatrix<f64, NQ, NQ>;
    /// [`mass_matrix`](Self::mass_matrix) written into `out`. Generated models write only
    /// the structural nonzeros ([`MASS_NONZEROS`](Self::MASS_NONZEROS)) and leave the other
    /// entries as they are: zero `out` once and reuse it (for a large sparse mass matrix the
    /// zero fill of a new matrix on every call costs more than its entries). The default
    /// assigns the whole matrix.
    #[inline]
    fn mass_matrix_into(
        q: &SVector<f64, NQ>,
        p: &Self::Params,
        t: f64,
        out: &mut SMatrix<f64, NQ, NQ>,
    ) {
        *out = Self::mass_matrix(q, p, t);
    }
    /// Generalised forces `f(q, q̇, p, t)`: applied forces plus the quadratic-velocity
    /// (Coriolis/centrifugal) terms.
    fn forces(
        q: &SVector<f64, NQ>,
        qd: &SVector<f64, NQ>,
        p: &Self::Params,
        t: f64,
    ) -> SVector<f64, NQ>;
    /// Right-hand side of the acceleration constraint `C_J q̈ = γ`,
    /// `γ = −(C_J q̇)_q q̇ − 2 C_{qt} q̇ − C_tt`.
    fn gamma(
        q: &SVector<f64, NQ>,
        qd: &SVector<f64, NQ>,
        p: &Self::Params,
        t: f64,
    ) -> SVector<f64, NC>;
    /// Total energy (kinetic + potential) where the model defines one.
    fn energy(
        _q: &SVector<f64, NQ>,
        _qd: &SVector<f64, NQ>,
        _p: &Self::Params,
        _t: f64,
    ) -> Option<f64> {
        None
    }
}

/// The generated functions of a `#![generic]` module with dynamics, over any scalar:
/// what [`step`](crate::step::step) and [`step_jacobians`](crate::step::step_jacobians) need. Implemented by the generated `Model`;
/// `NP` is the number of parameters, passed by value as `p: &[S; NP]`.
pub trait GenericDynamics<const NQ: usize, const NC: usize, const DOF: usize, const NP: usize>:
    Dynamics<NQ, NC, DOF>
{
    /// The parameters' values in the order of the `p` arrays.
    fn param_values(p: &Self::Params) -> [f64; NP];
    /// `C(q, p, t)`.
    fn residual_s<S: Real>(q: &SVector<S, NQ>, p: &[S; NP], t: S) -> SVector<S, NC>;
    /// `C_t = ∂C/∂t`.
    fn jacobian_t_s<S: Real>(q: &SVector<S, NQ>, p: &[S; NP], t: S) -> SVector<S, NC>;
    /// The primary chart's basis `D` and its health (an `f64` of the pivots' values).
    fn null_space_s<S: Real>(q: &SVector<S, NQ>, p: &[S; NP], t: S) -> (SMatrix<S, NQ, DOF>, f64);
    /// `x` with `C_J x = b` and zero independent part.
    fn solve_dependent_s<S: Real>(
        q: &SVector<S, NQ>,
        p: &[S; NP],
        t: S,
        b: &SVector<S, NC>,
    ) -> SVector<S, NQ>;
    /// `γ(q, q̇)` of `C_J q̈ = γ`.
    fn gamma_s<S: Real>(
        q: &SVector<S, NQ>,
        qd: &SVector<S, NQ>,
        p: &[S; NP],
        t: S,
    ) -> SVector<S, NC>;
    /// `M(q)`.
    fn mass_matrix_s<S: Real>(q: &SVector<S, NQ>, p: &[S; NP], t: S) -> SMatrix<S, NQ, NQ>;
    /// `f(q, q̇)`.
    fn forces_s<S: Real>(
        q: &SVector<S, NQ>,
        qd: &SVector<S, NQ>,
        p: &[S; NP],
        t: S,
    ) -> SVector<S, NQ>;
}

/// The event-located routes of a model with contacts or friction, one per kind: what a
/// generated model's [`Dynamics::event_route`] calls (a visitor: the model knows which of
/// its traits it implements, `simulate` does not). Implemented by the runtime's `simulate`
/// (std); not for users.
#[doc(hidden)]
pub trait EventRoutes<M, const NQ: usize, const NC: usize, const DOF: usize>
where
    M: Dynamics<NQ, NC, DOF>,
{
    /// What the route returns.
    type Output;
    /// A model with frictionless contacts.
    fn contact<const NI: usize>(self) -> Self::Output
    where
        M: Inequalities<NQ, NC, DOF, NI>;
    /// A model with Coulomb friction at its contacts.
    fn friction<const NI: usize, const NT: usize>(self) -> Self::Output
    where
        M: Friction<NQ, NC, DOF, NI, NT>;
    /// A model with dry friction in its joints.
    fn joint_friction<const NS: usize>(self) -> Self::Output
    where
        M: JointFriction<NQ, NC, DOF, NS>;
}

/// Inequality constraints `g(q, p, t) ≥ 0` of a mechanism with dynamics (generated for
/// models with `inequality` items and bodies or forces).
pub trait Inequalities<const NQ: usize, const NC: usize, const DOF: usize, const NI: usize>:
    Dynamics<NQ, NC, DOF>
{
    /// Names of the inequality constraints.
    const INEQUALITY_NAMES: [&'static str; NI];
    /// Restitution coefficient `e ∈ [0, 1]` of impacts on each inequality.
    const RESTITUTION: [f64; NI];
    /// `g(q, p, t)`.
    fn inequality(q: &SVector<f64, NQ>, p: &Self::Params, t: f64) -> SVector<f64, NI>;
    /// `J_g = ∂g/∂q`.
    fn inequality_jacobian(q: &SVector<f64, NQ>, p: &Self::Params, t: f64) -> SMatrix<f64, NI, NQ>;
    /// `∂g/∂t`.
    fn inequality_jacobian_t(q: &SVector<f64, NQ>, p: &Self::Params, t: f64) -> SVector<f64, NI>;
    /// `γ_g` of `J_g q̈ = γ_g` (`g̈ = J_g q̈ − γ_g`).
    fn inequality_gamma(
        q: &SVector<f64, NQ>,
        qd: &SVector<f64, NQ>,
        p: &Self::Params,
        t: f64,
    ) -> SVector<f64, NI>;
}

/// The friction data of a model with frictional contacts: each inequality's friction
/// coefficient and the slip velocities `v_t = J_t q̇ + a₀` of the frictional contacts (one
/// row per planar contact, two per spatial one). Implemented by the generated `Model` of a
/// module with `friction = μ, tangent = v` on an inequality.
pub trait Friction<
    const NQ: usize,
    const NC: usize,
    const DOF: usize,
    const NI: usize,
    const NT: usize,
>: Inequalities<NQ, NC, DOF, NI>
{
    /// Coulomb friction coefficient of each inequality (0: frictionless).
    const FRICTION: [f64; NI];
    /// The inequality (contact) each slip row belongs to (ascending).
    const TANGENT_CONTACT: [usize; NT];
    /// `J_t`, the slip rows' Jacobian.
    fn tangent_jacobian(q: &SVector<f64, NQ>, p: &Self::Params, t: f64) -> SMatrix<f64, NT, NQ>;
    /// `a₀`, the part of the slip velocities free of `q̇`.
    fn tangent_jacobian_t(q: &SVector<f64, NQ>, p: &Self::Params, t: f64) -> SVector<f64, NT>;
    /// `γ_t` of `v̇_t = J_t q̈ − γ_t`.
    fn tangent_gamma(
        q: &SVector<f64, NQ>,
        qd: &SVector<f64, NQ>,
        p: &Self::Params,
        t: f64,
    ) -> SVector<f64, NT>;
}

/// The dry-friction data of a model with friction in its joints (generated for `constraint
/// NAME: lhs == rhs, friction = μ, slip = v;` in a model with dynamics): `NS` joints, each
/// with its normal rows, coefficient, radius and slip velocity `v_s = J_s q̇ + s₀`.
pub trait JointFriction<const NQ: usize, const NC: usize, const DOF: usize, const NS: usize>:
    Dynamics<NQ, NC, DOF>
{
    /// The joints' names (their constraints').
    const JOINT_FRICTION_NAMES: [&'static str; NS];
    /// Coulomb friction coefficient `μ ≥ 0` of each joint.
    const JOINT_FRICTION: [f64; NS];
    /// The radius `r > 0` scaling each joint's normal force (the friction is `μ r ‖N‖`).
    const FRICTION_RADIUS: [f64; NS];
    /// Each joint's normal: its first constraint row and number of rows.
    const FRICTION_ROWS: [(usize, usize); NS];
    /// `J_s`, the slips' Jacobian.
    fn slip_jacobian(q: &SVector<f64, NQ>, p: &Self::Params, t: f64) -> SMatrix<f64, NS, NQ>;
    /// `s₀`, the part of the slip velocities free of `q̇`.
    fn slip_jacobian_t(q: &SVector<f64, NQ>, p: &Self::Params, t: f64) -> SVector<f64, NS>;
    /// `γ_s` of `v̇_s = J_s q̈ − γ_s`.
    fn slip_gamma(
        q: &SVector<f64, NQ>,
        qd: &SVector<f64, NQ>,
        p: &Self::Params,
        t: f64,
    ) -> SVector<f64, NS>;
}

/// The inequality functions and the constraint Jacobian of a `#![generic]` module with
/// inequalities, over any scalar: what the contact step's Jacobians
/// ([`contact_step_jacobians`](crate::contact::contact_step_jacobians)) evaluate with dual
/// numbers. Implemented by the generated `Model`.
pub trait GenericInequalities<
    const NQ: usize,
    const NC: usize,
    const DOF: usize,
    const NI: usize,
    const NP: usize,
>: GenericDynamics<NQ, NC, DOF, NP> + Inequalities<NQ, NC, DOF, NI>
{
    /// `C_J = ∂C/∂q`.
    fn jacobian_s<S: Real>(q: &SVector<S, NQ>, p: &[S; NP], t: S) -> SMatrix<S, NC, NQ>;
    /// `g(q, p, t)`.
    fn inequality_s<S: Real>(q: &SVector<S, NQ>, p: &[S; NP], t: S) -> SVector<S, NI>;
    /// `J_g = ∂g/∂q`.
    fn inequality_jacobian_s<S: Real>(q: &SVector<S, NQ>, p: &[S; NP], t: S) -> SMatrix<S, NI, NQ>;
    /// `∂g/∂t`.
    fn inequality_jacobian_t_s<S: Real>(q: &SVector<S, NQ>, p: &[S; NP], t: S) -> SVector<S, NI>;
    /// `γ_g` of `J_g q̈ = γ_g`.
    fn inequality_gamma_s<S: Real>(
        q: &SVector<S, NQ>,
        qd: &SVector<S, NQ>,
        p: &[S; NP],
        t: S,
    ) -> SVector<S, NI>;
}

/// The slip rows of a `#![generic]` module with frictional contacts, over any scalar: what
/// the frictional contact step's Jacobians
/// ([`friction_step_jacobians`](crate::contact::friction_step_jacobians)) evaluate with dual
/// numbers. Implemented by the generated `Model`.
pub trait GenericFriction<
    const NQ: usize,
    const NC: usize,
    const DOF: usize,
    const NI: usize,
    const NT: usize,
    const NP: usize,
>: GenericInequalities<NQ, NC, DOF, NI, NP> + Friction<NQ, NC, DOF, NI, NT>
{
    /// `J_t`, the slip rows' Jacobian.
    fn tangent_jacobian_s<S: Real>(q: &SVector<S, NQ>, p: &[S; NP], t: S) -> SMatrix<S, NT, NQ>;
    /// `a₀`, the part of the slip velocities free of `q̇`.
    fn tangent_jacobian_t_s<S: Real>(q: &SVector<S, NQ>, p: &[S; NP], t: S) -> SVector<S, NT>;
    /// `γ_t` of `v̇_t = J_t q̈ − γ_t`.
    fn tangent_gamma_s<S: Real>(
        q: &SVector<S, NQ>,
        qd: &SVector<S, NQ>,
        p: &[S; NP],
        t: S,
    ) -> SVector<S, NT>;
}

/// The constraint Jacobian and the slips of a `#![generic]` module with dry friction in its
/// joints, over any scalar: what the joint-friction step's Jacobians
/// ([`joint_friction_step_jacobians`](crate::contact::joint_friction_step_jacobians))
/// evaluate with dual numbers. Implemented by the generated `Model`.
pub trait GenericJointFriction<
    const NQ: usize,
    const NC: usize,
    const DOF: usize,
    const NS: usize,
    const NP: usize,
>: GenericDynamics<NQ, NC, DOF, NP> + JointFriction<NQ, NC, DOF, NS>
{
    /// `C_J = ∂C/∂q`.
    fn jacobian_s<S: Real>(q: &SVector<S, NQ>, p: &[S; NP], t: S) -> SMatrix<S, NC, NQ>;
    /// `J_s`, the slips' Jacobian.
    fn slip_jacobian_s<S: Real>(q: &SVector<S, NQ>, p: &[S; NP], t: S) -> SMatrix<S, NS, NQ>;
    /// `s₀`, the part of the slip velocities free of `q̇`.
    fn slip_jacobian_t_s<S: Real>(q: &SVector<S, NQ>, p: &[S; NP], t: S) -> SVector<S, NS>;
    /// `γ_s` of `v̇_s = J_s q̈ − γ_s`.
    fn slip_gamma_s<S: Real>(
        q: &SVector<S, NQ>,
        qd: &SVector<S, NQ>,
        p: &[S; NP],
        t: S,
    ) -> SVector<S, NS>;
}

/// The symbolic derivatives of the dynamics terms of a module generated with `#![generic]`
/// and `#![derivatives]` (implemented by its `Model`): what
/// [`step_jacobians_symbolic`](crate::step::step_jacobians_symbolic) composes the step's Jacobian from,
/// instead of dual-number passes through the whole step.
pub trait StepDerivatives<const NQ: usize, const NC: usize, const DOF: usize, const NP: usize>:
    GenericDynamics<NQ, NC, DOF, NP>
{
    /// Whether the constraints depend on time (`∂C/∂t` not identically zero): then `γ` has
    /// `C_qt`, `C_tt` terms and the composition does not apply (dual numbers are used).
    const RHEONOMIC: bool;
    /// `∂f/∂q` (velocities held).
    fn forces_jacobian_q(
        q: &SVector<f64, NQ>,
        qd: &SVector<f64, NQ>,
        p: &Self::Params,
        t: f64,
    ) -> SMatrix<f64, NQ, NQ>;
    /// `∂f/∂q̇`.
    fn forces_jacobian_qd(
        q: &SVector<f64, NQ>,
        qd: &SVector<f64, NQ>,
        p: &Self::Params,
        t: f64,
    ) -> SMatrix<f64, NQ, NQ>;
    /// `∂(M(q) b)/∂q` for a fixed `b`.
    fn mass_times_jacobian(
        q: &SVector<f64, NQ>,
        p: &Self::Params,
        t: f64,
        b: &SVector<f64, NQ>,
    ) -> SMatrix<f64, NQ, NQ>;
    /// `∂γ/∂q` (velocities held).
    fn gamma_jacobian_q(
        q: &SVector<f64, NQ>,
        qd: &SVector<f64, NQ>,
        p: &Self::Params,
        t: f64,
    ) -> SMatrix<f64, NC, NQ>;
    /// `∂γ/∂q̇`; for time-independent constraints `−2 ∂(C_J q̇)/∂q`.
    fn gamma_jacobian_qd(
        q: &SVector<f64, NQ>,
        qd: &SVector<f64, NQ>,
        p: &Self::Params,
        t: f64,
    ) -> SMatrix<f64, NC, NQ>;
    /// `∂f/∂p` (parameters in the order of `generic::PARAM_NAMES`).
    fn forces_jacobian_p(
        q: &SVector<f64, NQ>,
        qd: &SVector<f64, NQ>,
        p: &Self::Params,
        t: f64,
    ) -> SMatrix<f64, NQ, NP>;
    /// `∂(M(q) b)/∂p` for a fixed `b`.
    fn mass_times_jacobian_p(
        q: &SVector<f64, NQ>,
        p: &Self::Params,
        t: f64,
        b: &SVector<f64, NQ>,
    ) -> SMatrix<f64, NQ, NP>;
    /// `∂γ/∂p`.
    fn gamma_jacobian_p(
        q: &SVector<f64, NQ>,
        qd: &SVector<f64, NQ>,
        p: &Self::Params,
        t: f64,
    ) -> SMatrix<f64, NC, NP>;
    /// `∂C/∂p`.
    fn residual_jacobian_p(q: &SVector<f64, NQ>, p: &Self::Params, t: f64) -> SMatrix<f64, NC, NP>;
    /// `∂(C_J b)/∂p` for a fixed `b`.
    fn jacobian_times_jacobian_p(
        q: &SVector<f64, NQ>,
        p: &Self::Params,
        t: f64,
        b: &SVector<f64, NQ>,
    ) -> SMatrix<f64, NC, NP>;
    /// The dependent solve as a matrix `S` (`NQ × NC`): `solve_dependent(q, p, t, b) = S b`.
    /// Generated models compute it in one body (the trigonometry shared); the default makes
    /// `NC` solves.
    fn dependent_solve_matrix(
        q: &SVector<f64, NQ>,
        p: &Self::Params,
        t: f64,
    ) -> SMatrix<f64, NQ, NC> {
        let pv = Self::param_values(p);
        let mut s = SMatrix::<f64, NQ, NC>::zeros();
        for i in 0..NC {
            let e = SVector::<f64, NC>::from_fn(|r, _| f64::from(u8::from(r == i)));
            s.set_column(i, &Self::solve_dependent_s(q, &pv, t, &e));
        }
        s
    }
    /// `∂(f − M(q) b)/∂q` for a fixed `b`. Generated models compute it in one body; the
    /// default subtracts [`Self::mass_times_jacobian`] from [`Self::forces_jacobian_q`].
    fn dynamics_jacobian_q(
        q: &SVector<f64, NQ>,
        qd: &SVector<f64, NQ>,
        p: &Self::Params,
        t: f64,
        b: &SVector<f64, NQ>,
    ) -> SMatrix<f64, NQ, NQ> {
        Self::forces_jacobian_q(q, qd, p, t) - Self::mass_times_jacobian(q, p, t, b)
    }
    /// `∂(f − M(q) b)/∂p` for a fixed `b` (one body in generated models).
    fn dynamics_jacobian_p(
        q: &SVector<f64, NQ>,
        qd: &SVector<f64, NQ>,
        p: &Self::Params,
        t: f64,
        b: &SVector<f64, NQ>,
    ) -> SMatrix<f64, NQ, NP> {
        Self::forces_jacobian_p(q, qd, p, t) - Self::mass_times_jacobian_p(q, p, t, b)
    }
    /// `∂(γ − C_J b)/∂p` for a fixed `b` (one body in generated models).
    fn acceleration_jacobian_p(
        q: &SVector<f64, NQ>,
        qd: &SVector<f64, NQ>,
        p: &Self::Params,
        t: f64,
        b: &SVector<f64, NQ>,
    ) -> SMatrix<f64, NC, NP> {
        Self::gamma_jacobian_p(q, qd, p, t) - Self::jacobian_times_jacobian_p(q, p, t, b)
    }
    /// `Wᵀ ∂(f − M(q) b)/∂p` (`DOF × NP`) for `DOF` weight columns `W`: a reduction of
    /// [`Self::dynamics_jacobian_p`] by `DOF` rows. Generated models multiply only the
    /// structural nonzeros (no `NQ × NP` matrix, the shared subexpressions once); the
    /// default reduces the matrix.
    fn dynamics_vjp_p(
        q: &SVector<f64, NQ>,
        qd: &SVector<f64, NQ>,
        p: &Self::Params,
        t: f64,
        b: &SVector<f64, NQ>,
        w: &SMatrix<f64, NQ, DOF>,
    ) -> SMatrix<f64, DOF, NP> {
        w.tr_mul(&Self::dynamics_jacobian_p(q, qd, p, t, b))
    }
    /// `Wᵀ ∂(γ − C_J b)/∂p` (`DOF × NP`) for `DOF` weight columns `W` (see
    /// [`Self::dynamics_vjp_p`]).
    fn acceleration_vjp_p(
        q: &SVector<f64, NQ>,
        qd: &SVector<f64, NQ>,
        p: &Self::Params,
        t: f64,
        b: &SVector<f64, NQ>,
        w: &SMatrix<f64, NC, DOF>,
    ) -> SMatrix<f64, DOF, NP> {
        w.tr_mul(&Self::acceleration_jacobian_p(q, qd, p, t, b))
    }
    /// Row `j`: `∂(W_jᵀ C_J B_j)/∂p = W_jᵀ ∂(C_J B_j)/∂p` (`DOF × NP`) for `DOF` columns `B`
    /// and weight columns `W` (see [`Self::dynamics_vjp_p`]; the default makes `DOF` calls
    /// of [`Self::jacobian_times_jacobian_p`]).
    fn jacobian_vjp_p(
        q: &SVector<f64, NQ>,
        p: &Self::Params,
        t: f64,
        b: &SMatrix<f64, NQ, DOF>,
        w: &SMatrix<f64, NC, DOF>,
    ) -> SMatrix<f64, DOF, NP> {
        let mut out = SMatrix::<f64, DOF, NP>::zeros();
        for j in 0..DOF {
            let m = Self::jacobian_times_jacobian_p(q, p, t, &b.column(j).into_owned());
            out.set_row(j, &w.column(j).tr_mul(&m));
        }
        out
    }
    /// `Wᵀ ∂(f − M(q) b)/∂q` (`DOF × NQ`) for `DOF` weight columns `W` (see
    /// [`Self::dynamics_vjp_p`]; the default reduces [`Self::dynamics_jacobian_q`]).
    fn dynamics_vjp_q(
        q: &SVector<f64, NQ>,
        qd: &SVector<f64, NQ>,
        p: &Self::Params,
        t: f64,
        b: &SVector<f64, NQ>,
        w: &SMatrix<f64, NQ, DOF>,
    ) -> SMatrix<f64, DOF, NQ> {
        w.tr_mul(&Self::dynamics_jacobian_q(q, qd, p, t, b))
    }
    /// `Wᵀ ∂f/∂q̇` (`DOF × NQ`) for `DOF` weight columns `W` (the default reduces
    /// [`Self::forces_jacobian_qd`]).
    fn forces_vjp_qd(
        q: &SVector<f64, NQ>,
        qd: &SVector<f64, NQ>,
        p: &Self::Params,
        t: f64,
        w: &SMatrix<f64, NQ, DOF>,
    ) -> SMatrix<f64, DOF, NQ> {
        w.tr_mul(&Self::forces_jacobian_qd(q, qd, p, t))
    }
    /// `Wᵀ ∂γ/∂q` (`DOF × NQ`) for `DOF` weight columns `W` (the default reduces
    /// [`Self::gamma_jacobian_q`]).
    fn gamma_vjp_q(
        q: &SVector<f64, NQ>,
        qd: &SVector<f64, NQ>,
        p: &Self::Params,
        t: f64,
        w: &SMatrix<f64, NC, DOF>,
    ) -> SMatrix<f64, DOF, NQ> {
        w.tr_mul(&Self::gamma_jacobian_q(q, qd, p, t))
    }
    /// `Wᵀ ∂γ/∂q̇` (`DOF × NQ`) for `DOF` weight columns `W` (the default reduces
    /// [`Self::gamma_jacobian_qd`]).
    fn gamma_vjp_qd(
        q: &SVector<f64, NQ>,
        qd: &SVector<f64, NQ>,
        p: &Self::Params,
        t: f64,
        w: &SMatrix<f64, NC, DOF>,
    ) -> SMatrix<f64, DOF, NQ> {
        w.tr_mul(&Self::gamma_jacobian_qd(q, qd, p, t))
    }
    /// `[Wᵀ ∂γ/∂q, Wᵀ ∂γ/∂q̇, Wᵀ ∂γ/∂q̇ at q̇ = b]` (each `DOF × NQ`) for `DOF` weight columns
    /// `W`: the three reductions by one set of weights that the step's Jacobian takes at one
    /// configuration. Generated models compute them from one body (the trigonometry shared);
    /// the default calls [`Self::gamma_vjp_q`] and [`Self::gamma_vjp_qd`] (twice).
    fn gamma_reductions(
        q: &SVector<f64, NQ>,
        qd: &SVector<f64, NQ>,
        p: &Self::Params,
        t: f64,
        b: &SVector<f64, NQ>,
        w: &SMatrix<f64, NC, DOF>,
    ) -> [SMatrix<f64, DOF, NQ>; 3] {
        [
            Self::gamma_vjp_q(q, qd, p, t, w),
            Self::gamma_vjp_qd(q, qd, p, t, w),
            Self::gamma_vjp_qd(q, b, p, t, w),
        ]
    }
    /// `([Wᵀ ∂γ/∂q, Wᵀ ∂γ/∂q̇, Wᵀ ∂γ/∂q̇ at q̇ = b], Wᵀ ∂(γ − C_J b)/∂p)` for `DOF` weight
    /// columns `W`: [`Self::gamma_reductions`] and [`Self::acceleration_vjp_p`], which the
    /// step's Jacobian with its parameter blocks takes with the same `b` and `W`. Generated
    /// models compute them from one body (the trigonometry and the shared subexpressions
    /// once); the default calls the two.
    #[allow(clippy::type_complexity)]
    fn gamma_reductions_p(
        q: &SVector<f64, NQ>,
        qd: &SVector<f64, NQ>,
        p: &Self::Params,
        t: f64,
        b: &SVector<f64, NQ>,
        w: &SMatrix<f64, NC, DOF>,
    ) -> ([SMatrix<f64, DOF, NQ>; 3], SMatrix<f64, DOF, NP>) {
        (
            Self::gamma_reductions(q, qd, p, t, b, w),
            Self::acceleration_vjp_p(q, qd, p, t, b, w),
        )
    }
    /// `[Wᵀ ∂(f − M(q) b)/∂q, Wᵀ ∂f/∂q̇]` (each `DOF × NQ`) for `DOF` weight columns `W`
    /// (`NQ × DOF`): [`Self::dynamics_vjp_q`] and [`Self::forces_vjp_qd`], which the step's
    /// Jacobian takes with the same `W` (the basis). Generated models compute them from one
    /// body; the default calls the two.
    fn dynamics_reductions(
        q: &SVector<f64, NQ>,
        qd: &SVector<f64, NQ>,
        p: &Self::Params,
        t: f64,
        b: &SVector<f64, NQ>,
        w: &SMatrix<f64, NQ, DOF>,
    ) -> [SMatrix<f64, DOF, NQ>; 2] {
        [
            Self::dynamics_vjp_q(q, qd, p, t, b, w),
            Self::forces_vjp_qd(q, qd, p, t, w),
        ]
    }
    /// `([Wᵀ ∂(f − M(q) b)/∂q, Wᵀ ∂f/∂q̇], Wᵀ ∂(f − M(q) b)/∂p)`: [`Self::dynamics_reductions`]
    /// and [`Self::dynamics_vjp_p`] (the same `b` and `W`) from one body in generated models;
    /// the default calls the two.
    #[allow(clippy::type_complexity)]
    fn dynamics_reductions_p(
        q: &SVector<f64, NQ>,
        qd: &SVector<f64, NQ>,
        p: &Self::Params,
        t: f64,
        b: &SVector<f64, NQ>,
        w: &SMatrix<f64, NQ, DOF>,
    ) -> ([SMatrix<f64, DOF, NQ>; 2], SMatrix<f64, DOF, NP>) {
        (
            Self::dynamics_reductions(q, qd, p, t, b, w),
            Self::dynamics_vjp_p(q, qd, p, t, b, w),
        )
    }
    /// Row `j`: `(∂²(wᵀγ)/∂q̇² B_j)ᵀ` (`DOF × NQ`) for `DOF` columns `B` and one weight row
    /// `w`. For time-independent constraints (`γ` quadratic in `q̇`, the only ones
    /// [`step_jacobians_symbolic`](crate::step::step_jacobians_symbolic) composes) row `j` is
    /// `wᵀ ∂γ/∂q̇` taken at `q̇ = B_j`, which the default computes with `DOF` calls of
    /// [`Self::gamma_jacobian_qd`].
    fn gamma_hessian_qd(
        q: &SVector<f64, NQ>,
        qd: &SVector<f64, NQ>,
        p: &Self::Params,
        t: f64,
        b: &SMatrix<f64, NQ, DOF>,
        w: &SVector<f64, NC>,
    ) -> SMatrix<f64, DOF, NQ> {
        let _ = qd;
        let mut out = SMatrix::<f64, DOF, NQ>::zeros();
        for j in 0..DOF {
            let m = Self::gamma_jacobian_qd(q, &b.column(j).into_owned(), p, t);
            out.set_row(j, &w.tr_mul(&m));
        }
        out
    }
    /// `−S ∂C/∂p` (`NQ × NP`): how the assembled configuration moves with the parameters
    /// when the independent coordinates are held, `S` the [dependent solve
    /// matrix](Self::dependent_solve_matrix). Generated models compute the product
    /// symbolically (only its structural terms); the default multiplies the matrices.
    fn dependent_jacobian_p(
        q: &SVector<f64, NQ>,
        p: &Self::Params,
        t: f64,
    ) -> SMatrix<f64, NQ, NP> {
        -(Self::dependent_solve_matrix(q, p, t) * Self::residual_jacobian_p(q, p, t))
    }
    /// [`Self::dependent_solve_matrix`] written into `out`. Generated models write only the
    /// structurally nonzero entries and leave the others as they are (zero `out` once and
    /// reuse it for this model: what the step's Jacobians do); the default writes every entry.
    fn dependent_solve_matrix_into(
        q: &SVector<f64, NQ>,
        p: &Self::Params,
        t: f64,
        out: &mut SMatrix<f64, NQ, NC>,
    ) {
        *out = Self::dependent_solve_matrix(q, p, t);
    }
    /// [`Self::gamma_jacobian_qd`] written into `out` (structural nonzeros only in generated
    /// models, as [`Self::dependent_solve_matrix_into`]).
    fn gamma_jacobian_qd_into(
        q: &SVector<f64, NQ>,
        qd: &SVector<f64, NQ>,
        p: &Self::Params,
        t: f64,
        out: &mut SMatrix<f64, NC, NQ>,
    ) {
        *out = Self::gamma_jacobian_qd(q, qd, p, t);
    }
    /// [`Self::jacobian_times_jacobian_p`] written into `out` (structural nonzeros only in
    /// generated models, as [`Self::dependent_solve_matrix_into`]).
    fn jacobian_times_jacobian_p_into(
        q: &SVector<f64, NQ>,
        p: &Self::Params,
        t: f64,
        b: &SVector<f64, NQ>,
        out: &mut SMatrix<f64, NC, NP>,
    ) {
        *out = Self::jacobian_times_jacobian_p(q, p, t, b);
    }
    /// [`Self::gamma_reductions`] written into `out` and, when `out_p` is given,
    /// [`Self::gamma_reductions_p`]'s parameter block into it, from one body (structural
    /// nonzeros only in generated models, as [`Self::dependent_solve_matrix_into`]).
    #[allow(clippy::too_many_arguments)]
    fn gamma_reductions_into(
        q: &SVector<f64, NQ>,
        qd: &SVector<f64, NQ>,
        p: &Self::Params,
        t: f64,
        b: &SVector<f64, NQ>,
        w: &SMatrix<f64, NC, DOF>,
        out: &mut [SMatrix<f64, DOF, NQ>; 3],
        out_p: Option<&mut SMatrix<f64, DOF, NP>>,
    ) {
        match out_p {
            Some(out_p) => (*out, *out_p) = Self::gamma_reductions_p(q, qd, p, t, b, w),
            None => *out = Self::gamma_reductions(q, qd, p, t, b, w),
        }
    }
    /// [`Self::dynamics_reductions`] written into `out` and, when `out_p` is given,
    /// [`Self::dynamics_reductions_p`]'s parameter block into it, from one body (structural
    /// nonzeros only in generated models, as [`Self::dependent_solve_matrix_into`]).
    #[allow(clippy::too_many_arguments)]
    fn dynamics_reductions_into(
        q: &SVector<f64, NQ>,
        qd: &SVector<f64, NQ>,
        p: &Self::Params,
        t: f64,
        b: &SVector<f64, NQ>,
        w: &SMatrix<f64, NQ, DOF>,
        out: &mut [SMatrix<f64, DOF, NQ>; 2],
        out_p: Option<&mut SMatrix<f64, DOF, NP>>,
    ) {
        match out_p {
            Some(out_p) => (*out, *out_p) = Self::dynamics_reductions_p(q, qd, p, t, b, w),
            None => *out = Self::dynamics_reductions(q, qd, p, t, b, w),
        }
    }
}
