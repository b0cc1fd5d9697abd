//! Small trigonometric polynomials in normal form: an expression made of sums, products and
//! small powers of sines, cosines and other factors is expanded into monomials, every
//! `sin² x` replaced by `1 − cos² x` (the normal form modulo `sin² x + cos² x = 1`: the sine
//! of each argument to the power 0 or 1) and rebuilt. The body-frame angular velocity
//! `ω̃ = RᵀṘ` of a rotation composed of elementary ones comes out as the few terms it is
//! (`φ̇ − sin θ ψ̇`, …) instead of dot products of the matrix's columns.

use crate::expr::{Arena, ExprId, Func, Node};
use std::collections::BTreeMap;
use std::rc::Rc;

/// Monomials beyond this many make the expression a factor of its own (not expanded).
const MAX_TERMS: usize = 256;

/// [`simplify_roots`] gives up (leaves its roots as they are) once the expansions have
/// formed this many monomials per node of the roots' DAG: where the products of sums grow
/// without collapsing (the equations of motion of serial robots: A04, UR5, Panda, Romeo
/// form 100–210 per node and come out no smaller; the Stewart platform 17, A05 11, Solo 31,
/// which shrink), the expansion would only cost generation time.
const WORK_PER_NODE: usize = 48;

/// [`simplify_roots`] applies [`WORK_PER_NODE`] to the nodes visited so far once this many
/// are (before, to this many).
const MIN_NODES: usize = 64;

/// The expansions of the nodes visited (shared: a node read by several is expanded and
/// stored once, not copied per reader), and the work they took (monomials formed).
struct Expansions {
    polys: BTreeMap<ExprId, Option<Rc<Poly>>>,
    work: usize,
    /// Past this much work every further expansion is `None`.
    limit: usize,
}

impl Expansions {
    /// No expansions yet; at most [`WORK_PER_NODE`] monomials per node of a DAG of `nodes`.
    fn new(nodes: usize) -> Self {
        Self {
            polys: BTreeMap::new(),
            work: 0,
            limit: WORK_PER_NODE * nodes,
        }
    }

    fn exhausted(&self) -> bool {
        self.work > self.limit
    }
}

/// A monomial: its factors (atoms, ascending) with their exponents.
type Monomial = Vec<(ExprId, u32)>;
/// A polynomial: monomials with their coefficients.
type Poly = BTreeMap<Monomial, f64>;

/// `e` rebuilt from its normal form where that DAG is smaller than `e`'s (in the context
/// of nothing else: the caller's expression alone), otherwise (or past [`WORK_PER_NODE`]
/// monomials per node of `e`) `e` itself. Equal in value up
/// to rounding.
pub fn simplify(a: &mut Arena, e: ExprId) -> ExprId {
    let before = a.dag_size(&[e]);
    let mut memo = Expansions::new(before);
    let Some(p) = expand(a, e, &mut memo) else {
        return e;
    };
    let mark = a.mark();
    let p = reduce(a, &p);
    let new = rebuild(a, &p);
    if a.dag_size(&[new]) < before {
        new
    } else {
        a.rollback(mark);
        e
    }
}

/// `roots` with every largest subexpression that has a small expansion (see [`simplify`])
/// rebuilt from its normal form where that is smaller, the nodes above rebuilt on them;
/// `roots` unchanged (and the arena rolled back) where their DAG does not come out smaller
/// or the expansions take more than [`WORK_PER_NODE`] monomials per node.
pub fn simplify_roots(a: &mut Arena, roots: &[ExprId]) -> Vec<ExprId> {
    let before = a.dag_size(roots);
    let mark = a.mark();
    let reach = a.reachable(roots);
    let mut memo = Expansions::new(before);
    // Per reached node: its node rebuilt on its children's; for a node with a small
    // expansion read by one without (or a root), its node from the normal form where that
    // has fewer operations than the expanded region it replaces.
    let mut new: BTreeMap<ExprId, ExprId> = BTreeMap::new();
    let mut normal: BTreeMap<ExprId, ExprId> = BTreeMap::new();
    let mut expands = vec![false; reach.len()];
    // Nodes visited so far: the budget applies to them as the expansions go (at least
    // `MIN_NODES` counted), so a DAG whose expansions grow too fast is given up when its
    // visited part has used its share, not after the whole DAG's (the nodes come children
    // first, and the cost per node grows toward the roots).
    let mut visited = 0;
    for i in 0..reach.len() {
        if !reach[i] {
            continue;
        }
        let id = ExprId(i as u32);
        expands[i] = !is_atom(a, id) && expand(a, id, &mut memo).is_some();
        visited += 1;
        if memo.exhausted() || memo.work > WORK_PER_NODE * visited.max(MIN_NODES) {
            a.rollback(mark);
            return roots.to_vec();
        }
        let mut children: Vec<(ExprId, ExprId)> = Vec::new();
        for c in a.node(id).children() {
            let n = if !expands[i] && expands[c.index()] {
                normal_form(a, c, &mut memo, &new, &mut normal)
            } else {
                new.get(&c).copied().unwrap_or(c)
            };
            children.push((c, n));
        }
        let rebuilt = a.rebuilt(id, |c| {
            children
                .iter()
                .find(|(o, _)| *o == c)
                .map_or(c, |&(_, n)| n)
        });
        new.insert(id, rebuilt);
    }
    let out: Vec<ExprId> = roots
        .iter()
        .map(|&r| {
            if expands[r.index()] {
                normal_form(a, r, &mut memo, &new, &mut normal)
            } else {
                new.get(&r).copied().unwrap_or(r)
            }
        })
        .collect();
    if a.dag_size(&out) < before {
        out
    } else {
        a.rollback(mark);
        roots.to_vec()
    }
}

