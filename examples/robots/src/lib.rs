//! Robots imported from their published URDF files by `mechgen_codegen::import::urdf` in
//! `build.rs`, and generated like any mechanism: the Universal Robots UR5 ([`ur5`], 6
//! joints) and the Franka Emika Panda ([`panda`], 7 arm joints and 2 finger joints) on a
//! fixed base; the quadruped Solo-12 ([`solo`], 12 joints) and the humanoid Romeo
//! ([`romeo`], `romeo_small.urdf`, 31 joints) on a floating base (position and unit
//! quaternion of the root link: 18 and 37 degrees of freedom); all from example-robot-data
//! 6.0.0 (`models/`, with their licences).
//!
//! `tests/pinocchio.rs` checks their mass matrices, forces and forward dynamics against
//! Pinocchio's `crba`, `nonLinearEffects` and `aba` at 100 random states each (reference
//! values in `data/`, written by `reference.py`).
//!
//! Forward dynamics at speed: [`TreeCholesky`] solves with a mass matrix of known pattern
//! (the generated `MASS_NONZEROS`) on its elimination tree, with index lists built once, or
//! by the straight-line [`kernels`] the build script emits from the same pattern;
//! [`FloatingBase`] maps a floating base's coordinates to Pinocchio's free-flyer velocities
//! around it (`benches/dynamics.rs`: against Pinocchio's `aba`).

use mechgen::nalgebra::{Matrix3, SMatrix, SVector, Vector3};

mod symbolic;
mod tree;
pub use tree::{Kernel, NotPositiveDefinite, PatternError, TreeCholesky};

include!(concat!(env!("OUT_DIR"), "/ur5.rs"));
include!(concat!(env!("OUT_DIR"), "/panda.rs"));
include!(concat!(env!("OUT_DIR"), "/solo.rs"));
include!(concat!(env!("OUT_DIR"), "/romeo.rs"));

/// The straight-line `LᵀDL` kernels of the robots' mass matrices ([`Kernel`]), emitted by
/// the build script from each module's `MASS_NONZEROS`: down to row 0 on a fixed base, to
/// row 7 on a floating base (for [`FloatingBase`]).
pub mod kernels {
    include!(concat!(env!("OUT_DIR"), "/ur5_kernel.rs"));
    include!(concat!(env!("OUT_DIR"), "/panda_kernel.rs"));
    include!(concat!(env!("OUT_DIR"), "/solo_kernel.rs"));
    include!(concat!(env!("OUT_DIR"), "/romeo_kernel.rs"));
}

/// Models imported from MJCF files (`mjcf/`, written for the tests) by
/// `mechgen_codegen::import::mjcf`, checked against MuJoCo in `tests/mujoco.rs`.
pub mod mjcf {
    include!(concat!(env!("OUT_DIR"), "/chain.rs"));
    include!(concat!(env!("OUT_DIR"), "/radian.rs"));
    include!(concat!(env!("OUT_DIR"), "/four_bar.rs"));
    include!(concat!(env!("OUT_DIR"), "/welded_arm.rs"));
    include!(concat!(env!("OUT_DIR"), "/ball_free.rs"));
    // Agility Cassie (MuJoCo Menagerie, `models/agility_cassie`), with the feature `cassie`.
    #[cfg(feature = "cassie")]
    include!(concat!(env!("OUT_DIR"), "/cassie.rs"));
}

/// Forward dynamics of a tree: `q̈ = M(q)⁻¹ (f(q, q̇) + τ)` by a Cholesky factorisation of
/// the mass matrix `m`, with the generalised forces `f` (gravity, velocity terms, damping)
/// and the joint torques `tau`; `None` when `m` is not positive definite. Needs no pattern
/// ([`solve_spd`] finds the nonzeros on each call); [`TreeCholesky`] built once from the
/// pattern is the faster route.
pub fn forward_dynamics<const N: usize>(
    m: SMatrix<f64, N, N>,
    f: &SVector<f64, N>,
    tau: &SVector<f64, N>,
) -> Option<SVector<f64, N>> {
    solve_spd(m, f + tau)
}

