//! The syntax tree of the mechanism language, parsed with syn.
//!
//! ```text
//! file        := ("#![" option "]")* module+      (options: crate::options)
//! module      := doc* ("pub" | "pub(crate)")? "mod" NAME "{" item* "}"
//! item        := doc* ( "param" NAME ("=" EXPR)? ";"
//!                     | "const" NAME "=" EXPR ";"
//!                     | "coord" NAME ("=" EXPR)? ";"
//!                     | "let" NAME "=" EXPR ";"
//!                     | "frame" NAME "=" EXPR ";"
//!                     | "constraint" EXPR "==" EXPR ";"
//!                     | "joint" NAME "=" KIND "(" EXPR ("," EXPR)* ")" ";"
//!                     | "velocity_constraint" EXPR "==" EXPR ";"
//!                     | "independent" (CHART ":")? NAME ("," NAME)* ";"
//!                     | "body" NAME "{" FIELD "=" EXPR ("," FIELD "=" EXPR)* "}"
//!                     | "gravity" "=" EXPR ";"
//!                     | "spring" NAME "{" FIELD "=" EXPR ("," ...)* "}"
//!                     | "force" COORD "=" EXPR ";"
//!                     | "mass_matrix" "{" "(" COORD "," COORD ")" "=" EXPR ("," ...)* "}"
//!                     | "generalized_force" "{" COORD "=" EXPR ("," ...)* "}" )
//! ```
//! Expressions are Rust expressions (see [`crate::model`] for what they may contain).

use proc_macro2::Span;
use syn::parse::discouraged::Speculative;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{braced, parenthesized, Attribute, Expr, Ident, Token};

mod kw {
    syn::custom_keyword!(param);
    syn::custom_keyword!(input);
    syn::custom_keyword!(coord);
    syn::custom_keyword!(constraint);
    syn::custom_keyword!(independent);
    syn::custom_keyword!(body);
    syn::custom_keyword!(gravity);
    syn::custom_keyword!(spring);
    syn::custom_keyword!(force);
    syn::custom_keyword!(mass_matrix);
    syn::custom_keyword!(generalized_force);
    syn::custom_keyword!(seed);
    syn::custom_keyword!(output);
    syn::custom_keyword!(inequality);
    syn::custom_keyword!(restitution);
    syn::custom_keyword!(friction);
    syn::custom_keyword!(tangent);
    syn::custom_keyword!(slip);
    syn::custom_keyword!(radius);
    syn::custom_keyword!(joint);
    syn::custom_keyword!(velocity_constraint);
    syn::custom_keyword!(frame);
}

/// The item keywords, for error messages.
pub const ITEM_KEYWORDS: &str = "param, const, coord, let, constraint, independent, body, gravity, spring, force, mass_matrix, generalized_force, output, inequality, joint, velocity_constraint, frame";

/// A whole input: file-level options and its `mod` blocks.
#[derive(Debug)]
pub struct File {
    /// The options the input gives itself (`#![seed = N]`, `#![generic]`, …).
    pub options: crate::options::FileOptions,
    /// The mechanism modules.
    pub modules: Vec<Module>,
}

/// One `mod NAME { ... }` block.
#[derive(Debug)]
pub struct Module {
    /// Doc comment lines.
    pub docs: Vec<String>,
    /// Visibility as written (`pub`, `pub(crate)`, or empty).
    pub vis: String,
    /// The module name.
    pub name: Ident,
    /// Span of the module name.
    pub span: Span,
    /// Items in source order.
    pub items: Vec<Item>,
}

/// `name = expr` inside a `body { ... }` or `spring { ... }`.
#[derive(Debug)]
pub struct Field {
    /// Field name.
    pub name: Ident,
    /// Its value.
    pub value: Expr,
}

