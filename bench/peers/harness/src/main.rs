//! mechgen against SymPy's and CasADi's generated C, same mechanisms, same equations, one
//! process: values compared (1e-9 relative), then wall time per call measured in alternating
//! rounds (median of 15). `harness count MODULE FUNCTION IMPL N` makes N calls, for
//! callgrind (bench/peers/run.sh takes instructions per call from two such runs).

#![allow(non_snake_case, clippy::all)]

use std::hint::black_box;
use std::time::Instant;

type CFn = unsafe extern "C" fn(*const f64, *const f64, *mut f64);

/// A peer's generated function.
pub struct Peer {
    module: &'static str,
    peer: &'static str,
    func: &'static str,
    len: usize,
    f: CFn,
    sparsity: Option<(&'static [i64], &'static [i64])>,
}

/// A mechgen module's functions.
pub struct Mech {
    module: &'static str,
    nq: usize,
    nc: usize,
    dof: usize,
    residual: fn(&[f64], &[f64], &mut [f64]),
    jacobian: fn(&[f64], &[f64], &mut [f64]),
    jacobian_sparse: fn(&[f64], &[f64], &mut [f64]),
    null_space: fn(&[f64], &[f64], &mut [f64]),
    bench: fn(&str, &[f64], &[f64], usize),
    nominal: fn() -> Vec<f64>,
    defaults: &'static [f64],
}

include!(concat!(env!("OUT_DIR"), "/registry.rs"));

const FUNCS: [&str; 5] = [
    "residual",
    "jacobian",
    "jacobian_into",
    "jacobian_sparse",
    "null_space",
];

/// A reproducible configuration near the nominal one (every coordinate moved by ≤ 0.05).
fn config(m: &Mech, k: u64) -> Vec<f64> {
    let mut s = 0x9e37_79b9_7f4a_7c15u64.wrapping_mul(k + 1);
    (m.nominal)()
        .iter()
        .map(|x| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            x + 0.1 * ((s >> 11) as f64 / (1u64 << 53) as f64 - 0.5)
        })
        .collect()
}

fn dense_len(m: &Mech, func: &str) -> usize {
    match func {
        "residual" => m.nc,
        "null_space" => m.nq * m.dof,
        _ => m.nc * m.nq,
    }
}

fn mechgen_values(m: &Mech, func: &str, q: &[f64], p: &[f64]) -> Vec<f64> {
    let mut out = vec![0.0; dense_len(m, func)];
    let f = match func {
        "residual" => m.residual,
        "jacobian" | "jacobian_into" => m.jacobian,
        "jacobian_sparse" => m.jacobian_sparse,
        _ => m.null_space,
    };
    f(q, p, &mut out);
    out
}

fn peer_values(m: &Mech, pe: &Peer, q: &[f64], p: &[f64]) -> Vec<f64> {
    let mut raw = vec![0.0; pe.len.max(1)];
    let pp = if p.is_empty() { vec![0.0] } else { p.to_vec() };
    unsafe { (pe.f)(q.as_ptr(), pp.as_ptr(), raw.as_mut_ptr()) };
    match pe.sparsity {
        Some((colind, row)) => {
            let mut d = vec![0.0; m.nc * m.nq];
            for c in 0..m.nq {
                for k in colind[c] as usize..colind[c + 1] as usize {
                    d[c * m.nc + row[k] as usize] = raw[k];
                }
            }
            d
        }
        None => raw,
    }
}

