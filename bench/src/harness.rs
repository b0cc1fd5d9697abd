//! A small timing harness: warm-up, calibrated batches, many samples, median/min/max.
//!
//! Per-call figures are never single calls: each sample times a batch of calls sized to
//! take at least [`Config::batch_target`], and reports the batch time divided by its size.

use std::time::{Duration, Instant};

/// Summary of a set of samples.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Summary {
    /// Median.
    pub median: f64,
    /// Smallest sample.
    pub min: f64,
    /// Largest sample.
    pub max: f64,
    /// Number of samples.
    pub samples: usize,
}

impl Summary {
    /// Summary of `xs` (not empty).
    pub fn of(xs: &[f64]) -> Summary {
        let mut v: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
        v.sort_by(f64::total_cmp);
        if v.is_empty() {
            return Summary {
                median: f64::NAN,
                min: f64::NAN,
                max: f64::NAN,
                samples: 0,
            };
        }
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            0.5 * (v[n / 2 - 1] + v[n / 2])
        };
        Summary {
            median,
            min: v[0],
            max: v[n - 1],
            samples: n,
        }
    }

    /// JSON object `{median, min, max, samples}`.
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "median": finite_or_null(self.median),
            "min": finite_or_null(self.min),
            "max": finite_or_null(self.max),
            "samples": self.samples,
        })
    }
}

fn finite_or_null(x: f64) -> serde_json::Value {
    if x.is_finite() {
        serde_json::json!(x)
    } else {
        serde_json::Value::Null
    }
}

/// Settings of the per-call harness.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// Time spent calling the function before measuring.
    pub warm_up: Duration,
    /// Smallest wall time of one batch.
    pub batch_target: Duration,
    /// Number of batches (samples).
    pub samples: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            warm_up: Duration::from_millis(30),
            batch_target: Duration::from_micros(500),
            samples: 31,
        }
    }
}

/// Nanoseconds per call of `f` (which should pass its inputs through
/// [`std::hint::black_box`] and return its result for the harness to consume).
pub fn ns_per_call<R>(cfg: &Config, mut f: impl FnMut() -> R) -> Summary {
    // Warm-up, which also calibrates the batch size.
    let start = Instant::now();
    let mut calls: u64 = 0;
    while start.elapsed() < cfg.warm_up || calls < 3 {
        std::hint::black_box(f());
        calls += 1;
    }
    let per_call = start.elapsed().as_secs_f64() / calls as f64;
    let batch = ((cfg.batch_target.as_secs_f64() / per_call).ceil() as u64).max(1);
    let mut samples = Vec::with_capacity(cfg.samples);
    for _ in 0..cfg.samples {
        let t = Instant::now();
        for _ in 0..batch {
            std::hint::black_box(f());
        }
        samples.push(t.elapsed().as_secs_f64() * 1e9 / batch as f64);
    }
    Summary::of(&samples)
}

/// Runs `f` `warm_up` times, then `runs` times, returning each run's result (for
/// operations that take milliseconds, e.g. code generation).
pub fn repeat<R>(warm_up: usize, runs: usize, mut f: impl FnMut() -> R) -> Vec<R> {
    for _ in 0..warm_up {
        std::hint::black_box(f());
    }
    (0..runs).map(|_| f()).collect()
}

/// Formats nanoseconds with a sensible unit.
pub fn fmt_ns(ns: f64) -> String {
    if !ns.is_finite() {
        "–".to_string()
    } else if ns < 10.0 {
        format!("{ns:.2} ns")
    } else if ns < 1e3 {
        format!("{ns:.1} ns")
    } else if ns < 1e6 {
        format!("{:.2} µs", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_median() {
        let s = Summary::of(&[3.0, 1.0, 2.0]);
        assert_eq!((s.median, s.min, s.max, s.samples), (2.0, 1.0, 3.0, 3));
        let s = Summary::of(&[4.0, 1.0, 2.0, 3.0]);
        assert_eq!(s.median, 2.5);
    }
}
