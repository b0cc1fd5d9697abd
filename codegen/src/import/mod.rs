//! Importers: robot descriptions in other formats turned into `.mech` text a user can
//! read, edit and extend, which then goes through the normal pipeline.
//!
//! - [`urdf`]: URDF (fixed-base kinematic trees).

pub mod urdf;
