//! The health figure of a null-space basis: the smallest pivot relative to the Frobenius
//! norm of the pivot rows of `C_J`.

use proc_macro2::TokenStream;
use quote::quote;

use super::expr::ScalarType;

/// `items` combined pairwise into a balanced tree by `op` (depth `log2 n`, so the combining
/// operations run in parallel instead of one long dependency chain).
fn balanced(
    items: &[TokenStream],
    op: &dyn Fn(&TokenStream, &TokenStream) -> TokenStream,
) -> TokenStream {
    match items.len() {
        0 => quote!(0.0),
        1 => items[0].clone(),
        n => {
            let (l, r) = items.split_at(n / 2);
            op(&balanced(l, op), &balanced(r, op))
        }
    }
}

/// The sum of `items` as a balanced tree, without parentheses around the whole (which
/// rustc's `unused_parens` would flag in a call argument).
fn sum_tree(items: &[TokenStream]) -> TokenStream {
    let add = |a: &TokenStream, b: &TokenStream| quote!((#a + #b));
    if items.len() < 2 {
        return balanced(items, &add);
    }
    let (l, r) = items.split_at(items.len() / 2);
    let (l, r) = (balanced(l, &add), balanced(r, &add));
    quote!(#l + #r)
}

/// The statements computing `health` (see `null_space`'s docs) from the pivots and the
/// scale entries (structural entries of the pivot rows of `C_J`); `d` is the basis.
pub(crate) fn health_tokens(
    pivots: &[TokenStream],
    scale: &[TokenStream],
    sc: &ScalarType,
) -> TokenStream {
    let ty = &sc.ty;
    // Finite literals always print.
    let one = sc.literal(1.0).unwrap_or_default();
    let zero = sc.literal(0.0).unwrap_or_default();
    if pivots.is_empty() {
        // No constraints: D = I, healthy unless the inputs are not finite.
        return quote! {
            let health = if d.sum().is_finite() { #one } else { #zero };
        };
    }
    // Balanced trees, not left-to-right chains: a chain of 260 additions is latency-bound
    // (about 4 cycles each) and tripled the Stewart platform's `null_space` time.
    let abs: Vec<TokenStream> = pivots.iter().map(|p| quote!(#ty::abs(#p))).collect();
    let min_pivot = balanced(&abs, &|a, b| quote!(#ty::min(#a, #b)));
    // Every input of the basis is an entry of the pivot rows (in `health_scale`) or a
    // pivot: when those are finite, so is the basis (or its health is ~0 by overflow).
    let check = sum_tree(pivots);
    let squares: Vec<TokenStream> = scale.iter().map(|e| quote!(#e * #e)).collect();
    let sq = sum_tree(&squares);
    quote! {
        let health_scale = #ty::sqrt(#sq);
        let min_pivot = #min_pivot;
        let health = if (#check + health_scale).is_finite() && health_scale > #zero {
            #ty::min(min_pivot / health_scale, #one)
        } else {
            #zero
        };
    }
}
