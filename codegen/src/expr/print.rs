//! Expressions of the DAG as readable formulas: plain text (`l1*cos(theta) - s`) or LaTeX
//! (`l_{1} \cos\theta - s`), for `mechgen stats --equations` and `--latex`. Shared nodes are
//! printed where they are used (formulas are trees); a formula longer than [`MAX_CHARS`]
//! is cut with `…` (the work per node is bounded, so a deep DAG prints in linear time).

use super::hash::FxHashMap;

use super::{Arena, ExprId, Func, Node, Sym};

/// Longest formula printed (characters); longer ones end in `…`.
pub const MAX_CHARS: usize = 2_000;

/// Output syntax of [`format`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Syntax {
    /// Plain text in the language's own syntax (`*`, `/`, `powi`, `der(x)`).
    Text,
    /// LaTeX math (`\cdot`, `\frac`, `^{n}`, `\dot{x}`, Greek names as letters).
    Latex,
}

/// Binding strength: sums < products < unary minus < powers < atoms.
#[derive(Clone, Copy, PartialEq, PartialOrd)]
enum Prec {
    Sum,
    Product,
    Neg,
    Power,
    Atom,
}

/// `e` as a formula; `name(s)` names the symbols (coordinates, parameters, time).
pub fn format(arena: &Arena, e: ExprId, syntax: Syntax, name: &dyn Fn(Sym) -> String) -> String {
    let mut memo: FxHashMap<ExprId, (String, Prec)> = FxHashMap::default();
    // Children first (an explicit stack: DAGs may be deep).
    let mut stack = vec![(e, false)];
    while let Some((id, expanded)) = stack.pop() {
        if memo.contains_key(&id) {
            continue;
        }
        let node = arena.node(id);
        if !expanded {
            stack.push((id, true));
            for c in node.children() {
                if !memo.contains_key(&c) {
                    stack.push((c, false));
                }
            }
            continue;
        }
        let get = |c: ExprId| memo.get(&c).cloned().unwrap_or((String::new(), Prec::Atom));
        let wrap = |(s, p): (String, Prec), min: Prec| {
            if p < min {
                match syntax {
                    Syntax::Text => format!("({s})"),
                    Syntax::Latex => format!("\\left({s}\\right)"),
                }
            } else {
                s
            }
        };
        let out = match node {
            Node::Const(bits) => {
                let x = f64::from_bits(bits);
                let s = if x == x.trunc() && x.abs() < 1e15 {
                    format!("{x:.1}")
                } else {
                    format!("{x}")
                };
                if x < 0.0 {
                    (s, Prec::Sum)
                } else {
                    (s, Prec::Atom)
                }
            }
            Node::Sym(s) => (symbol(s, syntax, name), Prec::Atom),
            Node::Add(a, b) => {
                let (l, r) = (get(a), get(b));
                let rhs = match arena.node(b) {
                    // a + (−x) reads a − x.
                    Node::Neg(x) => format!(" - {}", wrap(get(x), Prec::Product)),
                    _ => match r.0.strip_prefix('-') {
                        Some(rest) if r.1 == Prec::Sum && !rest.contains([' ']) => {
                            format!(" - {rest}")
                        }
                        _ => format!(" + {}", r.0),
                    },
                };
                (format!("{}{rhs}", l.0), Prec::Sum)
            }
            Node::Mul(a, b) => {
                let (l, r) = (wrap(get(a), Prec::Product), wrap(get(b), Prec::Neg));
                let op = match syntax {
                    Syntax::Text => "*",
                    Syntax::Latex => " \\cdot ",
                };
                (format!("{l}{op}{r}"), Prec::Product)
            }
            Node::Div(a, b) => match syntax {
                Syntax::Text => (
                    format!(
                        "{}/{}",
                        wrap(get(a), Prec::Product),
                        wrap(get(b), Prec::Neg)
                    ),
                    Prec::Product,
                ),
                Syntax::Latex => (
                    format!("\\frac{{{}}}{{{}}}", get(a).0, get(b).0),
                    Prec::Atom,
                ),
            },
            Node::Neg(a) => (format!("-{}", wrap(get(a), Prec::Neg)), Prec::Neg),
            Node::Powi(a, n) => match syntax {
                Syntax::Text => (
                    format!("{}.powi({n})", wrap(get(a), Prec::Atom)),
                    Prec::Power,
                ),
                Syntax::Latex => (format!("{}^{{{n}}}", wrap(get(a), Prec::Atom)), Prec::Power),
            },
            Node::Func(f, a) => (function(f, &get(a).0, syntax), Prec::Atom),
            Node::Atan2(y, x) => match syntax {
                Syntax::Text => (format!("atan2({}, {})", get(y).0, get(x).0), Prec::Atom),
                Syntax::Latex => (
                    format!(
                        "\\operatorname{{atan2}}\\left({}, {}\\right)",
                        get(y).0,
                        get(x).0
                    ),
                    Prec::Atom,
                ),
            },
        };
        memo.insert(id, (cut(out.0), out.1));
    }
    memo.remove(&e).map(|(s, _)| s).unwrap_or_default()
}

