//! The errors of the one-step solver ([`StepError`]) and of the contact solver ([`ContactError`]).

use super::*;

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