/// The node of `e` (which has a small expansion) from its normal form where that takes
/// fewer operations than `e`'s expanded region (its sums, products and powers down to their
/// factors), otherwise `e` rebuilt on its children's nodes in `new`; memoised in `normal`.
fn normal_form(
    a: &mut Arena,
    e: ExprId,
    memo: &mut Expansions,
    new: &BTreeMap<ExprId, ExprId>,
    normal: &mut BTreeMap<ExprId, ExprId>,
) -> ExprId {
    if let Some(&n) = normal.get(&e) {
        return n;
    }
    let fallback = new.get(&e).copied().unwrap_or(e);
    let n = match expand(a, e, memo) {
        Some(p) => {
            let p = reduce(a, &p);
            if poly_ops(&p) < region_ops(a, e) {
                rebuild_mapped(a, &p, new)
            } else {
                fallback
            }
        }
        None => fallback,
    };
    normal.insert(e, n);
    n
}

/// Operations of [`rebuild`]'s form of `p`: a multiplication per factor beyond the first
/// (and per power's extra factor, and per coefficient other than ±1), an addition per
/// monomial beyond the first.
fn poly_ops(p: &Poly) -> usize {
    let mut n = p.len().saturating_sub(1);
    for (m, &c) in p {
        let factors: usize = m.iter().map(|&(_, k)| k as usize).sum();
        n += factors.saturating_sub(1);
        if c.abs() != 1.0 && !m.is_empty() {
            n += 1;
        }
    }
    n
}

/// The distinct sums, products, negations and small powers reachable from `e` without
/// passing through a factor ([`is_atom`]): the operations `e`'s expansion replaces.
fn region_ops(a: &Arena, e: ExprId) -> usize {
    let mut seen = std::collections::HashSet::new();
    let mut stack = vec![e];
    while let Some(x) = stack.pop() {
        if is_atom(a, x) || matches!(a.node(x), Node::Const(_)) || !seen.insert(x) {
            continue;
        }
        stack.extend(a.node(x).children());
    }
    seen.len()
}

/// A node the expansion takes as one factor (not a sum, product or small power).
fn is_atom(a: &Arena, e: ExprId) -> bool {
    match a.node(e) {
        Node::Add(..) | Node::Neg(_) | Node::Mul(..) | Node::Const(_) => false,
        Node::Powi(_, n) => !(2..=4).contains(&n),
        _ => true,
    }
}

/// [`rebuild`] with every factor replaced by its rebuilt node in `new` (a factor not there,
/// such as a cosine the reduction introduced, rebuilt on its children's).
fn rebuild_mapped(a: &mut Arena, p: &Poly, new: &BTreeMap<ExprId, ExprId>) -> ExprId {
    let mapped: Poly = p
        .iter()
        .map(|(m, &c)| {
            let m = m
                .iter()
                .map(|&(f, k)| {
                    let g = match new.get(&f) {
                        Some(&g) => g,
                        None => a.rebuilt(f, |c| new.get(&c).copied().unwrap_or(c)),
                    };
                    (g, k)
                })
                .collect();
            (m, c)
        })
        .collect();
    rebuild(a, &mapped)
}

fn atom(e: ExprId) -> Poly {
    let mut p = Poly::new();
    p.insert(vec![(e, 1)], 1.0);
    p
}

fn add_into(out: &mut Poly, p: &Poly, k: f64) {
    for (m, &c) in p {
        let v = out.entry(m.clone()).or_insert(0.0);
        *v += k * c;
    }
    out.retain(|_, c| *c != 0.0);
}

