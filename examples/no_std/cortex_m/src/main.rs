//! check.c's checks as a Cortex-M4F program: the no_std library's functions (generated code
//! and the runtime without `std`, `f64` in software on a single-precision FPU) against
//! central differences, the dual-number pass, the null space's defining property, the `f32`
//! module and the closed-form output, at 100 configurations. Run by `cross.sh` under
//! `qemu-system-arm -M mps2-an386 -semihosting`: the result is printed through semihosting and
//! the exit status is QEMU's (0 when every check holds).
#![no_std]
#![no_main]

use cortex_m_rt::entry;
use cortex_m_semihosting::{debug, hprintln};
use mechgen_no_std_check as mg;

const NQ: usize = 3;
const NC: usize = 2;
const DOF: usize = 1;

/// Deterministic uniform numbers in `[-1, 1)` (check.c's xorshift).
struct Uniform(u64);

impl Uniform {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / 9_007_199_254_740_992.0 * 2.0 - 1.0
    }
}

/// `q` with coordinate `c` moved by `h`.
fn moved(q: &[f64; NQ], c: usize, h: f64) -> [f64; NQ] {
    let mut m = *q;
    m[c] += h;
    m
}

#[entry]
fn main() -> ! {
    let mut failures = 0;
    let mut expect = |ok: bool, what: &str, value: f64, limit: f64| {
        if !ok {
            hprintln!("FAIL {}: {:e} (limit {:e})", what, value, limit);
            failures += 1;
        }
    };
    let mut sizes = [0usize; 3];
    mg::mg_sizes(&mut sizes);
    expect(sizes == [NQ, NC, DOF], "sizes", sizes[0] as f64, NQ as f64);
    let mut q0 = [0.0; NQ];
    mg::mg_nominal(&mut q0);
    let mut c0 = [0.0; NC];
    mg::mg_residual(&q0, &mut c0);
    let r0 = libm::fabs(c0[0]) + libm::fabs(c0[1]);
    expect(r0 < 1e-12, "nominal residual", r0, 1e-12);

    let mut rng = Uniform(0x9e37_79b9_7f4a_7c15);
    let (mut fd, mut dual, mut cd, mut f32_, mut sym, mut ffd, mut tip) =
        (0.0f64, 0.0f64, 0.0f64, 0.0f64, 0.0f64, 0.0f64, 0.0f64);
    for _ in 0..100 {
        let mut q = [0.0; NQ];
        let mut qd = [0.0; NQ];
        for i in 0..NQ {
            q[i] = q0[i] + 0.3 * rng.next();
            qd[i] = rng.next();
        }
        let (mut j, mut jd) = ([0.0; NC * NQ], [0.0; NC * NQ]);
        mg::mg_jacobian(&q, &mut j);
        mg::mg_jacobian_dual(&q, &mut jd);
        let h = 1e-6;
        for c in 0..NQ {
            let (mut cp, mut cm) = ([0.0; NC], [0.0; NC]);
            mg::mg_residual(&moved(&q, c, h), &mut cp);
            mg::mg_residual(&moved(&q, c, -h), &mut cm);
            for r in 0..NC {
                let d = (cp[r] - cm[r]) / (2.0 * h);
                fd = fd.max(libm::fabs(d - j[r * NQ + c]));
                dual = dual.max(libm::fabs(jd[r * NQ + c] - j[r * NQ + c]));
            }
        }
        // C_J D = 0, with the identity at the independent coordinate (theta).
        let mut d = [0.0; NQ * DOF];
        let health = mg::mg_null_space(&q, &mut d);
        for r in 0..NC {
            let s: f64 = (0..NQ).map(|i| j[r * NQ + i] * d[i]).sum();
            cd = cd.max(libm::fabs(s));
        }
        expect(
            d[0] == 1.0 && health > 0.0 && health.is_finite(),
            "basis identity row / health",
            health,
            0.0,
        );
        // The f32 module's basis against the f64 one.
        let qf = q.map(|x| x as f32);
        let mut df = [0.0f32; NQ * DOF];
        mg::mg_null_space_f32(&qf, &mut df);
        for i in 0..NQ {
            f32_ = f32_.max(libm::fabs(df[i] as f64 - d[i]) / (1.0 + libm::fabs(d[i])));
        }
        // M symmetric.
        let mut m = [0.0; NQ * NQ];
        mg::mg_mass_matrix(&q, &mut m);
        for r in 0..NQ {
            for c in 0..NQ {
                sym = sym.max(libm::fabs(m[r * NQ + c] - m[c * NQ + r]));
            }
        }
        // ∂f/∂q against central differences of f.
        let mut fj = [0.0; NQ * NQ];
        mg::mg_forces_jacobian_q(&q, &qd, &mut fj);
        for c in 0..NQ {
            let (mut fp, mut fm) = ([0.0; NQ], [0.0; NQ]);
            mg::mg_forces(&moved(&q, c, h), &qd, &mut fp);
            mg::mg_forces(&moved(&q, c, -h), &qd, &mut fm);
            for r in 0..NQ {
                let d = (fp[r] - fm[r]) / (2.0 * h);
                ffd = ffd.max(libm::fabs(d - fj[r * NQ + c]) / (1.0 + libm::fabs(d)));
            }
        }
        // The output is the rod's midpoint, the inequality 0.45 - s.
        let mut o = [0.0; 3];
        mg::mg_tip_and_stop(&q, &mut o);
        let tx = 0.1 * libm::cos(q[0]) + 0.15 * libm::sin(q[1]);
        let ty = 0.1 * libm::sin(q[0]) - 0.15 * libm::cos(q[1]);
        let e = libm::fabs(o[0] - tx)
            .max(libm::fabs(o[1] - ty))
            .max(libm::fabs(o[2] - (0.45 - q[2])));
        tip = tip.max(e);
    }
    expect(fd < 1e-8, "jacobian vs central differences", fd, 1e-8);
    expect(dual < 1e-14, "jacobian vs dual numbers", dual, 1e-14);
    expect(cd < 1e-14, "C_J D", cd, 1e-14);
    expect(f32_ < 1e-5, "f32 basis vs f64", f32_, 1e-5);
    expect(sym == 0.0, "mass matrix symmetry", sym, 0.0);
    expect(
        ffd < 1e-6,
        "forces_jacobian_q vs central differences",
        ffd,
        1e-6,
    );
    expect(tip < 1e-15, "output and inequality", tip, 1e-15);
    hprintln!(
        "cortex-m4f check: jacobian-fd {:.1e}, dual {:.1e}, C_J D {:.1e}, f32 {:.1e}, forces-fd {:.1e}, outputs {:.1e}: {}",
        fd,
        dual,
        cd,
        f32_,
        ffd,
        tip,
        if failures == 0 { "ok" } else { "FAILED" }
    );
    debug::exit(if failures == 0 {
        debug::EXIT_SUCCESS
    } else {
        debug::EXIT_FAILURE
    });
    loop {}
}
