//! The automatic choice of independent coordinates (issue 8, item 8): the Stewart platform
//! without its `independent` line. Before: the analysis chose `y, z, phi, theta, psi, l2`
//! (a leg length instead of a pose coordinate; other coordinates when bodies were added),
//! and `assemble` from ±0.1 perturbations of every coordinate failed on 28 % of starts.
//! Now it chooses the platform's pose (the best-conditioned coordinates, and among those the
//! ones that decouple the legs), whatever the bodies, and assembly succeeds like the named
//! model's.

use mechgen::nalgebra::SVector;
use mechgen::runtime::{assemble::assemble, assemble::AssemblyOptions, Mechanism};
use rand::{RngExt, SeedableRng};

include!(concat!(env!("OUT_DIR"), "/stewart.rs"));
include!(concat!(env!("OUT_DIR"), "/stewart_auto.rs"));

#[test]
fn the_pose_is_chosen() {
    let mut names: Vec<&str> = stewart_auto::INDEPENDENT
        .iter()
        .map(|&i| stewart_auto::COORD_NAMES[i])
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["phi", "psi", "theta", "x", "y", "z"]);
}

#[test]
fn assembly_from_perturbed_starts_succeeds_and_agrees_with_the_named_model() {
    type A = stewart_auto::Model;
    type N = stewart::Model;
    let pa = stewart_auto::Params::default();
    let pn = stewart::Params::default();
    let q0 = <N as Mechanism<24, 18, 6>>::nominal_q();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(28);
    let (mut ok, n) = (0, 500);
    for _ in 0..n {
        let start = SVector::<f64, 24>::from_fn(|i, _| q0[i] + rng.random_range(-0.1..0.1));
        let Ok(a) = assemble::<A, 24, 18, 6>(&start, &pa, 0.0, &AssemblyOptions::default()) else {
            continue;
        };
        ok += 1;
        // The named model (the same pose held) lands on the same configuration.
        let b = assemble::<N, 24, 18, 6>(&start, &pn, 0.0, &AssemblyOptions::default())
            .expect("the named model assembles");
        assert!((a.q - b.q).amax() < 1e-9, "{:e}", (a.q - b.q).amax());
    }
    assert_eq!(ok, n, "{ok} of {n} starts assembled");
}