fn times(x: &Poly, y: &Poly) -> Option<Poly> {
    if x.len() * y.len() > MAX_TERMS * MAX_TERMS {
        return None;
    }
    let mut out = Poly::new();
    for (mx, &cx) in x {
        for (my, &cy) in y {
            // The factors of both (each ascending) merged, equal ones' exponents added.
            let mut m = Vec::with_capacity(mx.len() + my.len());
            let (mut i, mut j) = (0, 0);
            while i < mx.len() || j < my.len() {
                match (mx.get(i), my.get(j)) {
                    (Some(&(f, k)), Some(&(g, l))) if f == g => {
                        m.push((f, k + l));
                        i += 1;
                        j += 1;
                    }
                    (Some(&(f, k)), Some(&(g, _))) if f < g => {
                        m.push((f, k));
                        i += 1;
                    }
                    (Some(&(f, k)), None) => {
                        m.push((f, k));
                        i += 1;
                    }
                    (_, Some(&(g, l))) => {
                        m.push((g, l));
                        j += 1;
                    }
                    (None, None) => break,
                }
            }
            *out.entry(m).or_insert(0.0) += cx * cy;
        }
    }
    out.retain(|_, c| *c != 0.0);
    (out.len() <= MAX_TERMS).then_some(out)
}

/// The expansion of `e` into monomials, `None` where it has more than [`MAX_TERMS`].
fn expand(a: &Arena, e: ExprId, memo: &mut Expansions) -> Option<Rc<Poly>> {
    if let Some(p) = memo.polys.get(&e) {
        return p.clone();
    }
    if memo.exhausted() {
        return None;
    }
    let p = match a.node(e) {
        Node::Const(_) => {
            let mut p = Poly::new();
            let c = a.as_const(e).unwrap_or(0.0);
            if c != 0.0 {
                p.insert(Vec::new(), c);
            }
            Some(p)
        }
        Node::Add(x, y) => match (expand(a, x, memo), expand(a, y, memo)) {
            (Some(px), Some(py)) => {
                let mut out = Rc::unwrap_or_clone(px);
                add_into(&mut out, &py, 1.0);
                (out.len() <= MAX_TERMS).then_some(out)
            }
            _ => None,
        },
        Node::Neg(x) => {
            expand(a, x, memo).map(|p| p.iter().map(|(m, &c)| (m.clone(), -c)).collect())
        }
        Node::Mul(x, y) => match (expand(a, x, memo), expand(a, y, memo)) {
            (Some(px), Some(py)) => {
                memo.work += px.len() * py.len();
                if memo.exhausted() {
                    None
                } else {
                    times(&px, &py)
                }
            }
            _ => None,
        },
        Node::Powi(x, n) if (2..=4).contains(&n) => expand(a, x, memo).and_then(|px| {
            let mut out = (*px).clone();
            for _ in 1..n {
                out = times(&out, &px)?;
            }
            Some(out)
        }),
        _ => Some(atom(e)),
    };
    let p = p.map(Rc::new);
    memo.work += p.as_ref().map_or(1, |p| p.len());
    memo.polys.insert(e, p.clone());
    p
}

/// `p` with every `sin² x` replaced by `1 − cos² x` until no sine has a power above 1.
fn reduce(a: &mut Arena, p: &Poly) -> Poly {
    let mut out = Poly::new();
    let mut work: Vec<(Monomial, f64)> = p.iter().map(|(m, &c)| (m.clone(), c)).collect();
    while let Some((m, c)) = work.pop() {
        let square = m
            .iter()
            .position(|&(f, k)| k >= 2 && matches!(a.node(f), Node::Func(Func::Sin, _)));
        let Some(i) = square else {
            let v = out.entry(m).or_insert(0.0);
            *v += c;
            continue;
        };
        let (s, k) = m[i];
        let Node::Func(_, arg) = a.node(s) else {
            continue;
        };
        let cos = a.cos(arg);
        let mut rest: BTreeMap<ExprId, u32> = m.iter().copied().collect();
        if k == 2 {
            rest.remove(&s);
        } else {
            rest.insert(s, k - 2);
        }
        work.push((rest.iter().map(|(&f, &k)| (f, k)).collect(), c));
        *rest.entry(cos).or_insert(0) += 2;
        work.push((rest.into_iter().collect(), -c));
    }
    out.retain(|_, c| *c != 0.0);
    out
}

