//! `gen_time FILE.mech [FUNCTIONS] [N]`: median wall time of generating FILE's code (parse to
//! pretty-printed text, as `mechgen generate` writes it: `generate_str`, then the tokens moved
//! into `pretty_owned`, as `generate_file_text` does) over N runs (default 21), with all
//! functions or only `FUNCTIONS` (comma-separated, the `functions` option; `all` for every
//! function), and the median of each stage. For the comparison of generation time with
//! CasADi's `Function.generate` (bench/peers/gen_time.sh). With a fourth argument OUT, also
//! writes the generated text to the file OUT (to compare the text of two builds).

use std::process::ExitCode;
use std::time::Instant;

use mechgen_codegen::emit::format::pretty_owned;
use mechgen_codegen::{generate_str, FunctionList, Options};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: gen_time FILE.mech [FUNCTIONS|all] [N]");
        return ExitCode::FAILURE;
    };
    let src = match std::fs::read_to_string(path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{path}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut opts = Options::for_files();
    if let Some(f) = args.get(2).filter(|f| f.as_str() != "all") {
        match f.parse::<FunctionList>() {
            Ok(list) => opts.functions = Some(list),
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::FAILURE;
            }
        }
    }
    let n: usize = args.get(3).and_then(|n| n.parse().ok()).unwrap_or(21);
    let (mut total, mut stages) = (Vec::new(), vec![Vec::new(); 6]);
    let mut last = String::new();
    for _ in 0..n {
        let t = Instant::now();
        let mut g = match generate_str(&src, &opts) {
            Ok(g) => g,
            Err(e) => {
                eprintln!("{path}: {e}");
                return ExitCode::FAILURE;
            }
        };
        let tp = Instant::now();
        let Some(text) = pretty_owned(std::mem::take(&mut g.tokens)) else {
            eprintln!("{path}: the generated tokens are not a Rust file");
            return ExitCode::FAILURE;
        };
        let pretty_ms = tp.elapsed().as_secs_f64() * 1e3;
        total.push(t.elapsed().as_secs_f64() * 1e3);
        last = text;
        let s = &g.timings;
        for (k, d) in [s.parse, s.lower, s.differentiate, s.pivot_lu, s.emit]
            .iter()
            .enumerate()
        {
            stages[k].push(d.as_secs_f64() * 1e3);
        }
        stages[5].push(pretty_ms);
    }
    let st: Vec<f64> = stages.into_iter().map(median).collect();
    println!(
        "{path} [{}]: {:.2} ms (parse {:.2}, lower {:.2}, differentiate {:.2}, pivot/LU {:.2}, emit {:.2}, pretty {:.2}), {bytes} bytes",
        args.get(2).map_or("all", String::as_str),
        median(total),
        st[0],
        st[1],
        st[2],
        st[3],
        st[4],
        st[5],
        bytes = last.len()
    );
    if let Some(out) = args.get(4) {
        if let Err(e) = std::fs::write(out, &last) {
            eprintln!("{out}: {e}");
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}