/// One item of a module.
#[derive(Debug)]
pub enum Item {
    /// `param NAME (= default)?;`
    Param {
        /// Doc lines.
        docs: Vec<String>,
        /// Name.
        name: Ident,
        /// Default value.
        default: Option<Expr>,
    },
    /// `input NAME (= default)?;`: a run-time input (a field of `Params` that a controller
    /// sets between intervals), usable only in `force` and `generalized_force`.
    Input {
        /// Doc lines.
        docs: Vec<String>,
        /// Name.
        name: Ident,
        /// Default value (0 when not given).
        default: Option<Expr>,
    },
    /// `const NAME = value;`
    Const {
        /// Name.
        name: Ident,
        /// Value.
        value: Expr,
    },
    /// `coord NAME (= nominal)?;`
    Coord {
        /// Name.
        name: Ident,
        /// Nominal value.
        nominal: Option<Expr>,
    },
    /// `let NAME = value;`
    Let {
        /// Name.
        name: Ident,
        /// Value.
        value: Expr,
    },
    /// `frame NAME = value;`: a `let` whose value must be a frame.
    Frame {
        /// Name.
        name: Ident,
        /// Value.
        value: Expr,
    },
    /// `constraint lhs == rhs;`, or with dry friction in the joint whose reaction it is:
    /// `constraint NAME: lhs == rhs, friction = μ, slip = v (, radius = r)?;` (the options
    /// in any order).
    Constraint {
        /// The name (only with friction: it names the friction group).
        name: Option<Ident>,
        /// The whole equation as written.
        equation: Expr,
        /// Coulomb friction coefficient of the joint (default: frictionless).
        friction: Option<Box<Expr>>,
        /// The joint's slip: a scalar whose rate (or which, as a velocity expression in
        /// `der(q)`, itself) is the sliding velocity the friction opposes.
        slip: Option<Box<Expr>>,
        /// The radius scaling the normal force (a pin's friction torque is `μ r |N|`).
        radius: Option<Box<Expr>>,
    },
    /// `velocity_constraint lhs == rhs;`: a constraint linear in the velocities `der(q)`
    /// (rolling without slipping, a knife edge).
    VelocityConstraint {
        /// The whole equation as written.
        equation: Expr,
    },
    /// `independent a, b;` (the primary chart) or `independent NAME: a, b;` (a named chart:
    /// the same mechanism with other independent coordinates, e.g. forward kinematics).
    Independent {
        /// The chart's name, for a named chart.
        chart: Option<Ident>,
        /// Coordinate names.
        names: Vec<Ident>,
        /// Span of the item.
        span: Span,
    },
    /// `body NAME { ... }`
    Body {
        /// Name.
        name: Ident,
        /// Fields.
        fields: Vec<Field>,
    },
    /// `gravity = vec;`
    Gravity {
        /// The gravity vector.
        value: Expr,
        /// Span of the keyword.
        span: Span,
    },
    /// `spring NAME { ... }`
    Spring {
        /// Name.
        name: Ident,
        /// Fields.
        fields: Vec<Field>,
    },
    /// `force COORD = expr;`
    Force {
        /// Coordinate.
        coord: Ident,
        /// Generalised force.
        value: Expr,
    },
    /// `mass_matrix { (a, b) = expr, ... }`
    MassMatrix {
        /// Entries.
        entries: Vec<(Ident, Ident, Expr)>,
    },
    /// `generalized_force { a = expr, ... }`
    GeneralizedForce {
        /// Entries.
        entries: Vec<Field>,
    },
    /// `inequality NAME: lhs >= rhs (, restitution = e)? (, friction = μ)? (, tangent =
    /// v)?;` (the options in any order)
    Inequality {
        /// Name.
        name: Ident,
        /// The comparison as written.
        condition: Expr,
        /// Restitution coefficient of impacts on it (default 0: plastic).
        restitution: Option<Box<Expr>>,
        /// Coulomb friction coefficient of the contact (default: frictionless).
        friction: Option<Box<Expr>>,
        /// The contact's slip: a scalar (planar) or `vec2` (spatial) whose rate, or which as
        /// a velocity expression in `der(q)` itself, is the tangential slip velocity.
        tangent: Option<Box<Expr>>,
    },
    /// `joint NAME = kind(args);`: constraint equations between two frames (`revolute(A,
    /// B)`, …) or points (`distance(p, q, l)`, …).
    Joint {
        /// Name.
        name: Ident,
        /// The joint as written (a call of a joint kind).
        value: Expr,
    },
    /// `output NAME = expr;` (a scalar, `vec2` or `vec3` of the configuration and time).
    Output {
        /// Doc lines.
        docs: Vec<String>,
        /// Name.
        name: Ident,
        /// Value.
        value: Expr,
    },
}

