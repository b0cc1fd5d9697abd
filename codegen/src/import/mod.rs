//! Importers: robot descriptions in other formats turned into `.mech` text a user can
//! read, edit and extend, which then goes through the normal pipeline.
//!
//! - [`urdf`]: URDF (fixed-base kinematic trees).
//! - [`mjcf`]: MJCF, MuJoCo's format (body trees with hinge and slide joints; equality
//!   constraints as exact closed loops).

pub mod mjcf;
pub mod urdf;
