//! The scale of a chart's health figure, in few terms.
//!
//! The health figure compares the smallest pivot with the Frobenius norm of the pivot rows
//! of `C_J`, each distinct structural entry once. Kinematic entries come in pairs
//! `F·sin x`, `F·cos x` (a link's two components, a rotation's rows): their squares sum
//! to `F²`. [`scale_terms`] folds such pairs, repeatedly (a spatial leg's nine entries
//! become its length twice and a constant), so that the generated figure squares a few
//! factors instead of every entry.

use std::collections::{BTreeMap, BTreeSet};

use crate::expr::{Arena, ExprId, Func, Node};

/// A product `coef · Π factors` (factors sorted, constants gathered into `coef ≥ 0`).
type Key = (Vec<ExprId>, u64);

/// The scale's terms `(e, k)`, its square being `Σ k e²`: the distinct entries of `rows`
/// up to sign, with every pair `F·sin x`, `F·cos x` (same other factors `F`, same angle)
/// folded into `F` — as often as pairs remain, equal products counted by their
/// multiplicity — and each folded pair's angle `x` with multiplicity 0 (checked finite,
/// not summed: `F sin x` is finite when `F` and `x` are, so a non-finite input still
/// shows). Entries whose product form did not change keep their own node.
pub fn scale_terms(arena: &mut Arena, rows: &[Vec<ExprId>]) -> Vec<(ExprId, u32)> {
    let mut distinct: Vec<ExprId> = rows.iter().flatten().map(|&e| unsigned(arena, e)).collect();
    distinct.sort();
    distinct.dedup();
    // Each product's multiplicity and, while it is an entry as given, that entry.
    let mut terms: BTreeMap<Key, (u32, Option<ExprId>)> = BTreeMap::new();
    for &e in &distinct {
        let slot = terms.entry(product(arena, e)).or_insert((0, Some(e)));
        slot.0 += 1;
    }
    let mut angles = BTreeSet::new();
    // Each fold removes weight from two terms: at most the total weight of folds.
    let mut budget = distinct.len();
    while budget > 0 {
        budget -= 1;
        let Some((sin_key, cos_key, rest, x)) = find_pair(arena, &terms) else {
            break;
        };
        let w = terms[&sin_key].0.min(terms[&cos_key].0);
        for k in [&sin_key, &cos_key] {
            if let Some(slot) = terms.get_mut(k) {
                slot.0 -= w;
                if slot.0 == 0 {
                    terms.remove(k);
                }
            }
        }
        let slot = terms.entry(rest).or_insert((0, None));
        slot.0 += w;
        angles.insert(x);
    }
    let mut out: BTreeMap<ExprId, u32> = BTreeMap::new();
    for ((factors, coef), (w, original)) in terms {
        let e = match original {
            Some(e) => e,
            None => build(arena, &factors, f64::from_bits(coef)),
        };
        *out.entry(e).or_default() += w;
    }
    for x in angles {
        out.entry(x).or_insert(0);
    }
    out.into_iter().collect()
}

/// `e` without a leading negation (the health figure takes moduli and squares).
pub(crate) fn unsigned(arena: &Arena, e: ExprId) -> ExprId {
    match arena.node(e) {
        Node::Neg(a) => a,
        _ => e,
    }
}

/// `e` as a product: its non-constant factors (products and negations flattened), sorted,
/// and the modulus of its constant factors.
fn product(arena: &Arena, e: ExprId) -> Key {
    let mut coef = 1.0f64;
    let mut factors = Vec::new();
    let mut stack = vec![e];
    while let Some(f) = stack.pop() {
        match arena.node(f) {
            Node::Mul(a, b) => stack.extend([a, b]),
            Node::Neg(a) => stack.push(a),
            Node::Const(_) => coef *= arena.as_const(f).unwrap_or(1.0).abs(),
            _ => factors.push(f),
        }
    }
    factors.sort();
    (factors, coef.to_bits())
}

/// The first (in key order) pair of terms `F·sin x`, `F·cos x`: their keys, `F`'s key and
/// `x`.
fn find_pair(
    arena: &Arena,
    terms: &BTreeMap<Key, (u32, Option<ExprId>)>,
) -> Option<(Key, Key, Key, ExprId)> {
    // (F, x) → the terms with `sin x` (slot 0) and `cos x` (slot 1) beside `F`.
    let mut seen: BTreeMap<(Key, ExprId), [Option<&Key>; 2]> = BTreeMap::new();
    for key in terms.keys() {
        let (factors, coef) = key;
        for (i, &f) in factors.iter().enumerate() {
            let (x, slot) = match arena.node(f) {
                Node::Func(Func::Sin, x) => (x, 0),
                Node::Func(Func::Cos, x) => (x, 1),
                _ => continue,
            };
            let mut rest = factors.clone();
            rest.remove(i);
            let rest = (rest, *coef);
            let pair = seen.entry((rest.clone(), x)).or_default();
            pair[slot] = Some(key);
            if let [Some(s), Some(c)] = *pair {
                return Some((s.clone(), c.clone(), rest, x));
            }
        }
    }
    None
}

/// The node `coef · Π factors` (a constant when there are no factors).
fn build(arena: &mut Arena, factors: &[ExprId], coef: f64) -> ExprId {
    let mut e = match factors.split_first() {
        Some((&first, rest)) => rest.iter().fold(first, |acc, &f| arena.mul(acc, f)),
        None => return arena.constant(coef),
    };
    if coef != 1.0 {
        let c = arena.constant(coef);
        e = arena.mul(c, e);
    }
    e
}
