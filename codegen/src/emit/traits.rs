//! `Model` and its impls of the runtime's traits, delegating to the generated functions
//! the [table](super::table) marks as trait methods.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::table::{Entry, GenFn, Trait};
use super::EmitOptions;

/// The `Model` type, its `Mechanism` impl and (when the table has a mass matrix) its
/// `Dynamics` impl.
pub(crate) fn model_impls(
    name: &str,
    coord_names: &[String],
    table: &[Entry],
    opts: &EmitOptions,
) -> TokenStream {
    let krate = &opts.crate_path;
    let ty = &opts.scalar.ty;
    if ty.to_string() != "f64" {
        // The runtime's traits and solvers are for f64: other scalars get the functions only.
        return TokenStream::new();
    }
    let mechanism = methods(table, Trait::Mechanism, opts);
    let atlas = atlas_methods(table, opts);
    let dynamics = methods(table, Trait::Dynamics, opts);
    let inequalities = methods(table, Trait::Inequalities, opts);
    let friction = methods(table, Trait::Friction, opts);
    let joint_friction = methods(table, Trait::JointFriction, opts);
    let charts: Vec<TokenStream> = table
        .iter()
        .filter_map(|e| match e {
            Entry::NamedChart(chart, independent, typical) => Some(chart_impls(
                name,
                chart,
                *typical,
                &independent
                    .iter()
                    .map(|&i| coord_names.get(i).cloned().unwrap_or_default())
                    .collect::<Vec<_>>(),
                table,
                opts,
            )),
            _ => None,
        })
        .collect();
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
    let friction_impl = if friction.is_empty() {
        TokenStream::new()
    } else {
        quote! {
            impl #krate::runtime::Friction<NQ, NC, DOF, NI, NT> for Model {
                const FRICTION: [#ty; NI] = FRICTION;
                const TANGENT_CONTACT: [usize; NT] = TANGENT_CONTACT;
                #friction
            }
        }
    };
    let joint_friction_impl = if joint_friction.is_empty() {
        TokenStream::new()
    } else {
        quote! {
            impl #krate::runtime::JointFriction<NQ, NC, DOF, NS> for Model {
                const JOINT_FRICTION_NAMES: [&'static str; NS] = JOINT_FRICTION_NAMES;
                const JOINT_FRICTION: [#ty; NS] = JOINT_FRICTION;
                const FRICTION_RADIUS: [#ty; NS] = FRICTION_RADIUS;
                const FRICTION_ROWS: [(usize, usize); NS] = FRICTION_ROWS;
                #joint_friction
            }
        }
    };
    let not_smooth = not_smooth(
        krate,
        !inequalities.is_empty(),
        !friction.is_empty(),
        !joint_friction.is_empty(),
        true,
    );
    let (mass_nonzeros, dynamics_impl) = if dynamics.is_empty() {
        (TokenStream::new(), TokenStream::new())
    } else {
        (
            mass_nonzeros(table),
            quote! {
                impl #krate::runtime::Dynamics<NQ, NC, DOF> for Model {
                    const MASS_NONZEROS: Option<&'static [(usize, usize)]> = Some(&MASS_NONZEROS);
                    #not_smooth
                    #dynamics
                    #[inline]
                    fn mass_matrix_into(
                        q: &SVector<f64, NQ>,
                        p: &Params,
                        t: f64,
                        buffer: &mut SMatrix<f64, NQ, NQ>,
                    ) {
                        mass_matrix_into(q, p, t, buffer)
                    }
                }
            },
        )
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
            const TYPICAL_HEALTH: f64 = TYPICAL_HEALTH;
            const VELOCITY_ROWS: usize = VELOCITY_ROWS;
            #[inline]
            fn nominal_q() -> SVector<#ty, NQ> {
                SVector::<#ty, NQ>::from(NOMINAL_Q)
            }
            #mechanism
            #atlas
        }

        #mass_nonzeros
        #dynamics_impl
        #inequalities_impl
        #friction_impl
        #joint_friction_impl
        #(#charts)*
    }
}

