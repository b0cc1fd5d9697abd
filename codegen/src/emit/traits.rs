//! `Model` and its impls of the runtime's traits, delegating to the generated functions
//! the [table](super::table) marks as trait methods.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::table::{Entry, GenFn, Trait};
use super::EmitOptions;

/// The `Model` type, its `Mechanism` impl and (when the table has a mass matrix) its
/// `Dynamics` impl.
pub(crate) fn model_impls(name: &str, table: &[Entry], opts: &EmitOptions) -> TokenStream {
    let krate = &opts.crate_path;
    let ty = &opts.scalar.ty;
    if ty.to_string() != "f64" {
        // The runtime's traits and solvers are for f64: other scalars get the functions only.
        return TokenStream::new();
    }
    let mechanism = methods(table, Trait::Mechanism, opts);
    let dynamics = methods(table, Trait::Dynamics, opts);
    let inequalities = methods(table, Trait::Inequalities, opts);
    let inequalities_impl = if inequalities.is_empty() {
        TokenStream::new()
    } else {
        quote! {
            impl #krate::runtime::Inequalities<NQ, NC, DOF, NI> for Model {
                const INEQUALITY_NAMES: [&'static str; NI] = INEQUALITY_NAMES;
                const RESTITUTION: [#ty; NI] = RESTITUTION;
                #inequalities
            }
        }
    };
    let dynamics_impl = if dynamics.is_empty() {
        TokenStream::new()
    } else {
        quote! {
            impl #krate::runtime::Dynamics<NQ, NC, DOF> for Model {
                #dynamics
            }
        }
    };
    quote! {
        /// The mechanism as a type, for the runtime's generic solvers.
        #[derive(Clone, Copy, Debug, Default)]
        pub struct Model;

        impl #krate::runtime::Mechanism<NQ, NC, DOF> for Model {
            type Params = Params;
            const NAME: &'static str = #name;
            const COORD_NAMES: [&'static str; NQ] = COORD_NAMES;
            const INDEPENDENT: [usize; DOF] = INDEPENDENT;
            fn nominal_q() -> SVector<#ty, NQ> {
                SVector::<#ty, NQ>::from(NOMINAL_Q)
            }
            #mechanism
        }

        #dynamics_impl
        #inequalities_impl
    }
}

/// The methods of trait `tr`, in their rank order, each calling its function.
fn methods(table: &[Entry], tr: Trait, opts: &EmitOptions) -> TokenStream {
    let mut fns: Vec<&GenFn> = table
        .iter()
        .filter_map(|e| match e {
            Entry::Function(f) if f.implements.is_some_and(|m| m.tr == tr) => Some(f),
            _ => None,
        })
        .collect();
    fns.sort_by_key(|f| f.implements.map(|m| m.rank));
    let mut out = TokenStream::new();
    for f in fns {
        let Some(m) = f.implements else { continue };
        let method = format_ident!("{}", m.method);
        let name = format_ident!("{}", f.name);
        let params = f.inputs.params(&opts.scalar);
        let args = f.inputs.args();
        let ret = f.shape.ret(&opts.scalar);
        out.extend(if m.optional {
            quote! {
                fn #method(#params) -> Option<#ret> {
                    Some(#name(#args))
                }
            }
        } else {
            quote! {
                #[inline]
                fn #method(#params) -> #ret {
                    #name(#args)
                }
            }
        });
    }
    out
}