fn median_rounds(fs: &mut [Box<dyn FnMut(usize) + '_>]) -> Vec<f64> {
    // Calibrate: ~1 ms per round for the first.
    let mut n = 1usize;
    loop {
        let t = Instant::now();
        (fs[0])(n);
        if t.elapsed().as_secs_f64() > 1e-3 || n >= 1 << 22 {
            break;
        }
        n *= 2;
    }
    let mut times = vec![Vec::new(); fs.len()];
    for _ in 0..15 {
        for (k, f) in fs.iter_mut().enumerate() {
            let t = Instant::now();
            f(n);
            times[k].push(t.elapsed().as_secs_f64() * 1e9 / n as f64);
        }
    }
    times
        .into_iter()
        .map(|mut v| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mechs = mechs();
    let peers = peers();
    if args.get(1).map(String::as_str) == Some("list") {
        for m in &mechs {
            for f in FUNCS {
                println!("{} {f} mechgen", m.module);
                let pf = if f == "jacobian_into" { "jacobian" } else { f };
                for pe in peers
                    .iter()
                    .filter(|p| p.module == m.module && p.func == pf)
                {
                    println!("{} {f} {}", m.module, pe.peer);
                }
            }
        }
        return;
    }
    if args.get(1).map(String::as_str) == Some("count") {
        let (module, func, imp, n) = (
            &args[2],
            &args[3],
            &args[4],
            args[5].parse::<usize>().unwrap(),
        );
        let m = mechs.iter().find(|m| m.module == module).unwrap();
        let q = config(m, 0);
        let p = m.defaults.to_vec();
        if imp == "mechgen" {
            (m.bench)(func, &q, &p, n);
        } else {
            let pf = if func == "jacobian_into" {
                "jacobian"
            } else {
                func.as_str()
            };
            let pe = peers
                .iter()
                .find(|pe| pe.module == module && pe.func == pf && pe.peer == imp)
                .unwrap();
            let mut out = vec![0.0; pe.len.max(1)];
            let pp = if p.is_empty() { vec![0.0] } else { p.clone() };
            for _ in 0..n {
                unsafe {
                    (pe.f)(
                        black_box(q.as_ptr()),
                        black_box(pp.as_ptr()),
                        out.as_mut_ptr(),
                    )
                };
                black_box(&out);
            }
        }
        return;
    }
    println!("| mechanism | function | mechgen ns | SymPy ns | CasADi ns | mechgen / best peer |");
    println!("| --- | --- | ---: | ---: | ---: | ---: |");
    let mut failures = 0;
    for m in &mechs {
        let p = m.defaults.to_vec();
        for func in FUNCS {
            // `jacobian_into` (mechgen's storage-reusing form) against the peers' dense one.
            let peer_func = if func == "jacobian_into" {
                "jacobian"
            } else {
                func
            };
            let mine: Vec<&Peer> = peers
                .iter()
                .filter(|pe| pe.module == m.module && pe.func == peer_func)
                .collect();
            // Values: 20 configurations.
            for k in 0..20 {
                let q = config(m, k);
                let want = mechgen_values(m, func, &q, &p);
                let scale = want.iter().fold(1.0f64, |a, v| a.max(v.abs()));
                for pe in &mine {
                    let got = peer_values(m, pe, &q, &p);
                    let err = want
                        .iter()
                        .zip(&got)
                        .fold(0.0f64, |a, (x, y)| a.max((x - y).abs()));
                    if !(err <= 1e-9 * scale) {
                        failures += 1;
                        eprintln!(
                            "MISMATCH {} {func} {}: max difference {err:e} (scale {scale:e})",
                            m.module, pe.peer
                        );
                        break;
                    }
                }
            }
            let q = config(m, 0);
            let pp = if p.is_empty() { vec![0.0] } else { p.clone() };
            let mut outs: Vec<Vec<f64>> = mine.iter().map(|pe| vec![0.0; pe.len.max(1)]).collect();
            let mut fs: Vec<Box<dyn FnMut(usize) + '_>> = Vec::new();
            let (qr, prr) = (&q, &p);
            fs.push(Box::new(move |n| (m.bench)(func, qr, prr, n)));
            for (pe, out) in mine.iter().zip(outs.iter_mut()) {
                let (qr, pr) = (&q, &pp);
                let f = pe.f;
                fs.push(Box::new(move |n| {
                    for _ in 0..n {
                        unsafe {
                            f(
                                black_box(qr.as_ptr()),
                                black_box(pr.as_ptr()),
                                out.as_mut_ptr(),
                            )
                        };
                        black_box(&*out);
                    }
                }));
            }
            let t = median_rounds(&mut fs);
            let get = |peer: &str| mine.iter().position(|pe| pe.peer == peer).map(|k| t[k + 1]);
            let (s, c) = (get("sympy"), get("casadi"));
            let best = [s, c].into_iter().flatten().fold(f64::INFINITY, f64::min);
            let show = |v: Option<f64>| v.map_or("—".to_string(), |v| format!("{v:.1}"));
            println!(
                "| {} | {func} | {:.1} | {} | {} | {} |",
                m.module,
                t[0],
                show(s),
                show(c),
                if best.is_finite() {
                    format!("{:.2}", t[0] / best)
                } else {
                    "—".into()
                }
            );
        }
    }
    if failures > 0 {
        eprintln!("{failures} value mismatches");
        std::process::exit(1);
    }
}
