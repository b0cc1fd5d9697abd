//! A token-level mutator of mechanism texts.
//!
//! The text is split into tokens (identifiers, numbers, punctuation, comments, whitespace)
//! by a small lexer of its own, so that it also works on texts that no longer tokenize as
//! Rust. Each mutation edits tokens: deletes, duplicates or swaps them; replaces numbers by
//! extreme values (0, -0, 1e308, 1e400, subnormals, NaN- and infinity-producing forms,
//! `i32` limits as `powi` exponents); replaces names by raw identifiers, keywords, names the
//! generated code binds, or typos; deepens the nesting of parentheses or calls; lengthens
//! sums; inserts stray tokens; splices lines of another input.

use crate::dice::Dice;

/// One lexical token of a mechanism text.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    /// An identifier or keyword, raw ones included (`r#y`).
    Ident(String),
    /// A number literal as written.
    Number(String),
    /// A comment (`// ...` or `/// ...`), up to the end of its line.
    Comment(String),
    /// Whitespace.
    Space(String),
    /// Any other single character.
    Punct(char),
}

impl Tok {
    fn text(&self) -> String {
        match self {
            Tok::Ident(s) | Tok::Number(s) | Tok::Comment(s) | Tok::Space(s) => s.clone(),
            Tok::Punct(c) => c.to_string(),
        }
    }
}

/// Splits `src` into tokens; joining their texts gives `src` back.
pub fn lex(src: &str) -> Vec<Tok> {
    let chars: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let take = |i: &mut usize, f: &dyn Fn(char) -> bool| {
        let start = *i;
        while *i < chars.len() && f(chars[*i]) {
            *i += 1;
        }
        chars[start..*i].iter().collect::<String>()
    };
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            out.push(Tok::Space(take(&mut i, &|c| c.is_whitespace())));
        } else if c == '/' && chars.get(i + 1) == Some(&'/') {
            out.push(Tok::Comment(take(&mut i, &|c| c != '\n')));
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            i += 1;
            if c == 'r' && chars.get(i) == Some(&'#') {
                i += 1;
            }
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(Tok::Ident(chars[start..i].iter().collect()));
        } else if c.is_ascii_digit() {
            let start = i;
            while i < chars.len() {
                let d = chars[i];
                let exp_sign = (d == '-' || d == '+')
                    && matches!(chars.get(i.wrapping_sub(1)), Some('e' | 'E'));
                // A `.` followed by a letter is a method call (`2.0.sin()` keeps `2.0`).
                let dot = d == '.'
                    && !matches!(chars.get(i + 1), Some(n) if n.is_alphabetic() || *n == '.');
                if d.is_ascii_alphanumeric() || d == '_' || exp_sign || dot {
                    i += 1;
                } else {
                    break;
                }
            }
            out.push(Tok::Number(chars[start..i].iter().collect()));
        } else {
            out.push(Tok::Punct(c));
            i += 1;
        }
    }
    out
}

/// Joins tokens back into text.
pub fn unlex(toks: &[Tok]) -> String {
    toks.iter().map(Tok::text).collect()
}

/// Extreme numbers (as source text) that replace literals.
const EXTREME_NUMBERS: &[&str] = &[
    "0",
    "0.0",
    "-0.0",
    "(-0.0)",
    "1e308",
    "1e400",
    "-1e400",
    "1e-400",
    "5e-324",
    "1e-320",
    "1.7976931348623157e308",
    "(1e200 * 1e200)",
    "(0.0 / 0.0)",
    "(1.0 / 0.0)",
    "(1e308 + 1e308)",
    "(1e308 - 1e308 * 2.0)",
    "sqrt(-1.0)",
    "ln(0.0)",
    "ln(-1.0)",
    "exp(1000.0)",
    "acos(2.0)",
    "asin(-1.5)",
    "(0.0 * 1e400)",
    "2147483647",
    "-2147483648",
    "2147483648",
    "4294967296",
    "9223372036854775807",
    "18446744073709551616",
    "1_000.0",
    "0x10",
    "1u8",
    "1.0f32",
    "1e",
    "1.",
    "123456789012345678901234567890.0",
];

/// `powi` exponents that stress integer arithmetic.
const EXTREME_EXPONENTS: &[&str] = &[
    "2147483647",
    "-2147483648",
    "2147483646",
    "-2147483647",
    "1073741824",
    "65536",
    "-65536",
    "3000000000",
    "0",
    "-1",
    "1000",
];

