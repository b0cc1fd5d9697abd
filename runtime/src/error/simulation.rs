//! The error of a simulation: [`SimError`], with its conversions from the solvers' errors.

use super::*;

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
