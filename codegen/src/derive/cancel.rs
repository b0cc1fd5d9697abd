//! Cancellation of sums in derivative DAGs: the product rule leaves sums such as
//! `a + b + (−a − b)` or `2c − (c + d)` whose terms cancel; the arena's constructors see
//! one addition at a time and keep them. [`cancel_sums`] rebuilds roots with every sum
//! flattened into its terms with coefficients (through small sub-sums), equal terms
//! combined and zero ones dropped.

use crate::expr::{Arena, ExprId, Node};
use std::collections::BTreeMap;

/// A sub-sum is inlined into the sum that reads it only when it has at most this many
/// terms (larger ones stay one term, shared), so no sum grows past it by inlining.
const INLINE_TERMS: usize = 8;

/// Memo of [`cancel_sums`]: per original node, its rebuilt node and sign (the original's
/// value is the sign times the rebuilt node's: sums are kept in one orientation, so that
/// `x − y` and `y − x` meet as one node with opposite signs) and (for sums) its terms.
#[derive(Default)]
pub struct Cancel {
    new: BTreeMap<ExprId, (ExprId, f64)>,
    terms: BTreeMap<ExprId, Vec<(ExprId, f64)>>,
}

impl Cancel {
    /// The roots rebuilt with their sums' cancelling terms removed (equal in value up to
    /// rounding; shared nodes stay shared through the memo).
    pub fn roots(&mut self, a: &mut Arena, roots: &[ExprId]) -> Vec<ExprId> {
        let reach = a.reachable(roots);
        for (i, &r) in reach.iter().enumerate() {
            if r {
                let id = ExprId(i as u32);
                if !self.new.contains_key(&id) {
                    self.rebuild(a, id);
                }
            }
        }
        roots.iter().map(|&r| self.signed(a, r)).collect()
    }

    /// The rebuilt node of `c` with its sign applied.
    fn signed(&self, a: &mut Arena, c: ExprId) -> ExprId {
        let (e, s) = self.new[&c];
        if s < 0.0 {
            a.neg(e)
        } else {
            e
        }
    }

    /// The terms a child contributes to a sum reading it, scaled by `k`.
    fn child_terms(&self, c: ExprId, k: f64, out: &mut Vec<(ExprId, f64)>) {
        match self.terms.get(&c) {
            Some(t) if t.len() <= INLINE_TERMS => {
                out.extend(t.iter().map(|&(e, x)| (e, x * k)));
            }
            _ => {
                let (e, s) = self.new[&c];
                out.push((e, s * k));
            }
        }
    }

    fn rebuild(&mut self, a: &mut Arena, id: ExprId) {
        // Sums (and negations and constant multiples, sums of one term) as terms with
        // coefficients; products of two non-constants on their children's rebuilt nodes
        // with the signs multiplied out; every other node rebuilt on its children's
        // signed nodes.
        let node = a.node(id);
        let sum: Option<Vec<(ExprId, f64)>> = match node {
            Node::Add(x, y) => Some(vec![(x, 1.0), (y, 1.0)]),
            Node::Neg(x) => Some(vec![(x, -1.0)]),
            Node::Mul(c, x) => a.as_const(c).map(|k| vec![(x, k)]),
            _ => None,
        };
        let e = match (sum, node) {
            (None, Node::Mul(x, y)) => {
                let ((ex, sx), (ey, sy)) = (self.new[&x], self.new[&y]);
                let m = a.mul(ex, ey);
                (m, sx * sy)
            }
            (None, Node::Div(x, y)) => {
                let ((ex, sx), (ey, sy)) = (self.new[&x], self.new[&y]);
                let d = a.div(ex, ey);
                (d, sx * sy)
            }
            (None, _) => {
                let children: Vec<(ExprId, ExprId)> =
                    node.children().map(|c| (c, self.signed(a, c))).collect();
                let e = a.rebuilt(id, |c| {
                    children
                        .iter()
                        .find(|(o, _)| *o == c)
                        .map_or(c, |&(_, n)| n)
                });
                (e, 1.0)
            }
            (Some(children), _) => {
                let mut t = Vec::new();
                for (c, k) in children {
                    self.child_terms(c, k, &mut t);
                }
                // Combine equal terms, drop zeros; in the order of the terms' ids, the
                // first coefficient positive (the sign kept apart).
                let mut combined: BTreeMap<ExprId, f64> = BTreeMap::new();
                for (term, k) in t {
                    *combined.entry(term).or_insert(0.0) += k;
                }
                let mut combined: Vec<(ExprId, f64)> =
                    combined.into_iter().filter(|&(_, k)| k != 0.0).collect();
                let sign = match combined.first() {
                    Some(&(_, k)) if k < 0.0 => -1.0,
                    _ => 1.0,
                };
                for (_, k) in &mut combined {
                    *k *= sign;
                }
                let built = build(a, &combined);
                self.terms
                    .insert(id, combined.iter().map(|&(e, k)| (e, k * sign)).collect());
                (built, sign)
            }
        };
        self.new.insert(id, e);
    }
}

