//! The dynamics part of a model: bodies, gravity, force elements, or an explicit
//! generalised mass matrix and force vector.

use proc_macro2::Span;

use crate::expr::ExprId;

/// Rotational inertia of a body.
#[derive(Clone, Debug)]
pub enum Inertia {
    /// Planar body: moment of inertia about the centre of mass (normal to the plane).
    Planar(ExprId),
    /// Spatial body: principal moments about the body axes.
    Principal([ExprId; 3]),
    /// Spatial body: full symmetric inertia tensor in body axes (row-major).
    Full([[ExprId; 3]; 3]),
}

/// Orientation of a body.
#[derive(Clone, Debug)]
pub enum Orientation {
    /// Planar: the absolute angle of the body.
    Angle(ExprId),
    /// Spatial: the rotation matrix body → world (row-major).
    Rotation([[ExprId; 3]; 3]),
}

/// A rigid body.
#[derive(Clone, Debug)]
pub struct Body {
    /// Name (for docs and errors).
    pub name: String,
    /// Mass.
    pub mass: ExprId,
    /// Rotational inertia (absent: a point mass).
    pub inertia: Option<Inertia>,
    /// Centre-of-mass position (2 or 3 entries), an expression of `q` and `t`.
    pub com: Vec<ExprId>,
    /// Orientation (absent: a point mass or a body whose rotation carries no energy).
    pub orientation: Option<Orientation>,
    /// Where it was declared.
    pub span: Span,
}

/// A linear spring–damper between two points.
#[derive(Clone, Debug)]
pub struct Spring {
    /// Name.
    pub name: String,
    /// First end point (2 or 3 entries).
    pub a: Vec<ExprId>,
    /// Second end point.
    pub b: Vec<ExprId>,
    /// Stiffness.
    pub stiffness: ExprId,
    /// Free length.
    pub length: ExprId,
    /// Damping coefficient (force per unit rate of extension).
    pub damping: ExprId,
    /// Where it was declared.
    pub span: Span,
}

/// Everything the equations of motion are built from.
#[derive(Clone, Debug, Default)]
pub struct Dynamics {
    /// Rigid bodies (their kinetic energy gives the mass matrix and the
    /// quadratic-velocity forces; their weight the gravity forces).
    pub bodies: Vec<Body>,
    /// Gravity vector (2 or 3 entries).
    pub gravity: Option<Vec<ExprId>>,
    /// Spring–dampers.
    pub springs: Vec<Spring>,
    /// Generalised forces on single coordinates: `(coordinate, force)`; expressions of q,
    /// q̇ (`Sym::Vel`), t and parameters.
    pub coord_forces: Vec<(usize, ExprId)>,
    /// Explicit mass matrix entries `(i, j, M_ij)` (`i ≤ j`; symmetric).
    pub explicit_mass: Vec<(usize, usize, ExprId)>,
    /// Explicit generalised force entries `(i, f_i)`, added to everything else.
    pub explicit_force: Vec<(usize, ExprId)>,
}

impl Dynamics {
    /// Whether the model says anything about dynamics.
    pub fn is_empty(&self) -> bool {
        self.bodies.is_empty() && self.explicit_mass.is_empty()
    }
}
