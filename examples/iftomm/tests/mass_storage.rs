//! `Dynamics::mass_matrix_into` into storage reused from state to state (what the simulation
//! routes do, so that a right-hand side does not zero-fill `NQ²` entries) gives the mass
//! matrix `mass_matrix` returns, bit for bit, at many random coordinates: the generated
//! function writes every structural nonzero at every state, and `MASS_NONZEROS` lists them.

use mechgen::nalgebra::{SMatrix, SVector};
use mechgen::runtime::Dynamics;

/// A small deterministic generator (xorshift64*), uniform in `[lo, hi)`.
struct Rng(u64);

impl Rng {
    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11;
        lo + (hi - lo) * (x as f64 / (1u64 << 53) as f64)
    }
}

fn check<M, const NQ: usize, const NC: usize, const DOF: usize>(p: &M::Params, seed: u64)
where
    M: Dynamics<NQ, NC, DOF>,
{
    let mut rng = Rng(seed);
    let mut storage = Box::new(SMatrix::<f64, NQ, NQ>::zeros());
    let nominal = M::nominal_q();
    let listed = M::MASS_NONZEROS.expect("generated models list their mass nonzeros");
    for k in 0..50 {
        // Coordinates around the nominal ones, far enough to change every trigonometric term.
        let q = SVector::<f64, NQ>::from_fn(|i, _| nominal[i] + rng.uniform(-1.0, 1.0));
        let t = rng.uniform(0.0, 2.0);
        M::mass_matrix_into(&q, p, t, &mut storage);
        let fresh = M::mass_matrix(&q, p, t);
        for i in 0..NQ {
            for j in 0..NQ {
                assert_eq!(
                    storage[(i, j)].to_bits(),
                    fresh[(i, j)].to_bits(),
                    "{}: state {k}, entry ({i}, {j}): {} in reused storage, {} fresh",
                    M::NAME,
                    storage[(i, j)],
                    fresh[(i, j)]
                );
                if fresh[(i, j)] != 0.0 {
                    assert!(
                        listed.contains(&(i, j)),
                        "{}: ({i}, {j}) is nonzero but not in MASS_NONZEROS",
                        M::NAME
                    );
                }
            }
        }
    }
}

#[test]
fn mass_matrix_into_reused_storage_equals_mass_matrix() {
    check::<iftomm::a02_n40::Model, 81, 80, 1>(&Default::default(), 1);
    check::<iftomm::a02_n3::Model, { iftomm::a02_n3::NQ }, { iftomm::a02_n3::NC }, 1>(
        &Default::default(),
        2,
    );
    check::<
        iftomm::andrews::Model,
        { iftomm::andrews::NQ },
        { iftomm::andrews::NC },
        { iftomm::andrews::DOF },
    >(&Default::default(), 3);
    check::<iftomm::a05::Model, { iftomm::a05::NQ }, { iftomm::a05::NC }, { iftomm::a05::DOF }>(
        &Default::default(),
        4,
    );
}