/// `MASS_NONZEROS`: the structural nonzeros of `mass_matrix` (both triangles, column by
/// column), for the `Dynamics` impls' constant of that name.
fn mass_nonzeros(table: &[Entry]) -> TokenStream {
    let mut pairs: Vec<(usize, usize)> = table
        .iter()
        .filter_map(|e| match e {
            Entry::Function(f) if f.name == "mass_matrix" => Some(&f.pos),
            _ => None,
        })
        .flatten()
        .flat_map(|&(i, j)| [(i, j), (j, i)])
        .collect();
    pairs.sort_by_key(|&(i, j)| (j, i));
    pairs.dedup();
    let n = pairs.len();
    let len = proc_macro2::Literal::usize_unsuffixed(n);
    let entries = pairs.iter().map(|&(i, j)| {
        let (i, j) = (
            proc_macro2::Literal::usize_unsuffixed(i),
            proc_macro2::Literal::usize_unsuffixed(j),
        );
        quote!((#i, #j))
    });
    let doc = format!(
        " The {n} structural nonzeros of `mass_matrix` as `(row, column)`, both triangles, \
         column by column: the runtime's products with `M` skip the other entries."
    );
    let doc = super::docs::wrapped_doc(&doc);
    quote! {
        #doc
        pub const MASS_NONZEROS: [(usize, usize); #len] = [#(#entries),*];
    }
}

/// `ATLAS_CHARTS`, `null_space_in_atlas` and `solve_dependent_in_atlas` of `Mechanism` when
/// the atlas has charts beyond the primary one (nothing otherwise: the trait's defaults).
fn atlas_methods(table: &[Entry], opts: &EmitOptions) -> TokenStream {
    let Some(charts) = table.iter().find_map(|e| match e {
        Entry::Atlas(charts) if charts.len() > 1 => Some(charts),
        _ => None,
    }) else {
        return TokenStream::new();
    };
    let ty = &opts.scalar.ty;
    let further = &charts[1..];
    let cols = further.iter().map(|(_, ind)| {
        let ind = ind
            .iter()
            .map(|&i| proc_macro2::Literal::usize_unsuffixed(i));
        quote!([#(#ind),*])
    });
    let ks: Vec<proc_macro2::Literal> = (0..further.len())
        .map(proc_macro2::Literal::usize_unsuffixed)
        .collect();
    let bases: Vec<proc_macro2::Ident> = further
        .iter()
        .map(|(name, _)| format_ident!("{}", name))
        .collect();
    let solves: Vec<proc_macro2::Ident> = (1..=further.len())
        .map(|k| format_ident!("solve_dependent_chart{}", k))
        .collect();
    quote! {
        const ATLAS_CHARTS: &'static [[usize; DOF]] = &[#(#cols),*];
        fn null_space_in_atlas(
            k: usize,
            q: &SVector<#ty, NQ>,
            p: &Params,
            t: #ty,
        ) -> Option<(SMatrix<#ty, NQ, DOF>, f64)> {
            match k {
                #(#ks => Some(#bases(q, p, t)),)*
                _ => None,
            }
        }
        fn solve_dependent_in_atlas(
            k: usize,
            q: &SVector<#ty, NQ>,
            p: &Params,
            t: #ty,
            b: &SVector<#ty, NC>,
        ) -> Option<SVector<#ty, NQ>> {
            match k {
                #(#ks => Some(#solves(q, p, t, b)),)*
                _ => None,
            }
        }
    }
}

/// `Name` → the type of the named chart `name` (`leg_lengths` → `LegLengths`; lowering
/// checked that it is a free identifier, see [`crate::model::chart_item_names`]).
pub(crate) fn chart_type(name: &str) -> proc_macro2::Ident {
    format_ident!("{}", crate::model::chart_item_names(name).0)
}

/// `Dynamics::NOT_SMOOTH` for a model with inequalities (with or without friction at them)
/// or joint friction: the runtime function that simulates it and the constraints'
/// names, so that `simulate` refuses it rather than drop them. Nothing otherwise.
fn not_smooth(
    krate: &TokenStream,
    inequalities: bool,
    friction: bool,
    joint_friction: bool,
    hook: bool,
) -> TokenStream {
    let (route, names, call) = if joint_friction {
        (
            "contact::simulate_joint_friction_adaptive",
            quote!(JOINT_FRICTION_NAMES),
            quote!(joint_friction::<NS>),
        )
    } else if friction {
        (
            "contact::simulate_friction_adaptive",
            quote!(INEQUALITY_NAMES),
            quote!(friction::<NI, NT>),
        )
    } else if inequalities {
        (
            "contact::simulate_contact_adaptive",
            quote!(INEQUALITY_NAMES),
            quote!(contact::<NI>),
        )
    } else {
        return TokenStream::new();
    };
    // `simulate`'s event-located route: the runtime's visitor, told which route fits.
    let hook = hook.then(|| {
        quote! {
            fn event_route<R: #krate::runtime::__generated::EventRoutes<Self, NQ, NC, DOF>>(
                routes: R,
            ) -> Option<R::Output> {
                Some(routes.#call())
            }
        }
    });
    quote! {
        const NOT_SMOOTH: Option<(&'static str, &'static [&'static str])> =
            Some((#route, &#names));
        #hook
    }
}

/// The type of a named chart and its impls of `Mechanism`, `Dynamics` and `Inequalities`:
/// the model's functions, with the chart's `INDEPENDENT_NAME`, `null_space_NAME` and
/// `solve_dependent_NAME`.
fn chart_impls(
    model_name: &str,
    chart: &str,
    typical: f64,
    independent: &[String],
    table: &[Entry],
    opts: &EmitOptions,
) -> TokenStream {
    let typical = proc_macro2::Literal::f64_unsuffixed(typical);
    let krate = &opts.crate_path;
    let ty = &opts.scalar.ty;
    let t = chart_type(chart);
    let konst = format_ident!("{}", crate::model::chart_item_names(chart).1);
    let call = |f: &str| match f {
        "null_space_fixed" => format!("null_space_{chart}"),
        "solve_dependent" => format!("solve_dependent_{chart}"),
        other => other.to_string(),
    };
    let mechanism = methods_calling(table, Trait::Mechanism, opts, &call);
    let dynamics = methods_calling(table, Trait::Dynamics, opts, &call);
    let inequalities = methods_calling(table, Trait::Inequalities, opts, &call);
    let (friction, joint_friction) = (
        !methods_calling(table, Trait::Friction, opts, &call).is_empty(),
        !methods_calling(table, Trait::JointFriction, opts, &call).is_empty(),
    );
    // A chart's type implements `Inequalities` but not the friction traits: the event route
    // for frictionless contacts only (with friction, `NotSmooth` names the function).
    let not_smooth = not_smooth(
        krate,
        !inequalities.is_empty(),
        friction,
        joint_friction,
        !friction && !joint_friction,
    );
    let dynamics_impl = (!dynamics.is_empty()).then(|| {
        quote! {
            impl #krate::runtime::Dynamics<NQ, NC, DOF> for #t {
                const MASS_NONZEROS: Option<&'static [(usize, usize)]> = Some(&MASS_NONZEROS);
                #not_smooth
                #dynamics
            }
        }
    });
    let inequalities_impl = (!inequalities.is_empty()).then(|| {
        quote! {
            impl #krate::runtime::Inequalities<NQ, NC, DOF, NI> for #t {
                const INEQUALITY_NAMES: [&'static str; NI] = INEQUALITY_NAMES;
                const RESTITUTION: [#ty; NI] = RESTITUTION;
                #inequalities
            }
        }
    });
    let doc = format!(
        " The mechanism with the independent coordinates of the chart `{chart}` ({}), for the \
         runtime's solvers: `assemble::<{t}, …>` holds those coordinates and solves for the \
         others (forward kinematics of a parallel robot, say); the simulators integrate in them. \
         Its functions are the model's, with `null_space_{chart}` and `solve_dependent_{chart}`.",
        independent.join(", ")
    );
    let name = format!("{model_name}::{t}");
    quote! {
        #[doc = #doc]
        #[derive(Clone, Copy, Debug, Default)]
        pub struct #t;

        impl #krate::runtime::Mechanism<NQ, NC, DOF> for #t {
            type Params = Params;
            const NAME: &'static str = #name;
            const COORD_NAMES: [&'static str; NQ] = COORD_NAMES;
            const INDEPENDENT: [usize; DOF] = #konst;
            const TYPICAL_HEALTH: f64 = #typical;
            const VELOCITY_ROWS: usize = VELOCITY_ROWS;
            #[inline]
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
    methods_calling(table, tr, opts, &|f| f.to_string())
}

/// [`methods`], each calling `call(function name)` instead (a named chart's type calls its
/// own null space and dependent solve).
fn methods_calling(
    table: &[Entry],
    tr: Trait,
    opts: &EmitOptions,
    call: &dyn Fn(&str) -> String,
) -> TokenStream {
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
        let name = format_ident!("{}", call(&f.name));
        let params = f.inputs.params(&opts.scalar);
        let args = f.inputs.args();
        let ret = f.shape.ret(&opts.scalar);
        out.extend(if m.optional {
            quote! {
                #[inline]
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
