//! Error types of the runtime solvers.
//!
//! Every fallible routine returns one of these enums; none of them panics on bad input,
//! and non-finite values are always reported instead of being passed on.

use std::fmt;

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
        /// Smallest relative pivot of the generated (static) LU.
        static_pivot: f64,
        /// Health `σ_min / σ_max` (or `min |U_kk| / max |U_kk|`) of the dependent columns.
        health: f64,
    },
    /// The model's constants are inconsistent (e.g. `INDEPENDENT` out of range).
    InvalidModel(&'static str),
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
            } => write!(
                f,
                "the independent coordinates do not parametrise the mechanism at t = {t}: \
                 static relative pivot {static_pivot:.3e}, dependent-column health {health:.3e}"
            ),
            KinematicsError::InvalidModel(why) => write!(f, "invalid model: {why}"),
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
    },
    /// Newton did not reach the tolerance (iteration limit, or no further decrease).
    NotConverged {
        /// Newton iterations performed.
        iterations: usize,
        /// Euclidean norm of the residual at the last iterate.
        residual_norm: f64,
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
            } => write!(
                f,
                "assembly failed: singular Jacobian of the dependent coordinates \
                 (rcond {rcond:.3e}) after {iterations} iterations, |C| = {residual_norm:.3e}"
            ),
            AssemblyError::NotConverged {
                iterations,
                residual_norm,
            } => write!(
                f,
                "assembly did not converge in {iterations} iterations, |C| = {residual_norm:.3e}"
            ),
        }
    }
}

impl std::error::Error for AssemblyError {}

/// Failure of a dynamics right-hand side (projection method or Lagrange multipliers).
#[derive(Debug, Clone, PartialEq)]
pub enum DynamicsError {
    /// Unusable options (e.g. a non-positive Baumgarte time constant).
    InvalidOptions(&'static str),
    /// The null-space basis or a dependent solve failed.
    Kinematics(KinematicsError),
    /// The reduced mass matrix `Dᵀ M D` is not (numerically) positive definite.
    SingularReducedMass {
        /// Time of the evaluation.
        t: f64,
        /// Coordinates.
        q: Vec<f64>,
        /// Independent velocities.
        u: Vec<f64>,
    },
    /// The augmented matrix `[M −C_Jᵀ; C_J 0]` (or `C_Jᵀ` for multipliers) is singular.
    SingularAugmented {
        /// Time of the evaluation.
        t: f64,
        /// Coordinates.
        q: Vec<f64>,
        /// Velocities.
        qd: Vec<f64>,
    },
    /// A generated function produced a NaN or infinite value.
    NonFinite {
        /// Which quantity was not finite.
        what: &'static str,
        /// Time of the evaluation.
        t: f64,
    },
}

impl fmt::Display for DynamicsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DynamicsError::InvalidOptions(why) => write!(f, "invalid dynamics options: {why}"),
            DynamicsError::Kinematics(e) => write!(f, "{e}"),
            DynamicsError::SingularReducedMass { t, q, u } => write!(
                f,
                "reduced mass matrix DᵀMD is singular at t = {t}, q = {q:?}, u = {u:?}"
            ),
            DynamicsError::SingularAugmented { t, q, qd } => write!(
                f,
                "augmented Lagrange matrix [M -C_Jᵀ; C_J 0] is singular at t = {t}, q = {q:?}, qd = {qd:?}"
            ),
            DynamicsError::NonFinite { what, t } => {
                write!(f, "non-finite {what} at t = {t}")
            }
        }
    }
}

impl std::error::Error for DynamicsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            DynamicsError::Kinematics(e) => Some(e),
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
    /// The right-hand side or the post-step projection failed.
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
            OdeError::System { t, source } => write!(f, "at t = {t}: {source}"),
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

/// Failure of a simulation ([`crate::simulate`]).
#[derive(Debug, Clone, PartialEq)]
pub enum SimError {
    /// Unusable input (time span, output times, options).
    InvalidInput(&'static str),
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
    /// Between two accepted steps the determinant of the dependent Jacobian columns
    /// changed sign: the trajectory crossed a configuration where the independent
    /// coordinates do not parametrise the mechanism (a toggle, or a pendulum in Cartesian
    /// coordinates passing the horizontal with `x` independent). Results past it would be
    /// unreliable; the runtime does not re-partition the coordinates.
    PartitionCrossed {
        /// Last time with the old sign.
        t_prev: f64,
        /// First time with the new sign.
        t: f64,
    },
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::InvalidInput(why) => write!(f, "invalid simulation input: {why}"),
            SimError::Assembly { t, source } => write!(f, "projection at t = {t} failed: {source}"),
            SimError::Kinematics(e) => write!(f, "{e}"),
            SimError::Dynamics(e) => write!(f, "{e}"),
            SimError::Integration(e) => write!(f, "{e}"),
            SimError::PartitionCrossed { t_prev, t } => write!(
                f,
                "between t = {t_prev} and t = {t} the trajectory crossed a configuration where \
                 the independent coordinates do not parametrise the mechanism"
            ),
        }
    }
}

impl std::error::Error for SimError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SimError::Assembly { source, .. } => Some(source),
            SimError::Kinematics(e) => Some(e),
            SimError::Dynamics(e) => Some(e),
            SimError::Integration(e) => Some(e),
            SimError::InvalidInput(_) | SimError::PartitionCrossed { .. } => None,
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
