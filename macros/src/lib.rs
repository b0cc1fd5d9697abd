//! The `mechanism!` proc macro: a thin adapter over `mechgen-codegen` (which reads the
//! input's `#![…]` options, `#![crate = "::path"]` among them).
//!
//! Use it through the run-time crate, `mechgen::mechanism!` (default feature `macros`);
//! see the `mechgen` crate docs for the language and the generated API.

use proc_macro::TokenStream;

/// Generates a module of straight-line functions for each `mod` block of a mechanism
/// description: residual, Jacobian, null-space basis and dependent solve.
///
/// ```text
/// mechgen::mechanism! {
///     /// Planar slider crank.
///     pub mod slider_crank {
///         param l1 = 0.1;
///         param l2 = 0.3;
///         coord theta = 0.3;
///         coord beta = 1.4721;
///         coord s = 0.3941;
///         constraint vec2(l1 * cos(theta), l1 * sin(theta))
///             + vec2(l2 * sin(beta), -l2 * cos(beta)) == vec2(s, 0.0);
///     }
/// }
/// ```
///
/// The generated code refers to the run-time crate as `::mechgen`. When the dependency
/// has another name (`my_mechgen = { package = "mechgen", ... }`), say so first in the
/// block, beside `#![seed = N]`:
///
/// ```text
/// my_mechgen::mechanism! {
///     #![crate = "::my_mechgen"]
///     pub mod pendulum { ... }
/// }
/// ```
///
/// Mistakes in the description are compile errors at the offending tokens.
#[proc_macro]
pub fn mechanism(input: TokenStream) -> TokenStream {
    match mechgen_codegen::expand(input.into(), &mechgen_codegen::Options::default()) {
        Ok(tokens) => tokens.into(),
        Err(e) => e.to_syn().to_compile_error().into(),
    }
}