/// `a⁻¹ b` for a symmetric positive definite `a` (its upper triangle read) by a Cholesky
/// factorisation `a = U Uᵀ`, `U` upper triangular, computed from the last row and column
/// up: for a kinematic tree's mass matrix with parents before children (the imported
/// order), that is leaves first, which makes no fill-in (Featherstone's `LᵀL`
/// factorisation): `U[i][k]` is nonzero only where joint `i` is an ancestor of joint `k`.
/// Each step updates only the pairs of nonzero entries of its column, so the cost is the sum
/// over the joints of their depth squared rather than `n³/6`; the skipped products are
/// exact zeros, so the result is that of the dense factorisation for any matrix. `None`
/// when `a` is not positive definite (a pivot not positive, or not finite).
pub fn solve_spd<const N: usize>(
    mut a: SMatrix<f64, N, N>,
    mut b: SVector<f64, N>,
) -> Option<SVector<f64, N>> {
    let u = a.as_mut_slice();
    // Column-major: entry (i, k) at i + k N; U in the upper triangle (i ≤ k).
    let mut nz = [0usize; N];
    for k in (0..N).rev() {
        let d = u[k + k * N];
        if !(d > 0.0 && d.is_finite()) {
            return None;
        }
        let r = d.sqrt();
        u[k + k * N] = r;
        // The column's nonzero entries above the diagonal, scaled.
        let mut count = 0;
        for i in 0..k {
            if u[i + k * N] != 0.0 {
                u[i + k * N] /= r;
                nz[count] = i;
                count += 1;
            }
        }
        // The update of the leading block: a[i][j] -= U[i][k] U[j][k], i ≤ j < k.
        for (p, &j) in nz[..count].iter().enumerate() {
            let ujk = u[j + k * N];
            for &i in &nz[..=p] {
                u[i + j * N] -= u[i + k * N] * ujk;
            }
        }
    }
    // U y = b from the bottom, then Uᵀ x = y from the top.
    for k in (0..N).rev() {
        b[k] /= u[k + k * N];
        let y = b[k];
        for i in 0..k {
            b[i] -= u[i + k * N] * y;
        }
    }
    for k in 0..N {
        let mut s = b[k];
        for i in 0..k {
            s -= u[i + k * N] * b[i];
        }
        b[k] = s / u[k + k * N];
    }
    Some(b)
}

/// The rotation matrix of a unit quaternion `(w, x, y, z)`.
fn quat_matrix([w, x, y, z]: [f64; 4]) -> Matrix3<f64> {
    Matrix3::new(
        1.0 - 2.0 * (y * y + z * z),
        2.0 * (x * y - w * z),
        2.0 * (x * z + w * y),
        2.0 * (x * y + w * z),
        1.0 - 2.0 * (x * x + z * z),
        2.0 * (y * z - w * x),
        2.0 * (x * z - w * y),
        2.0 * (y * z + w * x),
        1.0 - 2.0 * (x * x + y * y),
    )
}

/// `q̇_quat = ½ q ⊗ (0, ω)`: the rates of a unit quaternion `q` turning with the angular
/// velocity `ω` in its own axes.
fn quat_rate([w, x, y, z]: [f64; 4], o: &Vector3<f64>) -> [f64; 4] {
    [
        0.5 * (-x * o[0] - y * o[1] - z * o[2]),
        0.5 * (w * o[0] - z * o[1] + y * o[2]),
        0.5 * (z * o[0] + w * o[1] - x * o[2]),
        0.5 * (-y * o[0] + x * o[1] + w * o[2]),
    ]
}

/// The base's quaternion of `q`, the base's linear and angular velocity of `v`.
fn base_parts<const N: usize, const NV: usize>(
    q: &SVector<f64, N>,
    v: &SVector<f64, NV>,
) -> ([f64; 4], Vector3<f64>, Vector3<f64>) {
    (
        [q[3], q[4], q[5], q[6]],
        Vector3::new(v[0], v[1], v[2]),
        Vector3::new(v[3], v[4], v[5]),
    )
}

