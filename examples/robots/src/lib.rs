//! Robots imported from their published URDF files by `mechgen_codegen::import::urdf` in
//! `build.rs`, and generated like any mechanism: the Universal Robots UR5 ([`ur5`], 6
//! joints) and the Franka Emika Panda ([`panda`], 7 arm joints and 2 finger joints) on a
//! fixed base; the quadruped Solo-12 ([`solo`], 12 joints) and the humanoid Romeo
//! ([`romeo`], `romeo_small.urdf`, 31 joints) on a floating base (position and unit
//! quaternion of the root link: 18 and 37 degrees of freedom); all from example-robot-data
//! 6.0.0 (`models/`, with their licences).
//!
//! `tests/pinocchio.rs` checks their mass matrices, forces and forward dynamics against
//! Pinocchio's `crba`, `nonLinearEffects` and `aba` at 100 random states each (reference
//! values in `data/`, written by `reference.py`).

use mechgen::nalgebra::{SMatrix, SVector};

include!(concat!(env!("OUT_DIR"), "/ur5.rs"));
include!(concat!(env!("OUT_DIR"), "/panda.rs"));
include!(concat!(env!("OUT_DIR"), "/solo.rs"));
include!(concat!(env!("OUT_DIR"), "/romeo.rs"));

/// Models imported from MJCF files (`mjcf/`, written for the tests) by
/// `mechgen_codegen::import::mjcf`, checked against MuJoCo in `tests/mujoco.rs`.
pub mod mjcf {
    include!(concat!(env!("OUT_DIR"), "/chain.rs"));
    include!(concat!(env!("OUT_DIR"), "/radian.rs"));
    include!(concat!(env!("OUT_DIR"), "/four_bar.rs"));
    include!(concat!(env!("OUT_DIR"), "/welded_arm.rs"));
    include!(concat!(env!("OUT_DIR"), "/ball_free.rs"));
    // Agility Cassie (MuJoCo Menagerie, `models/agility_cassie`), with the feature `cassie`.
    #[cfg(feature = "cassie")]
    include!(concat!(env!("OUT_DIR"), "/cassie.rs"));
}

/// Forward dynamics of a tree: `q̈ = M(q)⁻¹ (f(q, q̇) + τ)` by a Cholesky factorisation of
/// the mass matrix `m`, with the generalised forces `f` (gravity, velocity terms, damping)
/// and the joint torques `tau`; `None` when `m` is not positive definite.
pub fn forward_dynamics<const N: usize>(
    m: SMatrix<f64, N, N>,
    f: &SVector<f64, N>,
    tau: &SVector<f64, N>,
) -> Option<SVector<f64, N>> {
    m.cholesky().map(|c| c.solve(&(f + tau)))
}