/// The texts of the outer attributes at `input`, all doc comments (as [`docs`] of
/// `Attribute::parse_outer`). The leading `#[doc = "…"]` whose literal has no escapes (or is
/// raw) are read straight off the tokens; syn parses the rest, from the first other one.
fn outer_docs(input: ParseStream) -> syn::Result<Vec<String>> {
    let mut out = Vec::new();
    while let Some(text) = input.step(|c| {
        Ok(match plain_doc(*c) {
            Some((text, rest)) => (Some(text), rest),
            None => (None, *c),
        })
    })? {
        out.push(text);
    }
    let attrs = input.call(Attribute::parse_outer)?;
    out.extend(docs(&attrs)?);
    Ok(out)
}

/// The text of `#[doc = LIT]` at `c` when `LIT` is a string literal that is raw or holds
/// no `\` and no carriage return (its text is then what is between the quotes), and the
/// cursor after it; `None` for anything else.
fn plain_doc(c: syn::buffer::Cursor) -> Option<(String, syn::buffer::Cursor)> {
    use proc_macro2::{Delimiter, Spacing};
    if c.group(Delimiter::None).is_some() {
        return None;
    }
    let (pound, rest) = c.punct()?;
    if pound.as_char() != '#' || rest.group(Delimiter::None).is_some() {
        return None;
    }
    let (inner, _, rest) = rest.group(Delimiter::Bracket)?;
    if inner.group(Delimiter::None).is_some() {
        return None;
    }
    let (name, inner) = inner.ident()?;
    if name != "doc" || inner.group(Delimiter::None).is_some() {
        return None;
    }
    let (eq, inner) = inner.punct()?;
    if eq.as_char() != '='
        || eq.spacing() != Spacing::Alone
        || inner.group(Delimiter::None).is_some()
    {
        return None;
    }
    let (lit, inner) = inner.literal()?;
    if !inner.eof() {
        return None;
    }
    let repr = lit.to_string();
    let text = match repr.strip_prefix('r') {
        Some(raw) => {
            let hashes = raw.len() - raw.trim_start_matches('#').len();
            let body = raw.get(hashes..raw.len().checked_sub(hashes)?)?;
            let body = body.strip_prefix('"')?.strip_suffix('"')?;
            if raw[raw.len() - hashes..].bytes().any(|b| b != b'#') {
                return None;
            }
            body
        }
        None => repr.strip_prefix('"')?.strip_suffix('"')?,
    };
    if text.contains(['\\', '\r']) {
        return None;
    }
    Some((text.to_string(), rest))
}

fn docs(attrs: &[Attribute]) -> syn::Result<Vec<String>> {
    let mut out = Vec::new();
    for a in attrs {
        if a.path().is_ident("doc") {
            if let syn::Meta::NameValue(nv) = &a.meta {
                if let Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) = &nv.value
                {
                    out.push(s.value());
                    continue;
                }
            }
        }
        return Err(syn::Error::new(
            a.span(),
            "only doc comments (`///`) are supported as attributes here",
        ));
    }
    Ok(out)
}

impl Parse for Field {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let name: Ident = input.parse()?;
        input.parse::<Token![=]>()?;
        let value: Expr = super::expr::expr(input)?;
        Ok(Field { name, value })
    }
}

fn fields(input: ParseStream) -> syn::Result<Vec<Field>> {
    let content;
    braced!(content in input);
    let list = Punctuated::<Field, Token![,]>::parse_terminated(&content)?;
    Ok(list.into_iter().collect())
}

struct MassEntry(Ident, Ident, Expr);

impl Parse for MassEntry {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let inner;
        parenthesized!(inner in input);
        let a: Ident = inner.parse()?;
        inner.parse::<Token![,]>()?;
        let b: Ident = inner.parse()?;
        if !inner.is_empty() {
            return Err(inner.error(
                "a mass matrix entry is `(row_coordinate, column_coordinate) = expression`",
            ));
        }
        input.parse::<Token![=]>()?;
        Ok(MassEntry(a, b, super::expr::expr(input)?))
    }
}

fn semi(input: ParseStream, what: &str) -> syn::Result<()> {
    if input.peek(Token![;]) {
        input.parse::<Token![;]>()?;
        Ok(())
    } else {
        Err(stray(input).unwrap_or_else(|| input.error(format!("expected `;` after the {what}"))))
    }
}

/// An error naming the next token when it is a character with no meaning in the language
/// (`$`, `@`, `#`, `~`, `?`, `\`), else `None`.
fn stray(input: ParseStream) -> Option<syn::Error> {
    let (p, _) = input.cursor().punct()?;
    "$@#~?\\".contains(p.as_char()).then(|| {
        syn::Error::new(
            p.span(),
            format!(
                "unexpected character `{}`: not part of the mechanism language",
                p.as_char()
            ),
        )
    })
}

