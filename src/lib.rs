//! # mechgen
//!
//! Code generation for constrained mechanisms. Describe a mechanism — coordinates,
//! parameters and constraint equations — in a [`mechanism!`] block or a `.mech` file
//! read by a build script (with the build-time crate `mechgen-build`); mechgen
//! differentiates it symbolically, picks LU pivots statically by numeric probing, runs the
//! LU symbolically and emits straight-line Rust for the residual, the Jacobian, a
//! null-space basis and a dependent solve. The generated module implements
//! [`runtime::Mechanism`], so the runtime's assembly, projection and simulation routines
//! work on it.
//!
//! This is the run-time crate: the [`runtime`], the [`nalgebra`] it uses, and (default
//! feature `macros`) the [`mechanism!`] macro. Crates that generate in build.rs depend on
//! it with `default-features = false`, which leaves out the engine, syn and prettyplease.
//! Generated code refers to this crate as `::mechgen`; under another name
//! (`my_mechgen = { package = "mechgen", ... }`) write `#![crate = "::my_mechgen"]` first
//! in the macro (or call `mechgen_build::Builder::crate_path`).
//!
//! The [`guide`] (features `macros` and `std`) is the user's guide in chapters — the
//! language, the generated API, simulation, contact, differentiable simulation, `no_std`,
//! build.rs and the command line, troubleshooting, limitations — with examples that run.
//!
//! ```
//! mechgen::mechanism! {
//!     /// Planar slider crank.
//!     pub mod slider_crank {
//!         param l1 = 0.1;
//!         param l2 = 0.3;
//!         coord theta = 0.3;
//!         coord beta = 1.4721;
//!         coord s = 0.3941;
//!         let crank = vec2(l1 * cos(theta), l1 * sin(theta));
//!         let rod = vec2(l2 * sin(beta), -l2 * cos(beta));
//!         constraint crank + rod == vec2(s, 0.0);
//!     }
//! }
//! use mechgen::nalgebra::SVector;
//! let p = slider_crank::Params::default();
//! let q = SVector::from(slider_crank::NOMINAL_Q);
//! let (d, health) = slider_crank::null_space(&q, &p, 0.0);
//! let j = slider_crank::jacobian(&q, &p, 0.0);
//! assert!((j * d).norm() < 1e-12);
//! assert!(health > 0.0);
//! ```

// Without `std` (and with `libm`): generated functions and the traits they implement only.
#![cfg_attr(not(feature = "std"), no_std)]

#[cfg(feature = "macros")]
pub use mechgen_macros::mechanism;

#[cfg(all(feature = "macros", feature = "std"))]
pub mod guide;
pub use mechgen_runtime as runtime;
pub use mechgen_runtime::nalgebra;

// The README's Rust blocks, compiled and run as doctests (`cargo test -p mechgen --doc`).
#[cfg(all(doctest, feature = "macros", feature = "std"))]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