/// The coordinate rates `q̇ = G(q) v` of a robot on a floating base (coordinates: the root
/// link's position `p` and unit quaternion `(w, x, y, z)`, then the joints) from
/// Pinocchio's free-flyer velocities `v = (v_lin, ω, joint rates)`, the root link's linear
/// and angular velocity in its own axes: `ṗ = R(q) v_lin`, `q̇_quat = ½ q ⊗ (0, ω)`.
/// `NV` is `N − 1`.
pub fn floating_rates<const N: usize, const NV: usize>(
    q: &SVector<f64, N>,
    v: &SVector<f64, NV>,
) -> SVector<f64, N> {
    let (quat, v_lin, omega) = base_parts(q, v);
    let p = quat_matrix(quat) * v_lin;
    let r = quat_rate(quat, &omega);
    SVector::from_fn(|k, _| match k {
        0..=2 => p[k],
        3..=6 => r[k - 3],
        _ => v[k - 1],
    })
}

/// Forward dynamics of a robot on a floating base in Pinocchio's free-flyer velocities
/// (see [`floating_rates`]), Pinocchio's `aba`: with `q̇ = G v`, the accelerations `v̇`
/// solve `Gᵀ M G v̇ = Gᵀ (f − M Ġ v) + τ`, where `M` and `f` are the generated `mass_matrix`
/// and `forces` at `(q, G v)` and `Ġ v = (R [ω]ₓ v_lin, ½ q̇_quat ⊗ (0, ω), 0)`.
///
/// `G` is the identity on the joints, so `Gᵀ M G` is never formed: the joints' rows of `M`
/// are eliminated first, in the coordinates, by a [`TreeCholesky`] built once from the
/// structural pattern of `M` (the generated `MASS_NONZEROS`); only the base's 7 × 7 Schur
/// complement `S` and its right-hand side `r` are mapped, to the 6 × 6 system
/// `Gbᵀ S Gb v̇_b = Gbᵀ (r − S Ġv_b) + τ_b` (`Gb`: `G`'s base block, `Ġv_b`: `Ġ v`'s base rows),
/// and the joints' accelerations follow by back substitution from the base's coordinate
/// accelerations `Gb v̇_b + Ġv_b`. One workspace, no `N × N` copies.
///
/// `N` coordinates (the base's position and unit quaternion `(w, x, y, z)` first), `NV = N − 1`
/// velocities.
#[derive(Clone, Debug)]
pub struct FloatingBase<const N: usize, const NV: usize> {
    chol: TreeCholesky<N>,
}

impl<const N: usize, const NV: usize> FloatingBase<N, NV> {
    /// The solver for a mass matrix whose nonzeros are among `pattern` (`(row, column)`
    /// in the coordinates, as the generated `MASS_NONZEROS`); an entry outside `N × N`, or
    /// `N ≠ NV + 1` or `N < 7`, is an error.
    pub fn new(pattern: &[(usize, usize)]) -> Result<Self, PatternError> {
        if N != NV + 1 || N < 7 {
            return Err(PatternError::Shape { n: N, nv: NV });
        }
        Ok(Self {
            chol: TreeCholesky::new(pattern)?,
        })
    }

    /// [`new`](Self::new), with the straight-line `kernel` generated for the same pattern
    /// (stop 7: the robots' `kernels::<name>::KERNEL`); a kernel of another pattern is an
    /// error.
    pub fn with_kernel(
        pattern: &[(usize, usize)],
        kernel: Kernel<N>,
    ) -> Result<Self, PatternError> {
        if N != NV + 1 || N < 7 {
            return Err(PatternError::Shape { n: N, nv: NV });
        }
        Ok(Self {
            chol: TreeCholesky::with_kernel(pattern, kernel)?,
        })
    }

    /// The coordinates' [`TreeCholesky`] (its elimination tree and fill-in).
    pub fn cholesky(&self) -> &TreeCholesky<N> {
        &self.chol
    }

