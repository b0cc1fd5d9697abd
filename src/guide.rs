//! The mechgen guide: chapters to read in order, every example a doctest that compiles and
//! runs (`cargo test -p mechgen --doc`).
//!
//! 1. [The language](language): every item, built-in function and joint, with the
//!    conventions of the equations of motion.
//! 2. [The generated API](generated): what a module holds, the health figure, charts, the
//!    generic family and the derivatives.
//! 3. [Simulation](simulation): [`runtime::simulate`](crate::runtime::simulate()), its
//!    routes and options, assembly, inputs and controllers.
//! 4. [Contact](contact): inequality constraints and impacts.
//! 5. [Differentiable simulation](differentiable): one step and its Jacobians, adjoint
//!    gradients through a rollout.
//! 6. [Embedded and `no_std`](embedded): `f32`, `no_std`, allocation-free calls.
//! 7. [build.rs and the command line](build_and_cli): generating from `.mech` files.
//! 8. [Troubleshooting](troubleshooting): the notes and errors you meet, and what they mean.
//! 9. [Limitations](limitations): what does not work yet.
//!
//! The examples use the [`mechanism!`](crate::mechanism) macro (feature `macros`, on by
//! default); a `.mech` file read by a build script holds the same text.

#[doc = include_str!("../docs/guide/01-language.md")]
pub mod language {}

#[doc = include_str!("../docs/guide/02-generated.md")]
pub mod generated {}

#[doc = include_str!("../docs/guide/03-simulation.md")]
pub mod simulation {}

#[doc = include_str!("../docs/guide/04-contact.md")]
pub mod contact {}

#[doc = include_str!("../docs/guide/05-differentiable.md")]
pub mod differentiable {}

#[doc = include_str!("../docs/guide/06-embedded.md")]
pub mod embedded {}

#[doc = include_str!("../docs/guide/07-build-and-cli.md")]
pub mod build_and_cli {}

#[doc = include_str!("../docs/guide/08-troubleshooting.md")]
pub mod troubleshooting {}

#[doc = include_str!("../docs/guide/09-limitations.md")]
pub mod limitations {}
