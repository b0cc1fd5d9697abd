//! Error types of the runtime solvers.
//!
//! Every fallible routine returns one of these enums; none of them panics on bad input,
//! and non-finite values are always reported instead of being passed on.

use std::fmt;

/// One entry of a vector named in an error message: its index, the coordinate name where
/// the vector is indexed by coordinates (`None` for constraint equations), and its value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Located {
    /// Index in the vector (coordinate or equation number).
    pub index: usize,
    /// Coordinate name ([`crate::Mechanism::COORD_NAMES`]), `None` for equations.
    pub name: Option<&'static str>,
    /// The value (a residual, a force, a component of a direction, …).
    pub value: f64,
}

impl fmt::Display for Located {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name {
            Some(n) => write!(f, "{n} (#{}) = {:.3e}", self.index, self.value),
            None => write!(f, "equation {} = {:.3e}", self.index, self.value),
        }
    }
}

/// Writes `a, b, c` (or `none`).
fn list(f: &mut fmt::Formatter<'_>, items: &[Located]) -> fmt::Result {
    if items.is_empty() {
        return write!(f, "none");
    }
    for (k, it) in items.iter().enumerate() {
        if k > 0 {
            write!(f, ", ")?;
        }
        write!(f, "{it}")?;
    }
    Ok(())
}

/// How many entries an error message names at most.
pub const NAMED_ENTRIES: usize = 3;

