//! The generic family (`#![generic]`): the module's straight-line functions once more,
//! over any scalar `S: runtime::Real` (dual numbers for exact derivatives, `f32`, …),
//! in a `generic` submodule, with the parameters' values as an array `p: &[S; NP]` so that
//! derivatives with respect to them can be carried as well. The fused and sparse forms
//! (`kinematics`, `jacobian_values`) and the atlas dispatch are left out: the family is
//! for derivatives and batch evaluation, the `f64` functions stay the fast path.

use proc_macro2::TokenStream;
use quote::quote;

use super::expr::{idx, ScalarType};
use super::function::Emitter;
use super::items::function;
use super::table::{Entry, Shape};
use super::EmitOptions;
use crate::model::Model;

/// `pub mod generic { … }` for the table's functions, and (for models with dynamics) the
/// parent's `impl runtime::GenericDynamics for Model`.
pub(crate) fn generic_module(
    model: &Model,
    em: &Emitter<'_>,
    table: &[Entry],
    opts: &EmitOptions,
) -> crate::error::Result<TokenStream> {
    let krate = &opts.crate_path;
    let gopts = EmitOptions {
        crate_path: opts.crate_path.clone(),
        scalar: ScalarType::generic(quote!(#krate::runtime::Real)),
        comments: opts.comments,
        generic: false,
        functions: opts.functions.clone(),
        check_names: false,
    };
    let gem = Emitter {
        arena: em.arena,
        names: em.names,
        locals: em.locals,
        scalar: &gopts.scalar,
        coord_names: em.coord_names,
        sin_cos: None,
        sin_cos_pair: None,
    };
    let mut items = TokenStream::new();
    let mut names = Vec::new();
    for entry in table {
        let Entry::Function(f) = entry else { continue };
        if matches!(
            f.shape,
            Shape::Values { .. } | Shape::Kinematics { .. } | Shape::Fused { .. }
        ) || super::table::DERIVATIVE_FNS.contains(&f.name.as_str())
        {
            continue;
        }
        let (ts, _) = function(model, &gem, f, &gopts)?;
        items.extend(ts);
        names.push(f.name.clone());
    }
    let np = idx(model.params.len());
    let fields: Vec<&proc_macro2::Ident> = em.names.field.iter().collect();
    let param_names: Vec<&str> = model.params.iter().map(|p| p.name.as_str()).collect();
    let has = |n: &str| names.iter().any(|m| m == n);
    // The trait impls are for `Model`, which a module with a selection of functions lacks.
    let dynamics = if opts.scalar.ty.to_string() == "f64"
        && opts.functions.is_none()
        && has("mass_matrix")
        && has("forces")
        && has("gamma")
    {
        quote! {
            impl #krate::runtime::GenericDynamics<NQ, NC, DOF, { generic::NP }> for Model {
                #[inline]
                fn param_values(p: &Params) -> [f64; generic::NP] {
                    generic::param_values(p)
                }
                fn residual_s<S: #krate::runtime::Real>(
                    q: &SVector<S, NQ>, p: &[S; generic::NP], t: S
                ) -> SVector<S, NC> {
                    generic::residual(q, p, t)
                }
                fn jacobian_t_s<S: #krate::runtime::Real>(
                    q: &SVector<S, NQ>, p: &[S; generic::NP], t: S
                ) -> SVector<S, NC> {
                    generic::jacobian_t(q, p, t)
                }
                fn null_space_s<S: #krate::runtime::Real>(
                    q: &SVector<S, NQ>, p: &[S; generic::NP], t: S) -> (SMatrix<S, NQ, DOF>, f64
                ) {
                    generic::null_space_fixed(q, p, t)
                }
                fn solve_dependent_s<S: #krate::runtime::Real>(
                    q: &SVector<S, NQ>, p: &[S; generic::NP], t: S, b: &SVector<S, NC>
                ) -> SVector<S, NQ> {
                    generic::solve_dependent(q, p, t, b)
                }
                fn gamma_s<S: #krate::runtime::Real>(
                    q: &SVector<S, NQ>, qd: &SVector<S, NQ>, p: &[S; generic::NP], t: S
                ) -> SVector<S, NC> {
                    generic::gamma(q, qd, p, t)
                }
                fn mass_matrix_s<S: #krate::runtime::Real>(
                    q: &SVector<S, NQ>, p: &[S; generic::NP], t: S
                ) -> SMatrix<S, NQ, NQ> {
                    generic::mass_matrix(q, p, t)
                }
                fn forces_s<S: #krate::runtime::Real>(
                    q: &SVector<S, NQ>, qd: &SVector<S, NQ>, p: &[S; generic::NP], t: S
                ) -> SVector<S, NQ> {
                    generic::forces(q, qd, p, t)
                }
            }
        }
    } else {
        TokenStream::new()
    };
    let inequalities = if !dynamics.is_empty()
        && has("jacobian")
        && has("inequality")
        && has("inequality_jacobian")
        && has("inequality_jacobian_t")
        && has("inequality_gamma")
    {
        quote! {
            impl #krate::runtime::GenericInequalities<NQ, NC, DOF, NI, { generic::NP }> for Model {
                fn jacobian_s<S: #krate::runtime::Real>(
                    q: &SVector<S, NQ>, p: &[S; generic::NP], t: S
                ) -> SMatrix<S, NC, NQ> {
                    generic::jacobian(q, p, t)
                }
                fn inequality_s<S: #krate::runtime::Real>(
                    q: &SVector<S, NQ>, p: &[S; generic::NP], t: S
                ) -> SVector<S, NI> {
                    generic::inequality(q, p, t)
                }
                fn inequality_jacobian_s<S: #krate::runtime::Real>(
                    q: &SVector<S, NQ>, p: &[S; generic::NP], t: S
                ) -> SMatrix<S, NI, NQ> {
                    generic::inequality_jacobian(q, p, t)
                }
                fn inequality_jacobian_t_s<S: #krate::runtime::Real>(
                    q: &SVector<S, NQ>, p: &[S; generic::NP], t: S
                ) -> SVector<S, NI> {
                    generic::inequality_jacobian_t(q, p, t)
                }
                fn inequality_gamma_s<S: #krate::runtime::Real>(
                    q: &SVector<S, NQ>, qd: &SVector<S, NQ>, p: &[S; generic::NP], t: S
                ) -> SVector<S, NI> {
                    generic::inequality_gamma(q, qd, p, t)
                }
            }
        }
    } else {
        TokenStream::new()
    };
    let friction = if !inequalities.is_empty()
        && has("tangent_jacobian")
        && has("tangent_jacobian_t")
        && has("tangent_gamma")
    {
        quote! {
            impl #krate::runtime::GenericFriction<NQ, NC, DOF, NI, NT, { generic::NP }> for Model {
                fn tangent_jacobian_s<S: #krate::runtime::Real>(
                    q: &SVector<S, NQ>, p: &[S; generic::NP], t: S
                ) -> SMatrix<S, NT, NQ> {
                    generic::tangent_jacobian(q, p, t)
                }
                fn tangent_jacobian_t_s<S: #krate::runtime::Real>(
                    q: &SVector<S, NQ>, p: &[S; generic::NP], t: S
                ) -> SVector<S, NT> {
                    generic::tangent_jacobian_t(q, p, t)
                }
                fn tangent_gamma_s<S: #krate::runtime::Real>(
                    q: &SVector<S, NQ>, qd: &SVector<S, NQ>, p: &[S; generic::NP], t: S
                ) -> SVector<S, NT> {
                    generic::tangent_gamma(q, qd, p, t)
                }
            }
        }
    } else {
        TokenStream::new()
    };
    let joint_friction = if !dynamics.is_empty()
        && has("jacobian")
        && has("slip_jacobian")
        && has("slip_jacobian_t")
        && has("slip_gamma")
    {
        quote! {
            impl #krate::runtime::GenericJointFriction<NQ, NC, DOF, NS, { generic::NP }> for Model {
                fn jacobian_s<S: #krate::runtime::Real>(
                    q: &SVector<S, NQ>, p: &[S; generic::NP], t: S
                ) -> SMatrix<S, NC, NQ> {
                    generic::jacobian(q, p, t)
                }
                fn slip_jacobian_s<S: #krate::runtime::Real>(
                    q: &SVector<S, NQ>, p: &[S; generic::NP], t: S
                ) -> SMatrix<S, NS, NQ> {
                    generic::slip_jacobian(q, p, t)
                }
                fn slip_jacobian_t_s<S: #krate::runtime::Real>(
                    q: &SVector<S, NQ>, p: &[S; generic::NP], t: S
                ) -> SVector<S, NS> {
                    generic::slip_jacobian_t(q, p, t)
                }
                fn slip_gamma_s<S: #krate::runtime::Real>(
                    q: &SVector<S, NQ>, qd: &SVector<S, NQ>, p: &[S; generic::NP], t: S
                ) -> SVector<S, NS> {
                    generic::slip_gamma(q, qd, p, t)
                }
            }
        }
    } else {
        TokenStream::new()
    };
    let step_derivatives = if dynamics.is_empty() {
        TokenStream::new()
    } else {
        step_derivatives_impl(em.arena, table, opts)
    };
    let conv = fields
        .iter()
        .map(|f| quote!(S::from_f64(Real::value(p.#f))));
    let conv64 = fields.iter().map(|f| quote!(Real::value(p.#f)));
    Ok(quote! {
        /// The functions of this module generic over the scalar (`#![generic]`): any
        /// `S: runtime::Real` — `f64`, `f32`, or `runtime::Dual<N>` for exact first
        /// derivatives along `N` directions per call. The parameters are passed as their
        /// values `p: &[S; NP]` (see [`param_values`](generic::param_values)) so that
        /// derivatives with respect to them can be carried too. Health figures are `f64`s
        /// of the pivots' values.
        pub mod generic {
            use super::*;
            use #krate::runtime::Real;
            /// Number of parameters (the length of the `p` array the functions take).
            pub const NP: usize = #np;
            /// The parameters' names, in the order of the `p` array.
            pub const PARAM_NAMES: [&str; NP] = [#(#param_names),*];
            /// The parameters' values as the `p` array of this family's functions.
            pub fn params<S: Real>(p: &Params) -> [S; NP] {
                [#(#conv),*]
            }
            /// The parameters' values as an `f64` array (`p` of the functions for `S = f64`).
            #[inline]
            pub fn param_values(p: &Params) -> [f64; NP] {
                [#(#conv64),*]
            }
            #items
        }
        #dynamics
        #inequalities
        #friction
        #joint_friction
        #step_derivatives
    })
}

/// `impl runtime::StepDerivatives for Model` when the module has the derivatives of its
/// dynamics terms (`#![derivatives]`): the `f64` functions `step_jacobians` composes the
/// step's state Jacobian from, and whether the constraints depend on time (`jacobian_t`
/// not identically zero).
fn step_derivatives_impl(
    arena: &crate::expr::Arena,
    table: &[Entry],
    opts: &EmitOptions,
) -> TokenStream {
    let functions: Vec<&super::table::GenFn> = table
        .iter()
        .filter_map(|e| match e {
            Entry::Function(f) => Some(f),
            _ => None,
        })
        .collect();
    let has = |n: &str| functions.iter().any(|f| f.name == n);
    if !super::table::DERIVATIVE_FNS.iter().all(|n| has(n)) {
        return TokenStream::new();
    }
    let rheonomic = functions
        .iter()
        .find(|f| f.name == "jacobian_t")
        .is_none_or(|f| !f.roots.iter().all(|&r| arena.is_zero(r)));
    let krate = &opts.crate_path;
    quote! {
        impl #krate::runtime::StepDerivatives<NQ, NC, DOF, { generic::NP }> for Model {
            const RHEONOMIC: bool = #rheonomic;
            #[inline]
            fn forces_jacobian_q(
                q: &SVector<f64, NQ>, qd: &SVector<f64, NQ>, p: &Params, t: f64
            ) -> SMatrix<f64, NQ, NQ> {
                forces_jacobian_q(q, qd, p, t)
            }
            #[inline]
            fn forces_jacobian_qd(
                q: &SVector<f64, NQ>, qd: &SVector<f64, NQ>, p: &Params, t: f64
            ) -> SMatrix<f64, NQ, NQ> {
                forces_jacobian_qd(q, qd, p, t)
            }
            #[inline]
            fn mass_times_jacobian(
                q: &SVector<f64, NQ>, p: &Params, t: f64, b: &SVector<f64, NQ>
            ) -> SMatrix<f64, NQ, NQ> {
                mass_times_jacobian(q, p, t, b)
            }
            #[inline]
            fn gamma_jacobian_q(
                q: &SVector<f64, NQ>, qd: &SVector<f64, NQ>, p: &Params, t: f64
            ) -> SMatrix<f64, NC, NQ> {
                gamma_jacobian_q(q, qd, p, t)
            }
            #[inline]
            fn gamma_jacobian_qd(
                q: &SVector<f64, NQ>, qd: &SVector<f64, NQ>, p: &Params, t: f64
            ) -> SMatrix<f64, NC, NQ> {
                gamma_jacobian_qd(q, qd, p, t)
            }
            #[inline]
            fn forces_jacobian_p(
                q: &SVector<f64, NQ>, qd: &SVector<f64, NQ>, p: &Params, t: f64
            ) -> SMatrix<f64, NQ, { generic::NP }> {
                forces_jacobian_p(q, qd, p, t)
            }
            #[inline]
            fn mass_times_jacobian_p(
                q: &SVector<f64, NQ>, p: &Params, t: f64, b: &SVector<f64, NQ>
            ) -> SMatrix<f64, NQ, { generic::NP }> {
                mass_times_jacobian_p(q, p, t, b)
            }
            #[inline]
            fn gamma_jacobian_p(
                q: &SVector<f64, NQ>, qd: &SVector<f64, NQ>, p: &Params, t: f64
            ) -> SMatrix<f64, NC, { generic::NP }> {
                gamma_jacobian_p(q, qd, p, t)
            }
            #[inline]
            fn residual_jacobian_p(
                q: &SVector<f64, NQ>, p: &Params, t: f64
            ) -> SMatrix<f64, NC, { generic::NP }> {
                residual_jacobian_p(q, p, t)
            }
            #[inline]
            fn jacobian_times_jacobian_p(
                q: &SVector<f64, NQ>, p: &Params, t: f64, b: &SVector<f64, NQ>
            ) -> SMatrix<f64, NC, { generic::NP }> {
                jacobian_times_jacobian_p(q, p, t, b)
            }
            #[inline]
            fn dependent_solve_matrix(
                q: &SVector<f64, NQ>, p: &Params, t: f64
            ) -> SMatrix<f64, NQ, NC> {
                dependent_solve_matrix(q, p, t)
            }
            #[inline]
            fn dynamics_jacobian_q(
                q: &SVector<f64, NQ>, qd: &SVector<f64, NQ>, p: &Params, t: f64,
                b: &SVector<f64, NQ>
            ) -> SMatrix<f64, NQ, NQ> {
                dynamics_jacobian_q(q, qd, p, t, b)
            }
            #[inline]
            fn dynamics_jacobian_p(
                q: &SVector<f64, NQ>, qd: &SVector<f64, NQ>, p: &Params, t: f64,
                b: &SVector<f64, NQ>
            ) -> SMatrix<f64, NQ, { generic::NP }> {
                dynamics_jacobian_p(q, qd, p, t, b)
            }
            #[inline]
            fn acceleration_jacobian_p(
                q: &SVector<f64, NQ>, qd: &SVector<f64, NQ>, p: &Params, t: f64,
                b: &SVector<f64, NQ>
            ) -> SMatrix<f64, NC, { generic::NP }> {
                acceleration_jacobian_p(q, qd, p, t, b)
            }
            #[inline]
            fn dynamics_vjp_p(
                q: &SVector<f64, NQ>, qd: &SVector<f64, NQ>, p: &Params, t: f64,
                b: &SVector<f64, NQ>, w: &SMatrix<f64, NQ, DOF>
            ) -> SMatrix<f64, DOF, { generic::NP }> {
                dynamics_vjp_p(q, qd, p, t, b, w)
            }
            #[inline]
            fn acceleration_vjp_p(
                q: &SVector<f64, NQ>, qd: &SVector<f64, NQ>, p: &Params, t: f64,
                b: &SVector<f64, NQ>, w: &SMatrix<f64, NC, DOF>
            ) -> SMatrix<f64, DOF, { generic::NP }> {
                acceleration_vjp_p(q, qd, p, t, b, w)
            }
            #[inline]
            fn jacobian_vjp_p(
                q: &SVector<f64, NQ>, p: &Params, t: f64, b: &SMatrix<f64, NQ, DOF>,
                w: &SMatrix<f64, NC, DOF>
            ) -> SMatrix<f64, DOF, { generic::NP }> {
                jacobian_vjp_p(q, p, t, b, w)
            }
            #[inline]
            fn dynamics_vjp_q(
                q: &SVector<f64, NQ>, qd: &SVector<f64, NQ>, p: &Params, t: f64,
                b: &SVector<f64, NQ>, w: &SMatrix<f64, NQ, DOF>
            ) -> SMatrix<f64, DOF, NQ> {
                dynamics_vjp_q(q, qd, p, t, b, w)
            }
            #[inline]
            fn forces_vjp_qd(
                q: &SVector<f64, NQ>, qd: &SVector<f64, NQ>, p: &Params, t: f64,
                w: &SMatrix<f64, NQ, DOF>
            ) -> SMatrix<f64, DOF, NQ> {
                forces_vjp_qd(q, qd, p, t, w)
            }
            #[inline]
            fn gamma_vjp_q(
                q: &SVector<f64, NQ>, qd: &SVector<f64, NQ>, p: &Params, t: f64,
                w: &SMatrix<f64, NC, DOF>
            ) -> SMatrix<f64, DOF, NQ> {
                gamma_vjp_q(q, qd, p, t, w)
            }
            #[inline]
            fn gamma_vjp_qd(
                q: &SVector<f64, NQ>, qd: &SVector<f64, NQ>, p: &Params, t: f64,
                w: &SMatrix<f64, NC, DOF>
            ) -> SMatrix<f64, DOF, NQ> {
                gamma_vjp_qd(q, qd, p, t, w)
            }
            #[inline]
            fn gamma_hessian_qd(
                q: &SVector<f64, NQ>, qd: &SVector<f64, NQ>, p: &Params, t: f64,
                b: &SMatrix<f64, NQ, DOF>, w: &SVector<f64, NC>
            ) -> SMatrix<f64, DOF, NQ> {
                gamma_hessian_qd(q, qd, p, t, b, w)
            }
            #[inline]
            fn gamma_reductions(
                q: &SVector<f64, NQ>, qd: &SVector<f64, NQ>, p: &Params, t: f64,
                b: &SVector<f64, NQ>, w: &SMatrix<f64, NC, DOF>
            ) -> [SMatrix<f64, DOF, NQ>; 3] {
                let mut out = [SMatrix::<f64, DOF, NQ>::zeros(); 3];
                let [o0, o1, o2] = &mut out;
                gamma_reductions_into(q, qd, p, t, b, w, o0, o1, o2);
                out
            }
            #[inline]
            fn gamma_reductions_p(
                q: &SVector<f64, NQ>, qd: &SVector<f64, NQ>, p: &Params, t: f64,
                b: &SVector<f64, NQ>, w: &SMatrix<f64, NC, DOF>
            ) -> ([SMatrix<f64, DOF, NQ>; 3], SMatrix<f64, DOF, { generic::NP }>) {
                let mut out = [SMatrix::<f64, DOF, NQ>::zeros(); 3];
                let mut out_p = SMatrix::<f64, DOF, { generic::NP }>::zeros();
                let [o0, o1, o2] = &mut out;
                gamma_reductions_p_into(q, qd, p, t, b, w, o0, o1, o2, &mut out_p);
                (out, out_p)
            }
            #[inline]
            fn dynamics_reductions(
                q: &SVector<f64, NQ>, qd: &SVector<f64, NQ>, p: &Params, t: f64,
                b: &SVector<f64, NQ>, w: &SMatrix<f64, NQ, DOF>
            ) -> [SMatrix<f64, DOF, NQ>; 2] {
                let mut out = [SMatrix::<f64, DOF, NQ>::zeros(); 2];
                let [o0, o1] = &mut out;
                dynamics_reductions_into(q, qd, p, t, b, w, o0, o1);
                out
            }
            #[inline]
            fn dynamics_reductions_p(
                q: &SVector<f64, NQ>, qd: &SVector<f64, NQ>, p: &Params, t: f64,
                b: &SVector<f64, NQ>, w: &SMatrix<f64, NQ, DOF>
            ) -> ([SMatrix<f64, DOF, NQ>; 2], SMatrix<f64, DOF, { generic::NP }>) {
                let mut out = [SMatrix::<f64, DOF, NQ>::zeros(); 2];
                let mut out_p = SMatrix::<f64, DOF, { generic::NP }>::zeros();
                let [o0, o1] = &mut out;
                dynamics_reductions_p_into(q, qd, p, t, b, w, o0, o1, &mut out_p);
                (out, out_p)
            }
            #[inline]
            fn dependent_jacobian_p(
                q: &SVector<f64, NQ>, p: &Params, t: f64
            ) -> SMatrix<f64, NQ, { generic::NP }> {
                dependent_jacobian_p(q, p, t)
            }
            #[inline]
            fn dependent_solve_matrix_into(
                q: &SVector<f64, NQ>, p: &Params, t: f64, out: &mut SMatrix<f64, NQ, NC>
            ) {
                dependent_solve_matrix_into(q, p, t, out)
            }
            #[inline]
            fn gamma_jacobian_qd_into(
                q: &SVector<f64, NQ>, qd: &SVector<f64, NQ>, p: &Params, t: f64,
                out: &mut SMatrix<f64, NC, NQ>
            ) {
                gamma_jacobian_qd_into(q, qd, p, t, out)
            }
            #[inline]
            fn jacobian_times_jacobian_p_into(
                q: &SVector<f64, NQ>, p: &Params, t: f64, b: &SVector<f64, NQ>,
                out: &mut SMatrix<f64, NC, { generic::NP }>
            ) {
                jacobian_times_jacobian_p_into(q, p, t, b, out)
            }
            #[inline]
            fn gamma_reductions_into(
                q: &SVector<f64, NQ>, qd: &SVector<f64, NQ>, p: &Params, t: f64,
                b: &SVector<f64, NQ>, w: &SMatrix<f64, NC, DOF>,
                out: &mut [SMatrix<f64, DOF, NQ>; 3],
                out_p: Option<&mut SMatrix<f64, DOF, { generic::NP }>>
            ) {
                let [o0, o1, o2] = out;
                match out_p {
                    Some(out_p) => gamma_reductions_p_into(q, qd, p, t, b, w, o0, o1, o2, out_p),
                    None => gamma_reductions_into(q, qd, p, t, b, w, o0, o1, o2),
                }
            }
            #[inline]
            fn dynamics_reductions_into(
                q: &SVector<f64, NQ>, qd: &SVector<f64, NQ>, p: &Params, t: f64,
                b: &SVector<f64, NQ>, w: &SMatrix<f64, NQ, DOF>,
                out: &mut [SMatrix<f64, DOF, NQ>; 2],
                out_p: Option<&mut SMatrix<f64, DOF, { generic::NP }>>
            ) {
                let [o0, o1] = out;
                match out_p {
                    Some(out_p) => dynamics_reductions_p_into(q, qd, p, t, b, w, o0, o1, out_p),
                    None => dynamics_reductions_into(q, qd, p, t, b, w, o0, o1),
                }
            }
        }
    }
}
