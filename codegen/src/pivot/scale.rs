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
    // Rounds: index every term by each of its trigonometric factors, fold every pair found
    // whose two terms no other fold of the round has touched, repeat while a round folds
    // (the products it creates may pair again: a spatial leg needs three). Each round costs
    // `O(T log T)` for `T` terms, and folds at least once: rounds are few in practice and at
    // most the total weight, whatever the order of the terms.
    let mut budget = distinct.len();
    while budget > 0 {
        let pairs = pairs(arena, &terms);
        let mut touched: BTreeSet<&Key> = BTreeSet::new();
        let mut folds = Vec::new();
        for ((rest, x), (sin_key, cos_key)) in &pairs {
            if touched.contains(sin_key) || touched.contains(cos_key) {
                continue;
            }
            touched.insert(sin_key);
            touched.insert(cos_key);
            folds.push((sin_key.clone(), cos_key.clone(), rest.clone(), *x));
        }
        if folds.is_empty() {
            break;
        }
        budget = budget.saturating_sub(folds.len());
        for (sin_key, cos_key, rest, x) in folds {
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

/// Every pair of terms `F·sin x`, `F·cos x`, by `(F, x)`: the keys of the sine's and the
/// cosine's term (the first of each in key order).
fn pairs(
    arena: &Arena,
    terms: &BTreeMap<Key, (u32, Option<ExprId>)>,
) -> BTreeMap<(Key, ExprId), (Key, Key)> {
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
            let pair = seen.entry(((rest, *coef), x)).or_default();
            if pair[slot].is_none() {
                pair[slot] = Some(key);
            }
        }
    }
    seen.into_iter()
        .filter_map(|(k, slots)| match slots {
            [Some(s), Some(c)] => Some((k, (s.clone(), c.clone()))),
            _ => None,
        })
        .collect()
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

#[cfg(test)]
mod tests {
    use super::scale_terms;
    use crate::expr::{Arena, ExprId, Sym};

    /// `Σ k e²` over the folded terms equals the sum of squares of the distinct entries, at
    /// a few points, for many entries: planar pairs, spatial legs (`l sin b`, `l sin a cos b`,
    /// `l cos a cos b`, … nested twice), and as many entries without a partner, listed first
    /// so that they come before the pairs in key order.
    #[test]
    fn folded_sum_equals_the_distinct_entries_sum() {
        let mut arena = Arena::new();
        let n = 2000u32;
        let mut entries: Vec<ExprId> = Vec::new();
        let p = |arena: &mut Arena, i: u32| arena.sym(Sym::Param(i));
        let q = |arena: &mut Arena, i: u32| arena.sym(Sym::Coord(i));
        for i in 0..n {
            // Without a partner: `p_i sin q_i`.
            let (pi, qi) = (p(&mut arena, i), q(&mut arena, i));
            let s = arena.sin(qi);
            entries.push(arena.mul(pi, s));
        }
        for i in n..2 * n {
            // A planar pair `l cos x`, `−l sin x` (one length shared by many links).
            let (l, x) = (p(&mut arena, 2 * n + i % 7), q(&mut arena, i));
            let (s, c) = (arena.sin(x), arena.cos(x));
            let ls = arena.mul(l, s);
            entries.push(arena.neg(ls));
            entries.push(arena.mul(l, c));
        }
        for i in 0..n / 4 {
            // A spatial leg: the columns ∂/∂a, ∂/∂b, ∂/∂l of l (sin b, −sin a cos b, cos a cos b).
            let (l, a, b) = (
                q(&mut arena, 3 * n + 3 * i),
                q(&mut arena, 3 * n + 3 * i + 1),
                q(&mut arena, 3 * n + 3 * i + 2),
            );
            let (sa, ca, sb, cb) = (arena.sin(a), arena.cos(a), arena.sin(b), arena.cos(b));
            let sacb = arena.mul(sa, cb);
            let cacb = arena.mul(ca, cb);
            let sasb = arena.mul(sa, sb);
            let casb = arena.mul(ca, sb);
            for e in [cacb, sacb, cb, sasb, casb, sb, sacb, cacb] {
                let le = arena.mul(l, e);
                entries.push(le);
            }
            entries.push(sb);
            entries.push(sacb);
            entries.push(cacb);
        }
        let rows = vec![entries.clone()];
        let terms = scale_terms(&mut arena, &rows);
        let mut distinct: Vec<ExprId> = entries
            .iter()
            .map(|&e| super::unsigned(&arena, e))
            .collect();
        distinct.sort();
        distinct.dedup();
        let summed = terms.iter().filter(|t| t.1 > 0).count();
        assert!(
            summed < distinct.len() / 2,
            "{summed} terms for {} entries",
            distinct.len()
        );
        for seed in 0..3u32 {
            let value = |s: Sym| match s {
                Sym::Coord(i) | Sym::Param(i) => {
                    0.3 + f64::from((i * 7919 + seed * 104_729) % 1000) * 1e-3
                }
                _ => 0.0,
            };
            let want: f64 = arena.eval(&distinct, &value).iter().map(|v| v * v).sum();
            let roots: Vec<ExprId> = terms.iter().map(|t| t.0).collect();
            let got: f64 = arena
                .eval(&roots, &value)
                .iter()
                .zip(&terms)
                .map(|(v, t)| f64::from(t.1) * v * v)
                .sum();
            assert!((got - want).abs() <= 1e-12 * want, "{got} vs {want}");
        }
    }
}