/// `NAME (= default)?;` after `param` or `input` (`what` names the item in errors).
fn name_and_default(input: ParseStream, what: &str) -> syn::Result<(Ident, Option<Expr>)> {
    let name: Ident = input.parse()?;
    let default = if input.peek(Token![=]) {
        input.parse::<Token![=]>()?;
        Some(super::expr::expr(input)?)
    } else {
        None
    };
    semi(input, what)?;
    Ok((name, default))
}

impl Parse for Item {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let docs = outer_docs(input)?;
        let la = input.lookahead1();
        if la.peek(kw::param) {
            input.parse::<kw::param>()?;
            let (name, default) = name_and_default(input, "parameter")?;
            Ok(Item::Param {
                docs,
                name,
                default,
            })
        } else if la.peek(kw::input) {
            input.parse::<kw::input>()?;
            let (name, default) = name_and_default(input, "input")?;
            Ok(Item::Input {
                docs,
                name,
                default,
            })
        } else if la.peek(Token![const]) {
            input.parse::<Token![const]>()?;
            let name: Ident = input.parse()?;
            input.parse::<Token![=]>()?;
            let value = super::expr::expr(input)?;
            semi(input, "constant")?;
            Ok(Item::Const { name, value })
        } else if la.peek(kw::coord) {
            input.parse::<kw::coord>()?;
            let name: Ident = input.parse()?;
            let nominal = if input.peek(Token![=]) {
                input.parse::<Token![=]>()?;
                Some(super::expr::expr(input)?)
            } else {
                None
            };
            semi(input, "coordinate")?;
            Ok(Item::Coord { name, nominal })
        } else if la.peek(Token![let]) {
            input.parse::<Token![let]>()?;
            let name: Ident = input.parse()?;
            input.parse::<Token![=]>()?;
            let value = super::expr::expr(input)?;
            semi(input, "`let`")?;
            Ok(Item::Let { name, value })
        } else if la.peek(kw::frame) {
            input.parse::<kw::frame>()?;
            let name: Ident = input.parse()?;
            input.parse::<Token![=]>()?;
            let value = super::expr::expr(input)?;
            semi(input, "frame")?;
            Ok(Item::Frame { name, value })
        } else if la.peek(kw::constraint) {
            input.parse::<kw::constraint>()?;
            let name = if input.peek(Ident) && input.peek2(Token![:]) && !input.peek2(Token![::]) {
                let name: Ident = input.parse()?;
                input.parse::<Token![:]>()?;
                Some(name)
            } else {
                None
            };
            let equation = super::expr::expr(input)?;
            let mut friction = None;
            let mut slip = None;
            let mut radius = None;
            while input.peek(Token![,]) {
                input.parse::<Token![,]>()?;
                let la = input.lookahead1();
                let (slot, key) = if la.peek(kw::friction) {
                    input.parse::<kw::friction>()?;
                    (&mut friction, "friction")
                } else if la.peek(kw::slip) {
                    input.parse::<kw::slip>()?;
                    (&mut slip, "slip")
                } else if la.peek(kw::radius) {
                    input.parse::<kw::radius>()?;
                    (&mut radius, "radius")
                } else {
                    return Err(la.error());
                };
                let at = input.span();
                input.parse::<Token![=]>()?;
                let value: Expr = super::expr::expr(input)?;
                if slot.is_some() {
                    return Err(syn::Error::new(
                        at,
                        format!("`{key}` is given twice for this constraint"),
                    ));
                }
                *slot = Some(Box::new(value));
            }
            semi(input, "constraint")?;
            Ok(Item::Constraint {
                name,
                equation,
                friction,
                slip,
                radius,
            })
        } else if la.peek(kw::velocity_constraint) {
            input.parse::<kw::velocity_constraint>()?;
            let equation = super::expr::expr(input)?;
            semi(input, "velocity constraint")?;
            Ok(Item::VelocityConstraint { equation })
        } else if la.peek(kw::independent) {
            let k = input.parse::<kw::independent>()?;
            let chart = if input.peek(Ident) && input.peek2(Token![:]) && !input.peek2(Token![::]) {
                let name: Ident = input.parse()?;
                input.parse::<Token![:]>()?;
                Some(name)
            } else {
                None
            };
            let names = Punctuated::<Ident, Token![,]>::parse_separated_nonempty(input)?;
            semi(input, "list of independent coordinates")?;
            Ok(Item::Independent {
                chart,
                names: names.into_iter().collect(),
                span: k.span,
            })
        } else if la.peek(kw::body) {
            input.parse::<kw::body>()?;
            let name = input.parse()?;
            Ok(Item::Body {
                name,
                fields: fields(input)?,
            })
        } else if la.peek(kw::gravity) {
            let k = input.parse::<kw::gravity>()?;
            input.parse::<Token![=]>()?;
            let value = super::expr::expr(input)?;
            semi(input, "gravity vector")?;
            Ok(Item::Gravity {
                value,
                span: k.span,
            })
        } else if la.peek(kw::spring) {
            input.parse::<kw::spring>()?;
            let name = input.parse()?;
            Ok(Item::Spring {
                name,
                fields: fields(input)?,
            })
        } else if la.peek(kw::force) {
            input.parse::<kw::force>()?;
            let coord = input.parse()?;
            input.parse::<Token![=]>()?;
            let value = super::expr::expr(input)?;
            semi(input, "force")?;
            Ok(Item::Force { coord, value })
        } else if la.peek(kw::mass_matrix) {
            input.parse::<kw::mass_matrix>()?;
            let content;
            braced!(content in input);
            let list = Punctuated::<MassEntry, Token![,]>::parse_terminated(&content)?;
            Ok(Item::MassMatrix {
                entries: list
                    .into_iter()
                    .map(|MassEntry(a, b, e)| (a, b, e))
                    .collect(),
            })
        } else if la.peek(kw::inequality) {
            input.parse::<kw::inequality>()?;
            let name: Ident = input.parse()?;
            input.parse::<Token![:]>()?;
            let condition = super::expr::expr(input)?;
            let mut restitution = None;
            let mut friction = None;
            let mut tangent = None;
            while input.peek(Token![,]) {
                input.parse::<Token![,]>()?;
                let la = input.lookahead1();
                let (slot, key) = if la.peek(kw::restitution) {
                    input.parse::<kw::restitution>()?;
                    (&mut restitution, "restitution")
                } else if la.peek(kw::friction) {
                    input.parse::<kw::friction>()?;
                    (&mut friction, "friction")
                } else if la.peek(kw::tangent) {
                    input.parse::<kw::tangent>()?;
                    (&mut tangent, "tangent")
                } else {
                    return Err(la.error());
                };
                let at = input.span();
                input.parse::<Token![=]>()?;
                let value: Expr = super::expr::expr(input)?;
                if slot.is_some() {
                    return Err(syn::Error::new(
                        at,
                        format!("`{key}` is given twice for this inequality"),
                    ));
                }
                *slot = Some(Box::new(value));
            }
            semi(input, "inequality")?;
            Ok(Item::Inequality {
                name,
                condition,
                restitution,
                friction,
                tangent,
            })
        } else if la.peek(kw::joint) {
            input.parse::<kw::joint>()?;
            let name: Ident = input.parse()?;
            input.parse::<Token![=]>()?;
            let value = super::expr::expr(input)?;
            semi(input, "joint")?;
            Ok(Item::Joint { name, value })
        } else if la.peek(kw::output) {
            input.parse::<kw::output>()?;
            let name: Ident = input.parse()?;
            input.parse::<Token![=]>()?;
            let value = super::expr::expr(input)?;
            semi(input, "output")?;
            Ok(Item::Output { docs, name, value })
        } else if la.peek(kw::generalized_force) {
            input.parse::<kw::generalized_force>()?;
            Ok(Item::GeneralizedForce {
                entries: fields(input)?,
            })
        } else if input.peek(Ident) {
            let id: Ident = input.parse()?;
            Err(syn::Error::new(
                id.span(),
                format!("unknown item `{id}`; a mechanism module may contain: {ITEM_KEYWORDS}"),
            ))
        } else {
            Err(input.error(format!("expected an item ({ITEM_KEYWORDS})")))
        }
    }
}