/// The non-finite entries of `v` (at most three of them), named by `names`
/// when it has one name per entry.
pub(crate) fn non_finite_entries(v: &[f64], names: &[&'static str]) -> Vec<Located> {
    v.iter()
        .enumerate()
        .filter(|(_, x)| !x.is_finite())
        .take(NAMED_ENTRIES)
        .map(|(i, &x)| Located {
            index: i,
            name: (names.len() == v.len()).then(|| names[i]),
            value: x,
        })
        .collect()
}

/// The entries of `v` of largest magnitude (NaN first; at most three, zeros
/// left out), named by `names` when it has one name per entry.
pub(crate) fn largest_entries(v: &[f64], names: &[&'static str]) -> Vec<Located> {
    let mut idx: Vec<usize> = (0..v.len()).filter(|&i| v[i] != 0.0).collect();
    let key = |x: f64| if x.is_nan() { f64::INFINITY } else { x.abs() };
    idx.sort_by(|&a, &b| key(v[b]).total_cmp(&key(v[a])).then(a.cmp(&b)));
    idx.truncate(NAMED_ENTRIES);
    idx.into_iter()
        .map(|i| Located {
            index: i,
            name: (names.len() == v.len()).then(|| names[i]),
            value: v[i],
        })
        .collect()
}

/// Failure of a kinematic computation: null-space basis, dependent solve, velocity
/// projection.
#[derive(Debug, Clone, PartialEq)]
pub enum KinematicsError {
    /// A generated function (or the input) produced a NaN or infinite value.
    NonFinite {
        /// Which quantity was not finite (`"jacobian"`, `"q"`, …).
        what: &'static str,
        /// Time of the evaluation.
        t: f64,
    },
    /// The independent coordinates do not parametrise the mechanism here: the Jacobian
    /// restricted to the dependent coordinates is (numerically) singular, so neither the
    /// static LU nor the numeric LU of the dependent columns can be used.
    SingularPartition {
        /// Time of the evaluation.
        t: f64,
        /// Smallest relative pivot of the generated (static) LU; NaN for a chart served by a
        /// numeric factorisation (no static LU).
        static_pivot: f64,
        /// Health `σ_min / σ_max` (or `min |U_kk| / max |U_kk|`) of the dependent columns.
        health: f64,
    },
    /// The model's constants are inconsistent (e.g. `INDEPENDENT` out of range).
    InvalidModel(&'static str),
    /// Unusable options (a pivot threshold that is NaN or outside `[0, 1]`).
    InvalidOptions(&'static str),
    /// A numeric decomposition failed (SVD did not converge, LU rank too low).
    DecompositionFailed {
        /// Which decomposition failed.
        what: &'static str,
    },
}

impl fmt::Display for KinematicsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KinematicsError::NonFinite { what, t } => {
                write!(f, "non-finite value in {what} at t = {t}")
            }
            KinematicsError::SingularPartition {
                t,
                static_pivot,
                health,
            } if static_pivot.is_nan() => write!(
                // A chart served by a numeric factorisation has no static pivot (NaN marks
                // it): say so instead of printing a NaN that looks like a computed pivot.
                f,
                "the independent coordinates do not parametrise the mechanism at t = {t}: \
                 no static pivot (numeric chart), dependent-column health {health:.3e}"
            ),
            KinematicsError::SingularPartition {
                t,
                static_pivot,
                health,
            } => write!(
                f,
                "the independent coordinates do not parametrise the mechanism at t = {t}: \
                 static relative pivot {static_pivot:.3e}, dependent-column health {health:.3e}"
            ),
            KinematicsError::InvalidModel(why) => write!(f, "invalid model: {why}"),
            KinematicsError::InvalidOptions(why) => write!(f, "invalid options: {why}"),
            KinematicsError::DecompositionFailed { what } => {
                write!(f, "numeric decomposition failed: {what}")
            }
        }
    }
}

impl std::error::Error for KinematicsError {}

/// Failure of Newton assembly ([`crate::assemble::assemble`]).
#[derive(Debug, Clone, PartialEq)]
pub enum AssemblyError {
    /// The options are unusable (non-positive or non-finite tolerance, zero iterations).
    InvalidOptions(&'static str),
    /// The model's constants are inconsistent (e.g. `INDEPENDENT` out of range).
    InvalidModel(&'static str),
    /// The input or a generated function produced a NaN or infinite value.
    NonFinite {
        /// Which quantity was not finite.
        what: &'static str,
        /// Newton iteration at which it was found.
        iteration: usize,
    },
    /// The Jacobian restricted to the dependent coordinates is singular and the residual
    /// cannot be reduced further.
    SingularJacobian {
        /// Newton iterations performed.
        iterations: usize,
        /// Euclidean norm of the residual at the last iterate.
        residual_norm: f64,
        /// Reciprocal condition `σ_min / σ_max` of the dependent columns.
        rcond: f64,
        /// The equations with the largest `|C|` at the last iterate (at most
        /// three).
        worst: Vec<Located>,
        /// The last iterate.
        q: Vec<f64>,
    },
    /// The requested independent coordinates are unreachable: with them held fixed, the
    /// least-squares point of `‖C‖` over the dependent coordinates leaves a residual above
    /// the tolerance (a four-bar's rocker beyond its toggle, a Cartesian pendulum with
    /// `|x| > l`).
    Unreachable {
        /// The independent coordinates held fixed, with their requested values.
        independent: Vec<Located>,
        /// `‖C‖` (Euclidean) at the least-squares point.
        residual_norm: f64,
        /// The equations with the largest `|C|` there (at most three).
        worst: Vec<Located>,
        /// The least-squares point.
        q: Vec<f64>,
    },
    /// Newton did not reach the tolerance (iteration limit, or no further decrease).
    NotConverged {
        /// Newton iterations performed.
        iterations: usize,
        /// Euclidean norm of the residual at the last iterate.
        residual_norm: f64,
        /// The equations with the largest `|C|` at the last iterate (at most
        /// three).
        worst: Vec<Located>,
        /// The last iterate.
        q: Vec<f64>,
    },
}

impl fmt::Display for AssemblyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AssemblyError::InvalidOptions(why) => write!(f, "invalid assembly options: {why}"),
            AssemblyError::InvalidModel(why) => write!(f, "invalid model: {why}"),
            AssemblyError::NonFinite { what, iteration } => {
                write!(f, "non-finite {what} in assembly iteration {iteration}")
            }
            AssemblyError::SingularJacobian {
                iterations,
                residual_norm,
                rcond,
                worst,
                ..
            } => {
                write!(
                    f,
                    "assembly failed: singular Jacobian of the dependent coordinates \
                     (rcond {rcond:.3e}) after {iterations} iterations, |C| = {residual_norm:.3e}; \
                     largest residuals: "
                )?;
                list(f, worst)
            }
            AssemblyError::Unreachable {
                independent,
                residual_norm,
                worst,
                ..
            } => {
                write!(f, "the requested independent coordinates ")?;
                list(f, independent)?;
                write!(
                    f,
                    " are unreachable: the closest configuration leaves |C| = {residual_norm:.3e}; \
                     largest residuals: "
                )?;
                list(f, worst)
            }
            AssemblyError::NotConverged {
                iterations,
                residual_norm,
                worst,
                ..
            } => {
                write!(
                    f,
                    "assembly did not converge in {iterations} iterations, |C| = {residual_norm:.3e}; \
                     largest residuals: "
                )?;
                list(f, worst)
            }
        }
    }
}