/// Names that replace identifiers: keywords, names the generated code binds, reserved
/// names, built-in functions, raw forms.
const TRICKY_NAMES: &[&str] = &[
    "r#match",
    "r#y",
    "r#t",
    "r#q",
    "r#p",
    "r#fn",
    "r#type",
    "r#gen",
    "match",
    "fn",
    "mod",
    "self",
    "Self",
    "crate",
    "super",
    "gen",
    "async",
    "await",
    "dyn",
    "let",
    "const",
    "pub",
    "None",
    "Some",
    "Ok",
    "Err",
    "true",
    "false",
    "f",
    "g",
    "t",
    "q",
    "p",
    "qd",
    "b",
    "y",
    "x",
    "pi",
    "PI",
    "t0",
    "t1",
    "live0",
    "b_0",
    "sin",
    "vec2",
    "vec3",
    "der",
    "powi",
    "norm",
    "rot_z",
    "body",
    "coord",
    "param",
    "constraint",
    "gravity",
    "f64",
    "std",
    "core",
    "mechgen",
    "nalgebra",
    "Params",
    "Model",
    "NQ",
    "residual",
    "_",
    "__",
    "ℓ",
    "x\u{301}",
];

/// Punctuation and odd tokens to insert.
const STRAY: &[&str] = &[
    ";",
    ",",
    "{",
    "}",
    "(",
    ")",
    "==",
    "=",
    ".",
    "#",
    "@",
    "$",
    "'a",
    "\"s\"",
    "!",
    "^",
    "&&",
    "::",
    "->",
    "\t",
    "\u{a0}",
    "ℓ",
    "°",
    "\u{200b}",
    "\\",
    "?",
    "[",
    "]",
    "..",
    "...",
    "/*",
    "*/",
    "/**/",
    "///x\n",
    "\n",
    "#![seed = 1]",
    "#![seed = -1]",
    "#[doc = \"x\"]",
];

fn significant(toks: &[Tok]) -> Vec<usize> {
    (0..toks.len())
        .filter(|&i| !matches!(toks[i], Tok::Space(_)))
        .collect()
}

fn of_kind(toks: &[Tok], f: impl Fn(&Tok) -> bool) -> Vec<usize> {
    (0..toks.len()).filter(|&i| f(&toks[i])).collect()
}

/// A repeat count: usually small, sometimes hundreds, rarely thousands.
fn count(dice: &mut Dice, small: usize, large: usize, huge: usize) -> usize {
    match dice.below(20) {
        0 => dice.range(large, huge),
        1..=3 => dice.range(small, large),
        _ => dice.range(1, small),
    }
}

fn typo(dice: &mut Dice, name: &str) -> String {
    let mut c: Vec<char> = name.chars().collect();
    if c.is_empty() {
        return "x".into();
    }
    let i = dice.below(c.len());
    match dice.below(4) {
        0 if c.len() > 1 => {
            c.remove(i);
        }
        1 if i + 1 < c.len() => c.swap(i, i + 1),
        2 => c.insert(i, *dice.pick(&['a', 'x', '_', '1'])),
        _ => c[i] = *dice.pick(&['o', 'l', '1', '_', 'Z']),
    }
    c.into_iter().collect()
}