impl Parse for Module {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let docs = outer_docs(input)?;
        let vis: syn::Visibility = input.parse()?;
        let vis = quote::ToTokens::to_token_stream(&vis).to_string();
        if !input.peek(Token![mod]) {
            return Err(input.error("expected `mod NAME { ... }`: each mechanism is a module, e.g. `pub mod slider_crank { coord theta = 0.0; ... }`"));
        }
        input.parse::<Token![mod]>()?;
        let name: Ident = input.parse()?;
        let content;
        braced!(content in input);
        let mut items = Vec::new();
        // Errors are collected item by item (three typos cost one build): an item that
        // does not parse is reported and skipped to its end (its `;` or its `{ … }` body,
        // at this level), and parsing goes on with the next item.
        let mut errors: Option<syn::Error> = None;
        while !content.is_empty() {
            let fork = content.fork();
            match fork.parse::<Item>() {
                Ok(item) => {
                    content.advance_to(&fork);
                    items.push(item);
                }
                Err(e) => {
                    match &mut errors {
                        Some(all) => all.combine(e),
                        None => errors = Some(e),
                    }
                    skip_item(&content);
                }
            }
        }
        if let Some(e) = errors {
            return Err(e);
        }
        Ok(Module {
            docs,
            vis,
            span: name.span(),
            name,
            items,
        })
    }
}