impl std::error::Error for AssemblyError {}

/// Failure of a dynamics right-hand side (projection method or Lagrange multipliers).
///
/// The messages name at most three coordinates; the full state is kept in the
/// fields.
#[derive(Debug, Clone, PartialEq)]
pub enum DynamicsError {
    /// Unusable options (e.g. a non-positive Baumgarte time constant).
    InvalidOptions(&'static str),
    /// The null-space basis or a dependent solve failed (displayed as the kinematic error
    /// itself: this variant is transparent, [`std::error::Error::source`] gives the
    /// kinematic error's own cause).
    Kinematics(KinematicsError),
    /// The reduced mass matrix `Dᵀ M D` (projection method) or `Nᵀ M N` (Lagrange
    /// multipliers, `N` an orthonormal basis of the null space of `C_J`) is singular: some
    /// motion allowed by the constraints has no inertia.
    SingularReducedMass {
        /// Time of the evaluation.
        t: f64,
        /// Coordinates.
        q: Vec<f64>,
        /// Velocities: independent velocities `u` (projection method) or `q̇` (Lagrange).
        u: Vec<f64>,
        /// The largest components of the inertia-free motion `D w` (unit length).
        direction: Vec<Located>,
    },
    /// The augmented matrix `[M −C_Jᵀ; C_J 0]` is singular although `M` is positive
    /// definite on the null space of `C_J` (kept for callers that match on it; the
    /// Lagrange route reports rank loss of `C_J` by solving on its row space instead).
    SingularAugmented {
        /// Time of the evaluation.
        t: f64,
        /// Coordinates.
        q: Vec<f64>,
        /// Velocities.
        qd: Vec<f64>,
        /// The largest components of the inertia-free motion (unit length).
        direction: Vec<Located>,
    },
    /// The mass matrix is not positive definite on the motions the constraints allow: the
    /// reduced mass (`Dᵀ M D` or `Nᵀ M N`) has a negative (or NaN) eigenvalue — a negative
    /// mass or inertia.
    IndefiniteMass {
        /// Time of the evaluation.
        t: f64,
        /// Which reduced matrix was tested: `"DᵀMD"` or `"NᵀMN"`.
        matrix: &'static str,
        /// Its smallest eigenvalue.
        min_eigenvalue: f64,
        /// Its largest eigenvalue.
        max_eigenvalue: f64,
        /// The largest components of the motion with negative inertia (unit length).
        direction: Vec<Located>,
        /// Coordinates.
        q: Vec<f64>,
    },
    /// A generated function or the solve produced a NaN or infinite value.
    NonFinite {
        /// Which quantity was not finite (`"forces"`, `"accelerations"`, …).
        what: &'static str,
        /// Time of the evaluation.
        t: f64,
        /// The first non-finite entries (at most three).
        entries: Vec<Located>,
    },
}

impl fmt::Display for DynamicsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DynamicsError::InvalidOptions(why) => write!(f, "invalid dynamics options: {why}"),
            DynamicsError::Kinematics(e) => fmt::Display::fmt(e, f),
            DynamicsError::SingularReducedMass { t, direction, .. } => {
                write!(
                    f,
                    "reduced mass matrix DᵀMD is singular at t = {t}: a motion allowed by the \
                     constraints has no inertia, largest components "
                )?;
                list(f, direction)
            }
            DynamicsError::SingularAugmented { t, direction, .. } => {
                write!(
                    f,
                    "augmented Lagrange matrix [M -C_Jᵀ; C_J 0] is singular at t = {t}, \
                     largest components of the singular direction "
                )?;
                list(f, direction)
            }
            DynamicsError::IndefiniteMass {
                t,
                matrix,
                min_eigenvalue,
                max_eigenvalue,
                direction,
                ..
            } => {
                write!(
                    f,
                    "mass matrix is not positive definite on the constrained motions at t = {t}: \
                     {matrix} has eigenvalues in [{min_eigenvalue:.3e}, {max_eigenvalue:.3e}] \
                     (negative mass or inertia?), largest components of the offending motion "
                )?;
                list(f, direction)
            }
            DynamicsError::NonFinite { what, t, entries } => {
                write!(f, "non-finite {what} at t = {t}")?;
                if !entries.is_empty() {
                    write!(f, ": ")?;
                    list(f, entries)?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for DynamicsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            // Transparent: the kinematic error's text is this error's text.
            DynamicsError::Kinematics(e) => std::error::Error::source(e),
            _ => None,
        }
    }
}

