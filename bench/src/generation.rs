//! Generation time per stage and sizes of the generated code.

use std::time::Instant;

use mechgen_codegen::emit::ModuleStats;
use mechgen_codegen::{generate_str, pretty, Options};

use crate::harness::{repeat, Summary};
use crate::sources::Source;

/// Generation measurements of one mechanism (times in milliseconds).
#[derive(Clone, Debug)]
pub struct GenRow {
    /// The mechanism.
    pub source: Source,
    /// Statistics of the generated module.
    pub stats: ModuleStats,
    /// Tokens → syntax tree.
    pub parse: Summary,
    /// Lowering.
    pub lower: Summary,
    /// Differentiation.
    pub differentiate: Summary,
    /// Probing, pivots, symbolic LU.
    pub pivot_lu: Summary,
    /// Emission.
    pub emit: Summary,
    /// Pretty-printing.
    pub pretty: Summary,
    /// Wall time of `generate_file_text` (tokenizing, generation and pretty-printing).
    pub total: Summary,
    /// Lines of pretty-printed code.
    pub lines: usize,
}

impl GenRow {
    /// Operation count of the generated function `name` (0 if absent).
    pub fn ops_of(&self, name: &str) -> usize {
        self.stats
            .functions
            .iter()
            .find(|f| f.name == name)
            .map_or(0, |f| f.ops.total())
    }

    /// JSON of this row.
    pub fn json(&self) -> serde_json::Value {
        let funcs: Vec<serde_json::Value> = self
            .stats
            .functions
            .iter()
            .map(|f| {
                serde_json::json!({
                    "name": f.name,
                    "total": f.ops.total(),
                    "add": f.ops.add, "mul": f.ops.mul, "div": f.ops.div,
                    "sqrt": f.ops.sqrt, "trig": f.ops.trig, "other": f.ops.other,
                    "lets": f.lets, "chunks": f.chunks,
                })
            })
            .collect();
        serde_json::json!({
            "label": self.source.label,
            "module": self.source.module,
            "family": self.source.family,
            "k": self.source.k,
            "nq": self.stats.nq, "nc": self.stats.nc, "rank": self.stats.rank, "dof": self.stats.dof,
            "lines": self.lines,
            "generation_ms": {
                "parse": self.parse.json(),
                "lower": self.lower.json(),
                "differentiate": self.differentiate.json(),
                "pivot_lu": self.pivot_lu.json(),
                "emit": self.emit.json(),
                "pretty": self.pretty.json(),
                "total": self.total.json(),
            },
            "functions": funcs,
            "notes": self.stats.notes,
        })
    }
}

/// Generates `source` `warm_up + runs` times and summarises the last `runs`.
pub fn measure(source: &Source, warm_up: usize, runs: usize) -> GenRow {
    let opts = Options::default();
    // The path users take (`Builder`, the command line): `generate_file_text`, which prints
    // the tokens it owns without copying them; pretty-printing is the total minus the
    // stages' times.
    let path = std::path::Path::new("bench.mech");
    let results = repeat(warm_up, runs, || {
        let t = Instant::now();
        let (g, text) = mechgen_codegen::generate_file_text(path, &source.text, &opts)
            .unwrap_or_else(|e| panic!("{}: generation failed: {e:?}", source.label));
        let total = t.elapsed().as_secs_f64();
        let pretty_s = (total - g.timings.total().as_secs_f64()).max(0.0);
        (g, text, pretty_s, total)
    });
    let ms = |f: &dyn Fn(&mechgen_codegen::Timings) -> std::time::Duration| -> Summary {
        let xs: Vec<f64> = results
            .iter()
            .map(|r| f(&r.0.timings).as_secs_f64() * 1e3)
            .collect();
        Summary::of(&xs)
    };
    let last = results.last().expect("at least one run");
    let mut modules = last.0.modules.clone();
    assert_eq!(modules.len(), 1, "{}: one module expected", source.label);
    GenRow {
        source: source.clone(),
        stats: modules.remove(0),
        parse: ms(&|t| t.parse),
        lower: ms(&|t| t.lower),
        differentiate: ms(&|t| t.differentiate),
        pivot_lu: ms(&|t| t.pivot_lu),
        emit: ms(&|t| t.emit),
        pretty: Summary::of(&results.iter().map(|r| r.2 * 1e3).collect::<Vec<_>>()),
        total: Summary::of(&results.iter().map(|r| r.3 * 1e3).collect::<Vec<_>>()),
        lines: last.1.lines().count(),
    }
}

/// The pretty-printed module of `source` (for the compile-time crate).
pub fn module_text(source: &Source) -> String {
    let g = generate_str(&source.text, &Options::default())
        .unwrap_or_else(|e| panic!("{}: generation failed: {e:?}", source.label));
    pretty(&g.tokens)
}
