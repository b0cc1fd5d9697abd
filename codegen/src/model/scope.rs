//! The scope of a module: the names declared so far (parameters, constants, coordinates,
//! `let`s) with what they stand for, the names declared further down ("used before its
//! declaration") and the names whose declaration failed (not reported again), and the
//! "unknown name … did you mean" error.

use std::collections::{HashMap, HashSet};

use proc_macro2::Span;
use syn::Ident;

use super::builtin::Builtin;
use super::value::Value;
use crate::error::{nearest, Error, Result};
use crate::parse::ast::Item;

/// What a name stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// A `param`.
    Param,
    /// An `input` (a parameter usable only in forces).
    Input,
    /// A `const`.
    Const,
    /// A `coord`.
    Coord,
    /// A `let`.
    Let,
}

impl Kind {
    /// "a parameter", "a constant", … (for errors).
    pub(super) fn describe(self) -> &'static str {
        match self {
            Kind::Param => "a parameter",
            Kind::Input => "an input",
            Kind::Const => "a constant",
            Kind::Coord => "a coordinate",
            Kind::Let => "a `let` binding",
        }
    }
}

/// A declared name: its kind, its value and (coordinates, parameters) its index.
pub(super) struct Binding {
    /// What the name is.
    pub(super) kind: Kind,
    /// Its lowered value.
    pub(super) value: Value,
    /// Index into the model's coordinates or parameters (0 for the other kinds).
    pub(super) index: usize,
}

/// Names that cannot be declared.
const RESERVED: &[&str] = &["t", "pi", "PI"];

/// A user's name as mechgen compares it: without the `r#` of a raw identifier (`r#y` and
/// `y` are one Rust identifier, so one name).
pub(crate) fn plain(id: &Ident) -> String {
    // The text, its `r#` dropped in place (`unraw` would copy the identifier first).
    let mut s = id.to_string();
    if s.starts_with("r#") {
        s.drain(..2);
    }
    s
}

/// The name an item declares, if any.
pub(super) fn declared(item: &Item) -> Option<&Ident> {
    match item {
        Item::Param { name, .. }
        | Item::Input { name, .. }
        | Item::Const { name, .. }
        | Item::Coord { name, .. }
        | Item::Let { name, .. }
        | Item::Frame { name, .. } => Some(name),
        _ => None,
    }
}

/// The names of a module while its items are lowered in order.
pub(super) struct Scope {
    /// Names declared so far.
    names: HashMap<String, Binding>,
    /// The same names in declaration order (for "did you mean", deterministically).
    order: Vec<String>,
    /// Names declared by items further down (with the index of the item and the span of
    /// the declaration), for "defined later" instead of "unknown".
    later: HashMap<String, (usize, Span)>,
    /// Names whose declaration was in error: their uses are not reported again.
    poisoned: HashSet<String>,
}

impl Scope {
    /// An empty scope for `items`, knowing every name they will declare.
    pub(super) fn new(items: &[Item]) -> Scope {
        // At most a name per item (sized once: no rehash as they come).
        let mut later = HashMap::with_capacity(items.len());
        for (k, item) in items.iter().enumerate() {
            if let Some(n) = declared(item) {
                later.entry(plain(n)).or_insert((k, n.span()));
            }
        }
        Scope {
            names: HashMap::with_capacity(items.len()),
            order: Vec::new(),
            later,
            poisoned: HashSet::new(),
        }
    }

    /// Item `k` is about to be lowered: the name it declares is no longer "declared later".
    pub(super) fn enter(&mut self, k: usize, item: &Item) {
        if let Some(n) = declared(item) {
            let s = plain(n);
            if self.later.get(&s).is_some_and(|&(at, _)| at == k) {
                self.later.remove(&s);
            }
        }
    }

    /// `item` failed: if it declares a name that did not get declared, its uses are not
    /// reported again.
    pub(super) fn poison(&mut self, item: &Item) {
        if let Some(n) = declared(item) {
            let s = plain(n);
            if !self.names.contains_key(&s) {
                self.poisoned.insert(s);
            }
        }
    }

    /// The binding of a name (compared without `r#`), if declared.
    pub(super) fn get(&self, name: &str) -> Option<&Binding> {
        self.names.get(name)
    }

    pub(super) fn declare(
        &mut self,
        name: &Ident,
        kind: Kind,
        value: Value,
        index: usize,
    ) -> Result<()> {
        let s = plain(name);
        if super::PATTERN_NAMES.contains(&s.as_str()) {
            return Err(Error::new(
                name.span(),
                format!("`{s}` cannot be a name: generated code binds names with `let`, where `{s}` is a pattern or a keyword; choose another name"),
            ));
        }
        if s.starts_with("__mechgen") {
            return Err(Error::new(
                name.span(),
                format!("`{s}`: names starting with `__mechgen` are reserved for generated code; choose another name"),
            ));
        }
        if RESERVED.contains(&s.as_str()) {
            return Err(Error::new(
                name.span(),
                format!("`{s}` is reserved (`t` is time, `pi` is π); choose another name"),
            ));
        }
        if let Some(b) = self.names.get(&s) {
            return Err(Error::new(
                name.span(),
                format!(
                    "`{s}` is declared twice: it is already {}",
                    b.kind.describe()
                ),
            ));
        }
        self.order.push(s.clone());
        self.names.insert(s, Binding { kind, value, index });
        Ok(())
    }

    pub(super) fn unknown(&self, id: &Ident) -> Error {
        let s = plain(id);
        if self.poisoned.contains(&s) {
            return Error::cascade(id.span(), format!("`{s}` is in error above"));
        }
        if let Some((_, at)) = self.later.get(&s) {
            let line = at.start().line;
            let where_ = if line > 0 {
                format!(" (line {line})")
            } else {
                String::new()
            };
            return Error::new(
                id.span(),
                format!(
                    "`{s}` is used before its declaration{where_}: declare it above its first use"
                ),
            );
        }
        let mut known: Vec<&str> = self.order.iter().map(|s| s.as_str()).collect();
        known.extend(["t", "pi"]);
        let hint = match nearest(&s, known.iter().copied()) {
            Some(n) => format!("; did you mean `{n}`?"),
            None => String::new(),
        };
        let fun = if Builtin::from_name(&s).is_some() {
            format!(" (`{s}` is a function: call it, e.g. `{s}(x)`)")
        } else {
            String::new()
        };
        Error::new(id.span(), format!("unknown name `{s}`{hint}{fun}"))
    }

    pub(super) fn name_of(&self, kind: Kind, index: usize) -> String {
        self.names
            .iter()
            // Inputs are parameters (`Sym::Param`) too.
            .find(|(_, b)| {
                // A vector parameter binds its components' consecutive indices.
                let width = b.value.exprs().len().max(1);
                (b.kind == kind || (kind == Kind::Param && b.kind == Kind::Input))
                    && (b.index..b.index + width).contains(&index)
            })
            .map(|(n, _)| n.clone())
            .unwrap_or_default()
    }

    pub(super) fn coord_index(&self, id: &Ident) -> Result<usize> {
        let s = plain(id);
        if s == "t" {
            return Err(Error::new(
                id.span(),
                "`t` is time, not a coordinate: name a coordinate declared with `coord`",
            ));
        }
        match self.names.get(&s) {
            Some(b) if b.kind == Kind::Coord => Ok(b.index),
            Some(b) => Err(Error::new(
                id.span(),
                format!("`{id}` is {}, not a coordinate", b.kind.describe()),
            )),
            None => Err(self.unknown(id)),
        }
    }
}