impl From<KinematicsError> for DynamicsError {
    fn from(e: KinematicsError) -> Self {
        DynamicsError::Kinematics(e)
    }
}

/// Failure of an ODE integration ([`crate::ode`]); `E` is the error type of the system.
#[derive(Debug, Clone, PartialEq)]
pub enum OdeError<E> {
    /// The options or the time span are unusable.
    InvalidOptions(&'static str),
    /// The step size fell below the smallest step the time resolution allows.
    StepSizeUnderflow {
        /// Time at which the integration stopped.
        t: f64,
        /// The step size that was too small.
        h: f64,
    },
    /// The maximum number of steps was reached before the end time.
    MaxSteps {
        /// Time at which the integration stopped.
        t: f64,
        /// Steps taken (accepted + rejected).
        steps: usize,
    },
    /// The state became NaN or infinite with a step that cannot be reduced (fixed-step
    /// methods) or at the initial point.
    NonFinite {
        /// Time at which it was detected.
        t: f64,
    },
    /// The right-hand side or the post-step projection failed (the message says when;
    /// [`std::error::Error::source`] gives the system's error).
    System {
        /// Time of the failing evaluation.
        t: f64,
        /// The system's error.
        source: E,
    },
}

impl<E: fmt::Display> fmt::Display for OdeError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OdeError::InvalidOptions(why) => write!(f, "invalid integrator options: {why}"),
            OdeError::StepSizeUnderflow { t, h } => {
                write!(f, "step size underflow at t = {t} (h = {h:.3e})")
            }
            OdeError::MaxSteps { t, steps } => {
                write!(f, "maximum number of steps ({steps}) reached at t = {t}")
            }
            OdeError::NonFinite { t } => write!(f, "non-finite state at t = {t}"),
            // The cause is returned by `source()`, not repeated here.
            OdeError::System { t, .. } => write!(f, "the system failed at t = {t}"),
        }
    }
}