/// `s` cut to [`MAX_CHARS`] characters.
fn cut(s: String) -> String {
    if s.chars().count() <= MAX_CHARS {
        s
    } else {
        let mut t: String = s.chars().take(MAX_CHARS).collect();
        t.push('…');
        t
    }
}

/// A symbol's name (`der(x)` / `\dot{x}` for a velocity).
fn symbol(s: Sym, syntax: Syntax, name: &dyn Fn(Sym) -> String) -> String {
    match (syntax, s) {
        (Syntax::Text, Sym::Vel(_)) => format!("der({})", name(s)),
        (Syntax::Text, _) => name(s),
        (Syntax::Latex, Sym::Vel(_)) => format!("\\dot{{{}}}", latex_name(&name(s))),
        (Syntax::Latex, _) => latex_name(&name(s)),
    }
}

/// A name in LaTeX: Greek letters by name (`theta` → `\theta`, `Phi` → `\Phi`), a trailing
/// `_suffix` or digits as a subscript (`l1` → `l_{1}`, `m_r` → `m_{r}`).
fn latex_name(n: &str) -> String {
    const GREEK: &[&str] = &[
        "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa",
        "lambda", "mu", "nu", "xi", "pi", "rho", "sigma", "tau", "upsilon", "phi", "chi", "psi",
        "omega", "Gamma", "Delta", "Theta", "Lambda", "Xi", "Pi", "Sigma", "Upsilon", "Phi", "Psi",
        "Omega",
    ];
    let letter = |s: &str| {
        if GREEK.contains(&s) {
            format!("\\{s}")
        } else if s.chars().count() == 1 {
            s.to_string()
        } else {
            format!("\\mathrm{{{}}}", s.replace('_', "\\_"))
        }
    };
    if let Some((head, sub)) = n.split_once('_') {
        if !head.is_empty() && !sub.is_empty() {
            return format!("{}_{{{}}}", letter(head), sub.replace('_', ","));
        }
    }
    let digits = n.trim_end_matches(|c: char| c.is_ascii_digit());
    if !digits.is_empty() && digits.len() < n.len() {
        return format!("{}_{{{}}}", letter(digits), &n[digits.len()..]);
    }
    letter(n)
}

/// `f(x)` in the syntax.
fn function(f: Func, x: &str, syntax: Syntax) -> String {
    match syntax {
        Syntax::Text => format!("{}({x})", f.name()),
        Syntax::Latex => match f {
            Func::Sqrt => format!("\\sqrt{{{x}}}"),
            Func::Abs => format!("\\left|{x}\\right|"),
            Func::Exp => format!("e^{{{x}}}"),
            Func::Sign => format!("\\operatorname{{sign}}\\left({x}\\right)"),
            Func::Ln => format!("\\ln\\left({x}\\right)"),
            _ => format!("\\{}\\left({x}\\right)", f.name()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::{format, latex_name, Syntax};
    use crate::expr::{Arena, Func, Sym};

    fn names(s: Sym) -> String {
        match s {
            Sym::Coord(0) | Sym::Vel(0) => "theta".into(),
            Sym::Coord(_) | Sym::Vel(_) => "s".into(),
            Sym::Param(_) => "l1".into(),
            _ => "t".into(),
        }
    }

    #[test]
    fn a_slider_crank_equation_prints_as_written() {
        let mut a = Arena::new();
        let (th, s, l1) = (
            a.sym(Sym::Coord(0)),
            a.sym(Sym::Coord(1)),
            a.sym(Sym::Param(0)),
        );
        let c = a.func(Func::Cos, th);
        let lc = a.mul(l1, c);
        let e = a.sub(lc, s);
        let text = format(&a, e, Syntax::Text, &names);
        assert_eq!(text, "l1*cos(theta) - s");
        let tex = format(&a, e, Syntax::Latex, &names);
        assert_eq!(tex, "l_{1} \\cdot \\cos\\left(\\theta\\right) - s");
        let v = a.sym(Sym::Vel(0));
        let sum = a.add(s, l1);
        let q = a.div(v, sum);
        assert_eq!(format(&a, q, Syntax::Text, &names), "der(theta)/(s + l1)");
        assert_eq!(
            format(&a, q, Syntax::Latex, &names),
            "\\frac{\\dot{\\theta}}{s + l_{1}}"
        );
    }

    #[test]
    fn names_become_latex_symbols() {
        assert_eq!(latex_name("phi"), "\\phi");
        assert_eq!(latex_name("m_r"), "m_{r}");
        assert_eq!(latex_name("a_0"), "a_{0}");
        assert_eq!(latex_name("I1"), "I_{1}");
        assert_eq!(latex_name("mom"), "\\mathrm{mom}");
    }
}