/// Skips the tokens of one item: up to and including the next `;` or `{ … }` group at
/// this level (at least one token, so that parsing always advances).
fn skip_item(input: ParseStream) {
    let _ = input.step(|cursor| {
        let mut c = *cursor;
        while let Some((tt, next)) = c.token_tree() {
            c = next;
            match &tt {
                proc_macro2::TokenTree::Punct(p) if p.as_char() == ';' => break,
                proc_macro2::TokenTree::Group(g)
                    if g.delimiter() == proc_macro2::Delimiter::Brace =>
                {
                    break
                }
                _ => {}
            }
        }
        Ok(((), c))
    });
}

impl Parse for File {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let options = crate::options::FileOptions::parse(&input.call(Attribute::parse_inner)?)?;
        let mut modules: Vec<Module> = Vec::new();
        while !input.is_empty() {
            let m: Module = input.parse()?;
            let name = syn::ext::IdentExt::unraw(&m.name).to_string();
            if modules
                .iter()
                .any(|o| syn::ext::IdentExt::unraw(&o.name) == name)
            {
                return Err(syn::Error::new(
                    m.span,
                    format!("a mechanism named `{name}` is already defined in this input; module names must differ"),
                ));
            }
            modules.push(m);
        }
        if modules.is_empty() {
            return Err(input.error("expected at least one mechanism: `pub mod NAME { ... }`"));
        }
        Ok(File { options, modules })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse::Parser;

    /// The docs (or the error's message and location) of the attributes in `text`, read
    /// by `read`, and the tokens left after them.
    fn read(tokens: &proc_macro2::TokenStream, fast: bool) -> String {
        let parser = |input: ParseStream| -> syn::Result<String> {
            let docs = if fast {
                outer_docs(input)?
            } else {
                docs(&input.call(Attribute::parse_outer)?)?
            };
            let rest: proc_macro2::TokenStream = input.parse()?;
            Ok(format!("{docs:?} | {rest}"))
        };
        match parser.parse2(tokens.clone()) {
            Ok(s) => s,
            Err(e) => format!("error {} at {:?}", e, e.span().start()),
        }
    }

    #[test]
    fn docs_read_off_the_tokens_are_syns() {
        let cases = [
            "/// plain text\n/// with `code` and (x, y)\nparam a;",
            "/// a \"quoted\" word and a \\ backslash\nparam a;",
            "/// q̇ and −y and m/s²\nparam a;",
            "/** block */ param a;",
            "#[doc = \"one\"] #[doc = r\"two\"] #[doc = r#\"th\"ree\"#] param a;",
            "#[doc = \"esc\\napes\"] param a;",
            "#[doc = \"x\"suffix] param a;",
            "#[doc = b\"bytes\"] param a;",
            "#[doc = 1] param a;",
            "/// first\n#[inline] param a;",
            "/// first\n#[inline] /// after\nparam a;",
            "/// first\n#[doc] param a;",
            "/// first\n#[doc == \"x\"] param a;",
            "/// first\n# param a;",
            "/// first\n#![doc = \"inner\"] param a;",
            "#[r#doc = \"raw name\"] param a;",
            "#[doc = \"a\", x] param a;",
            "param a;",
        ];
        for case in cases {
            let tokens: proc_macro2::TokenStream = case.parse().expect("test input lexes");
            assert_eq!(read(&tokens, true), read(&tokens, false), "{case}");
        }
    }
}
