//! Writes the constraint equations of the peer-comparison mechanisms (slider crank, Stewart
//! platform, four-bar chain k = 1, 4, 16, 64) as JSON for `bench/peers/gen.py`, which builds
//! SymPy's and CasADi's C from exactly these equations: coordinates `q0…`, parameters `p0…`
//! with their defaults, the nominal configuration, the independent coordinates mechgen chose,
//! and each constraint residual as a Python-evaluable expression over shared temporaries
//! (`t0…`, every DAG node used more than once), so the peers see the same expression graph.
//! The `.mech` text is written beside it for the harness's build script.
//!
//! `cargo run --release -p mechgen-bench --bin export_equations -- OUT_DIR`

use std::collections::HashMap;
use std::path::PathBuf;

use mechgen_bench::sources::{self, Source};
use mechgen_codegen::expr::{Arena, ExprId, Node, Sym};

/// The infix text of `id`, naming shared nodes by their temporaries.
fn infix(arena: &Arena, id: ExprId, temps: &HashMap<ExprId, usize>, top: bool) -> String {
    if !top {
        if let Some(k) = temps.get(&id) {
            return format!("t{k}");
        }
    }
    let r = |c: ExprId| infix(arena, c, temps, false);
    match arena.node(id) {
        Node::Const(bits) => format!("({:?})", f64::from_bits(bits)),
        Node::Sym(Sym::Coord(i)) => format!("q{i}"),
        Node::Sym(Sym::Param(i)) => format!("p{i}"),
        Node::Sym(Sym::Time) => "t".to_string(),
        Node::Sym(s) => panic!("symbol {s:?} in a constraint"),
        Node::Add(a, b) => format!("({} + {})", r(a), r(b)),
        Node::Mul(a, b) => format!("({} * {})", r(a), r(b)),
        Node::Div(a, b) => format!("({} / {})", r(a), r(b)),
        Node::Neg(a) => format!("(-{})", r(a)),
        Node::Powi(a, n) => format!("({} ** ({n}))", r(a)),
        Node::Func(f, a) => format!("{}({})", f.name(), r(a)),
        Node::Atan2(y, x) => format!("atan2({}, {})", r(y), r(x)),
    }
}

fn export(s: &Source) -> String {
    let (models, _) = mechgen_codegen::models(s.text.parse().expect("tokens")).expect("lower");
    let (model, arena) = &models[0];
    let generated = mechgen_codegen::generate_str(&s.text, &mechgen_codegen::Options::default())
        .expect("generate");
    let stats = &generated.modules[0];
    // Reference counts over the constraints' graph.
    let mut count = vec![0usize; arena.len()];
    let mut order = Vec::new();
    let mut seen = vec![false; arena.len()];
    let mut stack: Vec<(ExprId, bool)> =
        model.constraints.iter().map(|c| (c.expr, false)).collect();
    while let Some((id, done)) = stack.pop() {
        if done {
            order.push(id);
            continue;
        }
        count[id.index()] += 1;
        if seen[id.index()] {
            continue;
        }
        seen[id.index()] = true;
        stack.push((id, true));
        for c in arena.node(id).children() {
            stack.push((c, false));
        }
    }
    let mut temps = HashMap::new();
    let mut defs = Vec::new();
    for &id in &order {
        let leaf = matches!(arena.node(id), Node::Const(_) | Node::Sym(_));
        if count[id.index()] > 1 && !leaf {
            let text = infix(arena, id, &temps, true);
            temps.insert(id, defs.len());
            defs.push(text);
        }
    }
    let constraints: Vec<String> = model
        .constraints
        .iter()
        .map(|c| infix(arena, c.expr, &temps, false))
        .collect();
    let names: Vec<&str> = model.coords.iter().map(|c| c.name.as_str()).collect();
    let independent: Vec<usize> = stats
        .independent
        .iter()
        .map(|n| names.iter().position(|m| m == n).expect("independent name"))
        .collect();
    let v = serde_json::json!({
        "module": s.module,
        "label": s.label,
        "coords": names,
        "nominal": model.coords.iter().map(|c| c.nominal).collect::<Vec<_>>(),
        "params": model.params.iter().map(|p| p.name.clone()).collect::<Vec<_>>(),
        "defaults": model.params.iter().map(|p| p.default.unwrap_or(0.0)).collect::<Vec<_>>(),
        "independent": independent,
        "rank": stats.rank,
        "temps": defs,
        "constraints": constraints,
    });
    serde_json::to_string_pretty(&v).expect("json")
}

fn main() {
    let out = PathBuf::from(
        std::env::args()
            .nth(1)
            .unwrap_or_else(|| "target/peers".into()),
    );
    std::fs::create_dir_all(out.join("mech")).expect("create output directory");
    let mut list = Vec::new();
    let ex = sources::examples();
    for s in ex
        .iter()
        .filter(|s| s.module == "slider_crank" || s.module == "stewart")
    {
        list.push(s.clone());
    }
    for k in [1, 4, 16, 64] {
        list.push(sources::family("four_bar_chain", k));
    }
    for s in &list {
        let json = export(s);
        std::fs::write(out.join(format!("{}.json", s.module)), &json).expect("write json");
        std::fs::write(out.join("mech").join(format!("{}.mech", s.module)), &s.text)
            .expect("write mech");
        println!("exported {} ({})", s.module, s.label);
    }
    let names: Vec<&str> = list.iter().map(|s| s.module.as_str()).collect();
    let index = serde_json::to_string_pretty(&names).expect("json");
    std::fs::write(out.join("modules.json"), index).expect("write index");
}