/// `Σ k_i e_i`, left to right.
fn build(a: &mut Arena, terms: &[(ExprId, f64)]) -> ExprId {
    let zero = a.constant(0.0);
    terms.iter().fold(zero, |acc, &(e, k)| {
        let c = a.constant(k);
        let t = a.mul(c, e);
        a.add(acc, t)
    })
}

#[cfg(test)]
mod tests {
    use super::Cancel;
    use crate::expr::{Arena, Sym};

    /// `a·b + c·d + (−a·b − c·d)` is zero and `2e − (e + f)` is `e − f` after the pass;
    /// a product of sums keeps its value (x = 0.3, y = −1.7, z = 2.2).
    #[test]
    fn cancelling_terms_are_dropped_and_values_kept() {
        let mut a = Arena::new();
        let (x, y, z) = (
            a.sym(Sym::Coord(0)),
            a.sym(Sym::Coord(1)),
            a.sym(Sym::Coord(2)),
        );
        let ab = a.mul(x, y);
        let cd = a.mul(y, z);
        let s = a.add(ab, cd);
        let n1 = a.neg(ab);
        let n2 = a.sub(n1, cd);
        let zero_sum = a.add(s, n2);
        let two = a.constant(2.0);
        let e2 = a.mul(two, ab);
        let ef = a.add(ab, cd);
        let diff = a.sub(e2, ef);
        let prod = a.mul(diff, x);
        let roots = [zero_sum, diff, prod];
        let new = Cancel::default().roots(&mut a, &roots);
        assert!(a.is_zero(new[0]));
        let want = a.sub(ab, cd);
        assert_eq!(new[1], want);
        let (vx, vy, vz) = (0.3, -1.7, 2.2);
        let sym = |s: Sym| match s {
            Sym::Coord(0) => vx,
            Sym::Coord(1) => vy,
            _ => vz,
        };
        let v: Vec<f64> = a.eval(&[prod, new[2]], &sym);
        assert!((v[0] - v[1]).abs() < 1e-14, "{v:?}");
        assert!((v[1] - (vx * vy - vy * vz) * vx).abs() < 1e-14);
    }

    /// `m·(x − y) + m·(y − x)` is zero after the pass (the two differences are one sum
    /// with opposite signs), and `(x − y)/(y − x)·z` keeps its value −z
    /// (x = 0.3, y = −1.7, z = 2.2).
    #[test]
    fn opposite_differences_meet_through_products() {
        let mut a = Arena::new();
        let (x, y, z) = (
            a.sym(Sym::Coord(0)),
            a.sym(Sym::Coord(1)),
            a.sym(Sym::Coord(2)),
        );
        let xy = a.sub(x, y);
        let yx = a.sub(y, x);
        let m1 = a.mul(z, xy);
        let m2 = a.mul(z, yx);
        let zero_sum = a.add(m1, m2);
        let q = a.div(xy, yx);
        let qz = a.mul(q, z);
        let new = Cancel::default().roots(&mut a, &[zero_sum, qz]);
        assert!(a.is_zero(new[0]));
        let sym = |s: Sym| match s {
            Sym::Coord(0) => 0.3,
            Sym::Coord(1) => -1.7,
            _ => 2.2,
        };
        let v: Vec<f64> = a.eval(&[new[1]], &sym);
        assert!((v[0] + 2.2).abs() < 1e-14, "{v:?}");
    }
}