    /// The accelerations `v̇` at the coordinates `q` and velocities `v`, from the generated
    /// mass matrix `m` (upper triangle read, at the pattern's entries) and forces `f` at
    /// `(q, G v)`, and the torques `tau` (in the velocities: the base's six first). An error
    /// when the joints' block of `m` or `Gᵀ M G` is not positive definite: the row of a
    /// joint's failed pivot (its coordinate, ≥ 7), or 6 for the base's mapped 6 × 6 system.
    pub fn forward_dynamics(
        &mut self,
        q: &SVector<f64, N>,
        v: &SVector<f64, NV>,
        m: &SMatrix<f64, N, N>,
        f: &SVector<f64, N>,
        tau: &SVector<f64, NV>,
    ) -> Result<SVector<f64, NV>, NotPositiveDefinite> {
        let (quat, v_lin, omega) = base_parts(q, v);
        // G's base block is block diagonal: R (3 × 3) on the position, Bq (4 × 3) on the
        // quaternion (its columns: the rates of a turn about each own axis).
        let rot = quat_matrix(quat);
        let [c0, c1, c2] = [Vector3::x(), Vector3::y(), Vector3::z()].map(|e| quat_rate(quat, &e));
        let bq = SMatrix::<f64, 4, 3>::from_fn(|r, c| [c0, c1, c2][c][r]);
        // Ġ v on the base rows.
        let qd_quat = quat_rate(quat, &omega);
        let a = rot * omega.cross(&v_lin);
        let b = quat_rate(qd_quat, &omega);
        let gdv = SVector::<f64, 7>::from_column_slice(&[a[0], a[1], a[2], b[0], b[1], b[2], b[3]]);
        // The right-hand side in the coordinates: the joints' torques added (G is the
        // identity there), the base's mapped below.
        let mut rhs = *f;
        for k in 7..N {
            rhs[k] += tau[k - 1];
        }
        self.chol.eliminate_below(m, &mut rhs, 7)?;
        let s = self.chol.leading_block::<7>();
        // Gbᵀ S Gb and Gbᵀ (r − S Ġv_b) + τ_b, block by block.
        let (spp, spq, sqq) = (
            s.fixed_view::<3, 3>(0, 0),
            s.fixed_view::<3, 4>(0, 3),
            s.fixed_view::<4, 4>(3, 3),
        );
        let spq_bq = spq * bq;
        let mut k_base = SMatrix::<f64, 6, 6>::zeros();
        k_base
            .fixed_view_mut::<3, 3>(0, 0)
            .copy_from(&(rot.transpose() * spp * rot));
        let k_pw = rot.transpose() * spq_bq;
        k_base.fixed_view_mut::<3, 3>(0, 3).copy_from(&k_pw);
        k_base
            .fixed_view_mut::<3, 3>(3, 0)
            .copy_from(&k_pw.transpose());
        k_base
            .fixed_view_mut::<3, 3>(3, 3)
            .copy_from(&(bq.transpose() * sqq * bq));
        let w = rhs.fixed_rows::<7>(0) - s * gdv;
        let mut r_base = SVector::<f64, 6>::zeros();
        r_base
            .fixed_rows_mut::<3>(0)
            .copy_from(&(rot.transpose() * w.fixed_rows::<3>(0)));
        r_base
            .fixed_rows_mut::<3>(3)
            .copy_from(&(bq.transpose() * w.fixed_rows::<4>(3)));
        r_base += tau.fixed_rows::<6>(0);
        let a_base = k_base
            .cholesky()
            .ok_or(NotPositiveDefinite { row: 6 })?
            .solve(&r_base);
        // The base's coordinate accelerations, then the joints'.
        let y_p = rot * a_base.fixed_rows::<3>(0);
        let y_q = bq * a_base.fixed_rows::<3>(3);
        for r in 0..3 {
            rhs[r] = y_p[r] + gdv[r];
        }
        for r in 0..4 {
            rhs[3 + r] = y_q[r] + gdv[3 + r];
        }
        self.chol.finish(&mut rhs, 7);
        Ok(SVector::from_fn(
            |k, _| {
                if k < 6 {
                    a_base[k]
                } else {
                    rhs[k + 1]
                }
            },
        ))
    }
}