impl<E: std::error::Error + 'static> std::error::Error for OdeError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            OdeError::System { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Failure of a simulation ([`crate::simulate()`]).
#[derive(Debug, Clone, PartialEq)]
pub enum SimError {
    /// Unusable input (time span, output times, options).
    InvalidInput(&'static str),
    /// The model has inequality constraints or dry friction in joints, which the smooth
    /// routes of [`crate::simulate()`] do not carry ([`crate::Dynamics::NOT_SMOOTH`]).
    NotSmooth {
        /// The runtime function that simulates the model (`contact::simulate_contact_adaptive`,
        /// `contact::simulate_friction_adaptive` or `contact::simulate_joint_friction_adaptive`).
        route: &'static str,
        /// The inequality constraints or frictional joints.
        names: &'static [&'static str],
    },
    /// Assembly of the initial configuration or a post-step projection failed.
    Assembly {
        /// Time of the failing projection.
        t: f64,
        /// The assembly error.
        source: AssemblyError,
    },
    /// A kinematic computation failed (velocity projection, null space).
    Kinematics(KinematicsError),
    /// The dynamics right-hand side failed.
    Dynamics(DynamicsError),
    /// The integrator could not continue.
    Integration(OdeError<std::convert::Infallible>),
    /// Between two projected states of the projection method, the dependent Jacobian
    /// columns `J_dep` became singular somewhere on the segment joining them: the
    /// trajectory crossed a configuration where the independent coordinates do not
    /// parametrise the mechanism (a toggle, a pendulum in Cartesian coordinates passing the
    /// horizontal with `x` independent, a chain of four-bar windows passing its flat
    /// position). Reported only with `SimOptions::partition_switching` off (with it on, the
    /// simulation switches to other independent coordinates instead). (Parity-free: `J_dep(q₀)⁻¹ J_dep(q₁)` has a real eigenvalue `≤ 0`
    /// exactly when the linear interpolant of `J_dep` is singular on the segment, however
    /// many windows flip at once.)
    PartitionCrossed {
        /// Time of the last state before the crossing.
        t_prev: f64,
        /// Time of the first state after it.
        t: f64,
    },
    /// The projection method needed new independent coordinates but no chart is healthy
    /// here: the constraints lose rank (a flat position of a parallelogram, a true
    /// singularity), where no partition parametrises the mechanism.
    NoHealthyPartition {
        /// Time of the state.
        t: f64,
        /// Health of the best chart (or the rank estimate of the row-scaled `C_J`).
        health: f64,
    },
    /// The projection method switched independent coordinates too often at one time.
    TooManySwitches {
        /// Time of the state.
        t: f64,
        /// Switches at that time.
        switches: usize,
    },
    /// An implicit step's Newton iteration ([`crate::ali3p::simulate_ali3p`]) did not meet
    /// its tolerance within the allowed iterations (a step too large for the motion, a
    /// tangent that misses stiff forces).
    NoConvergence {
        /// Time the step was heading for.
        t: f64,
        /// Which iteration failed (`"ALI3-P step"`, `"initial accelerations"`).
        what: &'static str,
        /// Iterations made.
        iterations: usize,
        /// What to change, chosen from the options in effect (never an option the run
        /// already uses): e.g. the finite-difference tangent only where the run had the
        /// mass-only one, step-size control only where the step was fixed.
        hint: &'static str,
    },
    /// The leading matrix `M + (h/2) Cᵥ + (h²/4) (C_Jᵀ α C_J + K)` of
    /// [`crate::ali3p::simulate_ali3p`] is singular (neither Cholesky nor LU factor it): the
    /// mass matrix has no inertia on a motion the constraints do not control, or vanishes.
    SingularLeadingMatrix {
        /// Time of the evaluation.
        t: f64,
    },
    /// The Lagrange route ([`crate::simulate::simulate_lagrange`]) reached a configuration
    /// where the constraint Jacobian `C_J` loses rank along the motion (below the model's
    /// generic rank `NQ − DOF`; redundant rows, a constant deficit, do not count): a
    /// bifurcation, where several branches of the motion meet (the flat position of a
    /// parallelogram). The index-1 formulation cannot tell which branch the motion follows,
    /// and measured runs leave it silently; [`crate::ali3p::simulate_ali3p`] passes such
    /// configurations, and so does this route with [`crate::simulate::RankDrop::Continue`]
    /// (by a segment of the projection method). Detected at an accepted state with `σ_r / σ_max ≤`
    /// [`crate::lagrange::RANK_DROP_RATIO`], or where the leading `r × r` block of `C_J` in
    /// the previous state's singular bases turns singular within a step (a singular value
    /// crossing zero between two accepted states).
    RankDrop {
        /// Time of the rank drop (within a step: estimated on the chord).
        t: f64,
        /// The generic rank `NQ − DOF` (capped at `NC`).
        generic_rank: usize,
        /// The rank there: the leading singular values with `σ / σ_max` above the cut.
        rank: usize,
        /// `σ_r / σ_max` at the nearest accepted state.
        ratio: f64,
    },
    /// The event-located route of a model with frictionless contacts failed
    /// ([`crate::contact::simulate_contact_adaptive`]).
    Contact(ContactError),
    /// The event-located route of a model with Coulomb friction at its contacts failed
    /// ([`crate::contact::simulate_friction_adaptive`]; e.g. the Painlevé paradox's
    /// inconsistent case).
    Friction(crate::contact::FrictionError),
    /// The event-located route of a model with dry friction in its joints failed
    /// ([`crate::contact::simulate_joint_friction_adaptive`]).
    JointFriction(crate::contact::JointFrictionError),
    /// The initial state of an unprojected simulation (`project: false`) is not on the
    /// constraint manifold: `‖C(q0)‖ > tol` or `‖C_J q̇0 + C_t‖ > tol · max(1, ‖q̇0‖)`,
    /// `tol = max(opts.assembly.tol, 1e-9)`.
    OffManifold {
        /// Initial time.
        t: f64,
        /// `‖C(q0)‖` (Euclidean).
        residual_norm: f64,
        /// `‖C_J q̇0 + C_t‖` (Euclidean).
        velocity_residual_norm: f64,
        /// The tolerance `tol` applied.
        tol: f64,
        /// The equations with the largest position (or, when positions pass, velocity)
        /// residuals (at most three).
        worst: Vec<Located>,
    },
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::InvalidInput(why) => write!(f, "invalid simulation input: {why}"),
            SimError::NotSmooth { route, names } => write!(
                f,
                "the model has inequality constraints or joint friction ({}), which the smooth \
                 routes do not carry: simulate it with Route::Auto (the event-located route) or \
                 mechgen::runtime::{route}",
                names.join(", ")
            ),
            SimError::Contact(e) => fmt::Display::fmt(e, f),
            SimError::Friction(e) => fmt::Display::fmt(e, f),
            SimError::JointFriction(e) => fmt::Display::fmt(e, f),
            // The assembly error is the source, not repeated here.
            SimError::Assembly { t, .. } => write!(f, "projection onto C = 0 at t = {t} failed"),
            // Transparent wrappers: the inner error's text, and its source.
            SimError::Kinematics(e) => fmt::Display::fmt(e, f),
            SimError::Dynamics(e) => fmt::Display::fmt(e, f),
            SimError::Integration(e) => fmt::Display::fmt(e, f),
            SimError::PartitionCrossed { t_prev, t } => write!(
                f,
                "between t = {t_prev} and t = {t} the trajectory crossed a configuration where \
                 the independent coordinates do not parametrise the mechanism"
            ),
            SimError::NoHealthyPartition { t, health } => write!(
                f,
                "no choice of independent coordinates parametrises the mechanism at t = {t} \
                 (best chart health {health:.3e}): the constraints lose rank here"
            ),
            SimError::TooManySwitches { t, switches } => write!(
                f,
                "{switches} switches of independent coordinates at t = {t}: giving up"
            ),
            SimError::NoConvergence {
                t,
                what,
                iterations,
                hint,
            } => write!(
                f,
                "{what}: Newton iteration did not converge in {iterations} iterations at \
                 t = {t} ({hint})"
            ),
            SimError::SingularLeadingMatrix { t } => write!(
                f,
                "the leading matrix M + (h/2)C + (h²/4)(C_Jᵀ α C_J + K) is singular at t = {t}: \
                 a motion the constraints do not control has no inertia"
            ),
            SimError::RankDrop {
                t,
                generic_rank,
                rank,
                ratio,
            } => write!(
                f,
                "the constraint Jacobian loses rank at t = {t:.6} (rank {rank} of {generic_rank}, \
                 σ_{generic_rank}/σ_1 = {ratio:.2e} at the nearest step): the motion passes a \
                 bifurcation, where branches of the motion meet, and the index-1 Lagrange route \
                 cannot tell which one it follows; use simulate_ali3p, which passes such \
                 configurations, or RankDrop::Continue, which steps across by the projection \
                 method on the branch of the independent coordinates"
            ),
            SimError::OffManifold {
                t,
                residual_norm,
                velocity_residual_norm,
                tol,
                worst,
            } => {
                write!(
                    f,
                    "initial state at t = {t} is off the constraint manifold and projection is \
                     off: |C| = {residual_norm:.3e}, |C_J q̇ + C_t| = {velocity_residual_norm:.3e} \
                     (tolerance {tol:.1e}); largest residuals: "
                )?;
                list(f, worst)
            }
        }
    }
}