/// Applies one random mutation to `toks`; `other` is another input to splice from.
fn mutate_once(dice: &mut Dice, toks: &mut Vec<Tok>, other: &str) {
    let sig = significant(toks);
    if sig.is_empty() {
        toks.push(Tok::Ident("mod".into()));
        return;
    }
    let numbers = of_kind(toks, |t| matches!(t, Tok::Number(_)));
    let idents = of_kind(toks, |t| matches!(t, Tok::Ident(_)));
    let atoms: Vec<usize> = numbers.iter().chain(idents.iter()).copied().collect();
    match dice.below(14) {
        0 => {
            let i = *dice.pick(&sig);
            toks.remove(i);
        }
        1 => {
            let i = *dice.pick(&sig);
            let t = toks[i].clone();
            toks.insert(i, t);
        }
        2 => {
            let (i, j) = (*dice.pick(&sig), *dice.pick(&sig));
            toks.swap(i, j);
        }
        3 | 4 if !numbers.is_empty() => {
            let i = *dice.pick(&numbers);
            toks[i] = Tok::Number(dice.pick(EXTREME_NUMBERS).to_string());
        }
        5 if !idents.is_empty() => {
            let i = *dice.pick(&idents);
            let Tok::Ident(name) = toks[i].clone() else {
                return;
            };
            let new = match dice.below(4) {
                0 if !name.starts_with("r#") => format!("r#{name}"),
                1 => typo(dice, &name),
                2 => {
                    let j = *dice.pick(&idents);
                    toks[j].text()
                }
                _ => dice.pick(TRICKY_NAMES).to_string(),
            };
            // Renaming every occurrence keeps the input valid but for the new name.
            if dice.chance(1, 2) {
                for t in toks.iter_mut() {
                    if *t == Tok::Ident(name.clone()) {
                        *t = Tok::Ident(new.clone());
                    }
                }
            } else {
                toks[i] = Tok::Ident(new);
            }
        }
        6 if !atoms.is_empty() => {
            // Deeper nesting: parentheses, negations or calls around an atom.
            let i = *dice.pick(&atoms);
            let n = count(dice, 8, 300, 5000);
            let (open, close) = match dice.below(4) {
                0 | 1 => ("(", ")"),
                2 => ("-(", ")"),
                _ => (*dice.pick(&["sin(", "abs(", "sqrt(", "atan("]), ")"),
            };
            let t = toks[i].text();
            toks[i] = Tok::Number(format!("{}{t}{}", open.repeat(n), close.repeat(n)));
        }
        7 if !atoms.is_empty() => {
            // A longer sum (or product) in place of an atom.
            let i = *dice.pick(&atoms);
            let n = count(dice, 10, 500, 20000);
            let t = toks[i].text();
            let term = match dice.below(3) {
                0 => " + 0.0".to_string(),
                1 => format!(" + {t} - {t}"),
                _ => " * 1.0".to_string(),
            };
            toks[i] = Tok::Number(format!("({t}{})", term.repeat(n)));
        }
        8 if !idents.is_empty() => {
            // An extreme `powi` exponent after an atom.
            let i = *dice.pick(&atoms);
            let e = dice.pick(EXTREME_EXPONENTS);
            let t = toks[i].text();
            let new = if dice.chance(1, 2) {
                format!("({t}).powi({e})")
            } else {
                format!("powi({t}, {e}).powi({e})")
            };
            toks[i] = Tok::Number(new);
        }
        9 => {
            let i = dice.below(toks.len() + 1);
            let s = dice.pick(STRAY).to_string();
            toks.insert(i, Tok::Number(s));
        }
        10 => {
            // Splice a line of the other input after a random line.
            let lines: Vec<&str> = other.lines().collect();
            if lines.is_empty() {
                return;
            }
            let line = dice.pick(&lines).to_string();
            let spaces = of_kind(toks, |t| matches!(t, Tok::Space(s) if s.contains('\n')));
            let at = if spaces.is_empty() {
                toks.len()
            } else {
                *dice.pick(&spaces) + 1
            };
            toks.insert(at, Tok::Number(format!("{line}\n")));
        }
        11 => {
            // Duplicate a line (same names declared twice, duplicate modules, ...).
            let text = unlex(toks);
            let lines: Vec<&str> = text.lines().collect();
            let k = dice.below(lines.len());
            let mut out: Vec<String> = lines.iter().map(|s| s.to_string()).collect();
            if out.is_empty() {
                return;
            }
            if dice.chance(1, 4) {
                // The whole text twice: duplicate module names.
                *toks = lex(&format!("{text}\n{text}"));
                return;
            }
            out.insert(k, lines[k].to_string());
            *toks = lex(&out.join("\n"));
        }
        12 => {
            // Whitespace that moves columns: tabs, wide characters.
            let spaces = of_kind(toks, |t| matches!(t, Tok::Space(_)));
            if let Some(&i) = spaces.get(dice.below(spaces.len().max(1))) {
                toks[i] = Tok::Space(dice.pick(&["\t", " \t ", "\u{3000}", "\r\n"]).to_string());
            }
        }
        _ => {
            // Truncate the text.
            let i = *dice.pick(&sig);
            toks.truncate(i);
        }
    }
}

/// Mutates `src` by one to four token-level mutations; `other` is another input whose
/// lines may be spliced in.
pub fn mutate(dice: &mut Dice, src: &str, other: &str) -> String {
    let mut toks = lex(src);
    let n = dice.range(1, 4);
    for _ in 0..n {
        mutate_once(dice, &mut toks, other);
    }
    unlex(&toks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexing_round_trips() {
        let src = "/// doc\npub mod a { coord r#y = 1e-3; let v = 2.0.sin() + x.powi(2); }\n";
        let toks = lex(src);
        assert_eq!(unlex(&toks), src);
        assert!(toks.contains(&Tok::Ident("r#y".into())));
        assert!(toks.contains(&Tok::Number("1e-3".into())));
        assert!(toks.contains(&Tok::Number("2.0".into())));
        assert!(toks.contains(&Tok::Comment("/// doc".into())));
    }

    #[test]
    fn mutation_is_deterministic_and_changes_the_text() {
        let src = "pub mod a { coord x = 0.5; coord y = 0.1; constraint x * x + y == 1.0; }";
        let mut changed = 0;
        for seed in 0..20 {
            let a = mutate(&mut Dice::from_seed(seed), src, src);
            let b = mutate(&mut Dice::from_seed(seed), src, src);
            assert_eq!(a, b);
            changed += usize::from(a != src);
        }
        assert!(changed >= 15, "{changed}");
    }
}