/// `Σ c m` over the monomials, in their order.
fn rebuild(a: &mut Arena, p: &Poly) -> ExprId {
    let zero = a.constant(0.0);
    let mut acc = zero;
    for (m, &c) in p {
        let mut t = a.constant(c);
        for &(f, k) in m {
            let x = if k == 1 { f } else { a.powi(f, k as i32) };
            t = a.mul(t, x);
        }
        acc = a.add(acc, t);
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::{simplify, simplify_roots};
    use crate::expr::{Arena, ExprId, Sym};

    /// `sin² x · y + cos² x · y − y` is zero; `(sin x + cos x)² − 1` is `2 sin x cos x`
    /// (equal in value at x = 0.7, y = −1.3).
    #[test]
    fn squares_of_sines_reduce() {
        let mut a = Arena::new();
        let (x, y) = (a.sym(Sym::Coord(0)), a.sym(Sym::Coord(1)));
        let (s, c) = (a.sin(x), a.cos(x));
        let s2 = a.mul(s, s);
        let c2 = a.mul(c, c);
        let s2y = a.mul(s2, y);
        let c2y = a.mul(c2, y);
        let sum = a.add(s2y, c2y);
        let e = a.sub(sum, y);
        let zero = simplify(&mut a, e);
        assert!(a.is_zero(zero));
        let sc = a.add(s, c);
        let sq = a.mul(sc, sc);
        let one = a.constant(1.0);
        let f = a.sub(sq, one);
        let g = simplify(&mut a, f);
        assert!(a.dag_size(&[g]) < a.dag_size(&[f]));
        let sym = |s: Sym| match s {
            Sym::Coord(0) => 0.7,
            _ => -1.3,
        };
        let v: Vec<f64> = a.eval(&[f, g], &sym);
        assert!((v[0] - v[1]).abs() < 1e-14, "{v:?}");
        assert!((v[1] - 2.0 * 0.7f64.sin() * 0.7f64.cos()).abs() < 1e-14);
    }

    /// The body-frame angular velocity `RᵀṘ` of `R = R_z(ψ) R_y(θ) R_x(φ)` (dot products of
    /// the columns, as the equations of motion build it) comes out as the closed form
    /// `(φ̇ − sin θ ψ̇, cos φ θ̇ + sin φ cos θ ψ̇, −sin φ θ̇ + cos φ cos θ ψ̇)`: equal in value at
    /// a state of the angles and rates, and a fraction of the size.
    #[test]
    fn euler_angle_rates_come_out_in_closed_form() {
        let mut a = Arena::new();
        let (phi, theta, psi) = (
            a.sym(Sym::Coord(0)),
            a.sym(Sym::Coord(1)),
            a.sym(Sym::Coord(2)),
        );
        let rot = |a: &mut Arena, x: ExprId, axis: usize| -> [[ExprId; 3]; 3] {
            let (s, c) = (a.sin(x), a.cos(x));
            let (zero, one) = (a.constant(0.0), a.constant(1.0));
            let ns = a.neg(s);
            match axis {
                0 => [[one, zero, zero], [zero, c, ns], [zero, s, c]],
                1 => [[c, zero, s], [zero, one, zero], [ns, zero, c]],
                _ => [[c, ns, zero], [s, c, zero], [zero, zero, one]],
            }
        };
        let mul = |a: &mut Arena, x: &[[ExprId; 3]; 3], y: &[[ExprId; 3]; 3]| {
            let mut out = [[x[0][0]; 3]; 3];
            for (i, row) in out.iter_mut().enumerate() {
                for (j, e) in row.iter_mut().enumerate() {
                    let terms: Vec<ExprId> = (0..3).map(|k| a.mul(x[i][k], y[k][j])).collect();
                    let s = a.add(terms[0], terms[1]);
                    *e = a.add(s, terms[2]);
                }
            }
            out
        };
        let (rz, ry, rx) = (
            rot(&mut a, psi, 2),
            rot(&mut a, theta, 1),
            rot(&mut a, phi, 0),
        );
        let zy = mul(&mut a, &rz, &ry);
        let r = mul(&mut a, &zy, &rx);
        let w = super::super::motion::body_angular_velocity(&mut a, &r, 3);
        let before = a.dag_size(&w);
        let new = simplify_roots(&mut a, &w);
        let after = a.dag_size(&new);
        assert!(after * 4 < before, "{before} → {after}");
        let (p, t, y, pd, td, yd) = (0.3, -0.8, 1.9, 0.7, -1.1, 0.4);
        let sym = |s: Sym| match s {
            Sym::Coord(0) => p,
            Sym::Coord(1) => t,
            Sym::Coord(_) => y,
            Sym::Vel(0) => pd,
            Sym::Vel(1) => td,
            _ => yd,
        };
        let v: Vec<f64> = a.eval(&new, &sym);
        let (sp, cp, st, ct) = (f64::sin(p), f64::cos(p), f64::sin(t), f64::cos(t));
        let want = [
            pd - st * yd,
            cp * td + sp * ct * yd,
            -sp * td + cp * ct * yd,
        ];
        for k in 0..3 {
            assert!((v[k] - want[k]).abs() < 1e-14, "{v:?} {want:?}");
        }
    }
}