impl std::error::Error for SimError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SimError::Assembly { source, .. } => Some(source),
            SimError::Kinematics(e) => std::error::Error::source(e),
            SimError::Dynamics(e) => std::error::Error::source(e),
            SimError::Integration(e) => std::error::Error::source(e),
            _ => None,
        }
    }
}

impl From<KinematicsError> for SimError {
    fn from(e: KinematicsError) -> Self {
        SimError::Kinematics(e)
    }
}

impl From<DynamicsError> for SimError {
    fn from(e: DynamicsError) -> Self {
        SimError::Dynamics(e)
    }
}

impl From<OdeError<SimError>> for SimError {
    fn from(e: OdeError<SimError>) -> Self {
        match e {
            OdeError::System { source, .. } => source,
            OdeError::InvalidOptions(w) => SimError::Integration(OdeError::InvalidOptions(w)),
            OdeError::StepSizeUnderflow { t, h } => {
                SimError::Integration(OdeError::StepSizeUnderflow { t, h })
            }
            OdeError::MaxSteps { t, steps } => {
                SimError::Integration(OdeError::MaxSteps { t, steps })
            }
            OdeError::NonFinite { t } => SimError::Integration(OdeError::NonFinite { t }),
        }
    }
}

/// Why a [`step`](crate::step::step) failed.
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

