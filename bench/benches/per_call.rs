//! Criterion per-call benchmarks: the generated `residual`, `jacobian`, `null_space`,
//! `solve_dependent`, and the numeric null-space baselines on the same generated
//! Jacobian (nalgebra SVD, full-pivot LU, dense LU in the static pivot order).
//!
//! `cargo bench -p mechgen-bench --bench per_call` (the table in `bench/results/latest.md`
//! comes from `cargo run --release -p mechgen-bench`, which uses the crate's own harness).

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use mechgen::nalgebra::{SMatrix, SVector};
use mechgen::runtime::{self, assemble::AssemblyOptions, Mechanism};
use mechgen_bench::generated as g;
use mechgen_bench::pivot_lu::PivotOrderLu;

fn bench_mechanism<M, const NQ: usize, const NC: usize, const DOF: usize>(
    c: &mut Criterion,
    name: &str,
    rows: &[usize],
    cols: &[usize],
) where
    M: Mechanism<NQ, NC, DOF>,
    M::Params: Default,
{
    let p = M::Params::default();
    let t = 0.0;
    let q = runtime::assemble::assemble::<M, NQ, NC, DOF>(
        &M::nominal_q(),
        &p,
        t,
        &AssemblyOptions::default(),
    )
    .expect("nominal configuration assembles")
    .q;
    let b = SVector::<f64, NC>::from_fn(|i, _| 0.1 * (i as f64 + 1.0));
    let j = M::jacobian(&q, &p, t);
    let mut group = c.benchmark_group(name);
    group.bench_function("residual", |bn| {
        bn.iter(|| M::residual(black_box(&q), black_box(&p), black_box(t)))
    });
    group.bench_function("jacobian", |bn| {
        bn.iter(|| M::jacobian(black_box(&q), black_box(&p), black_box(t)))
    });
    group.bench_function("null_space", |bn| {
        bn.iter(|| M::null_space(black_box(&q), black_box(&p), black_box(t)))
    });
    group.bench_function("solve_dependent", |bn| {
        bn.iter(|| M::solve_dependent(black_box(&q), black_box(&p), black_box(t), black_box(&b)))
    });
    group.bench_function("svd_null_space (J given)", |bn| {
        bn.iter(|| runtime::null_space::svd_null_space::<NC, NQ, DOF>(black_box(&j)))
    });
    group.bench_function("lu_null_space (J given)", |bn| {
        bn.iter(|| runtime::null_space::lu_null_space::<NC, NQ, DOF>(black_box(&j)))
    });
    let mut lu = PivotOrderLu::new(rows, cols);
    let mut d = Box::new(SMatrix::<f64, NQ, DOF>::zeros());
    group.bench_function("pivot-order LU (J given)", |bn| {
        bn.iter(|| lu.null_space(black_box(&j), black_box(&mut *d)))
    });
    group.finish();
}

macro_rules! bench {
    ($c:expr, $m:ident) => {
        bench_mechanism::<g::$m::Model, { g::$m::NQ }, { g::$m::NC }, { g::$m::DOF }>(
            $c,
            stringify!($m),
            &g::$m::PIVOT_ROWS,
            &g::$m::PIVOT_COLS,
        )
    };
}

fn per_call(c: &mut Criterion) {
    bench!(c, slider_crank);
    bench!(c, spatial_slider_crank);
    bench!(c, andrews);
    bench!(c, stewart);
    bench!(c, four_bar_chain_64);
    bench!(c, closed_chain_16);
}

criterion_group!(benches, per_call);
criterion_main!(benches);