/// Failures of the contact solver.
#[derive(Clone, Debug, PartialEq)]
pub enum ContactError {
    /// The constrained system has no solution (rows inconsistent or the mass matrix
    /// singular on the free directions).
    Singular {
        /// Time.
        t: f64,
    },
    /// A bounded loop ended without a consistent handled set.
    NoConvergence {
        /// Time.
        t: f64,
        /// Iterations taken.
        iterations: usize,
    },
    /// More crossings than [`ContactOptions::max_events_per_step`](crate::contact::ContactOptions::max_events_per_step) in one step (a Zeno-like
    /// accumulation of impacts).
    TooManyEvents {
        /// Time of the step.
        t: f64,
    },
    /// A non-finite value in the state or the model's functions.
    NonFinite {
        /// Time.
        t: f64,
    },
    /// An option out of range.
    InvalidOptions(&'static str),
}

impl std::fmt::Display for ContactError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ContactError::Singular { t } => write!(
                f,
                "the constrained equations of motion are singular at t = {t} (inconsistent \
                 constraints, or a mass matrix singular on the free directions)"
            ),
            ContactError::NoConvergence { t, iterations } => write!(
                f,
                "the active-set solve found no consistent set of contacts at t = {t} after \
                 {iterations} iterations"
            ),
            ContactError::TooManyEvents { t } => write!(
                f,
                "too many contact events in one step at t = {t} (impacts accumulating: \
                 shorten the step or raise max_events_per_step)"
            ),
            ContactError::NonFinite { t } => {
                write!(f, "a non-finite value in the contact solve at t = {t}")
            }
            ContactError::InvalidOptions(m) => write!(f, "invalid contact options: {m}"),
        }
    }
}

impl std::error::Error for ContactError {}
