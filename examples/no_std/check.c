/* Calls the generated functions of the no_std static library (src/lib.rs) from C and checks
 * their numbers against independent computations: central differences of the residual and
 * of the forces, the null space's defining property, symmetry of the mass matrix, the dual-
 * number Jacobian, the f32 module against the f64 one, and the closed-form output.
 * Exit status 0 when every check holds; each failure prints what and by how much. */
#include <math.h>
#include <stdio.h>
#include <stddef.h>

#define NQ 3
#define NC 2
#define DOF 1

void mg_sizes(size_t out[3]);
void mg_nominal(double out[NQ]);
void mg_residual(const double q[NQ], double out[NC]);
void mg_jacobian(const double q[NQ], double out[NC * NQ]);
void mg_jacobian_dual(const double q[NQ], double out[NC * NQ]);
double mg_null_space(const double q[NQ], double out[NQ * DOF]);
float mg_null_space_f32(const float q[NQ], float out[NQ * DOF]);
void mg_mass_matrix(const double q[NQ], double out[NQ * NQ]);
void mg_forces(const double q[NQ], const double qd[NQ], double out[NQ]);
void mg_forces_jacobian_q(const double q[NQ], const double qd[NQ], double out[NQ * NQ]);
void mg_tip_and_stop(const double q[NQ], double out[3]);

static int failures = 0;

static void expect(int ok, const char *what, double value, double limit) {
    if (!ok) {
        printf("FAIL %s: %.3e (limit %.1e)\n", what, value, limit);
        failures++;
    }
}

/* Deterministic uniform numbers in [-1, 1). */
static unsigned long long state = 0x9e3779b97f4a7c15ULL;
static double uniform(void) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return (double)(state >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

int main(void) {
    size_t sizes[3];
    mg_sizes(sizes);
    expect(sizes[0] == NQ && sizes[1] == NC && sizes[2] == DOF, "sizes", (double)sizes[0], NQ);

    double q0[NQ];
    mg_nominal(q0);
    double c0[NC];
    mg_residual(q0, c0);
    expect(fabs(c0[0]) < 1e-12 && fabs(c0[1]) < 1e-12, "nominal residual", fabs(c0[0]) + fabs(c0[1]), 1e-12);

    double worst_fd = 0, worst_dual = 0, worst_cd = 0, worst_sym = 0, worst_f32 = 0, worst_ffd = 0,
           worst_tip = 0;
    for (int trial = 0; trial < 100; trial++) {
        double q[NQ], qd[NQ];
        for (int i = 0; i < NQ; i++) {
            q[i] = q0[i] + 0.3 * uniform();
            qd[i] = uniform();
        }
        double j[NC * NQ], jd[NC * NQ];
        mg_jacobian(q, j);
        mg_jacobian_dual(q, jd);
        /* The Jacobian against central differences of the residual, and the dual pass. */
        for (int c = 0; c < NQ; c++) {
            double qp[NQ], qm[NQ], cp[NC], cm[NC];
            const double h = 1e-6;
            for (int i = 0; i < NQ; i++) qp[i] = qm[i] = q[i];
            qp[c] += h;
            qm[c] -= h;
            mg_residual(qp, cp);
            mg_residual(qm, cm);
            for (int r = 0; r < NC; r++) {
                double fd = (cp[r] - cm[r]) / (2 * h);
                worst_fd = fmax(worst_fd, fabs(fd - j[r * NQ + c]));
                worst_dual = fmax(worst_dual, fabs(jd[r * NQ + c] - j[r * NQ + c]));
            }
        }
        /* C_J D = 0 with the identity at the independent coordinate (theta). */
        double d[NQ * DOF];
        double health = mg_null_space(q, d);
        for (int r = 0; r < NC; r++) {
            double s = 0;
            for (int i = 0; i < NQ; i++) s += j[r * NQ + i] * d[i];
            worst_cd = fmax(worst_cd, fabs(s));
        }
        expect(d[0] == 1.0 && health > 0 && isfinite(health), "basis identity row / health", health, 0);
        /* The f32 module's basis against the f64 one. */
        float qf[NQ], df[NQ * DOF];
        for (int i = 0; i < NQ; i++) qf[i] = (float)q[i];
        mg_null_space_f32(qf, df);
        for (int i = 0; i < NQ; i++)
            worst_f32 = fmax(worst_f32, fabs(df[i] - d[i]) / (1 + fabs(d[i])));
        /* M symmetric. */
        double m[NQ * NQ];
        mg_mass_matrix(q, m);
        for (int r = 0; r < NQ; r++)
            for (int c = 0; c < NQ; c++) worst_sym = fmax(worst_sym, fabs(m[r * NQ + c] - m[c * NQ + r]));
        /* ∂f/∂q against central differences of f. */
        double fj[NQ * NQ];
        mg_forces_jacobian_q(q, qd, fj);
        for (int c = 0; c < NQ; c++) {
            double qp[NQ], qm[NQ], fp[NQ], fm[NQ];
            const double h = 1e-6;
            for (int i = 0; i < NQ; i++) qp[i] = qm[i] = q[i];
            qp[c] += h;
            qm[c] -= h;
            mg_forces(qp, qd, fp);
            mg_forces(qm, qd, fm);
            for (int r = 0; r < NQ; r++) {
                double fd = (fp[r] - fm[r]) / (2 * h);
                worst_ffd = fmax(worst_ffd, fabs(fd - fj[r * NQ + c]) / (1 + fabs(fd)));
            }
        }
        /* The output is the rod's midpoint, the inequality 0.45 - s. */
        double o[3];
        mg_tip_and_stop(q, o);
        double tx = 0.1 * cos(q[0]) + 0.15 * sin(q[1]);
        double ty = 0.1 * sin(q[0]) - 0.15 * cos(q[1]);
        worst_tip = fmax(worst_tip, fmax(fabs(o[0] - tx), fmax(fabs(o[1] - ty), fabs(o[2] - (0.45 - q[2])))));
    }
    expect(worst_fd < 1e-8, "jacobian vs central differences", worst_fd, 1e-8);
    expect(worst_dual < 1e-14, "jacobian vs dual numbers", worst_dual, 1e-14);
    expect(worst_cd < 1e-14, "C_J D", worst_cd, 1e-14);
    expect(worst_f32 < 1e-5, "f32 basis vs f64", worst_f32, 1e-5);
    expect(worst_sym == 0.0, "mass matrix symmetry", worst_sym, 0.0);
    expect(worst_ffd < 1e-6, "forces_jacobian_q vs central differences", worst_ffd, 1e-6);
    expect(worst_tip < 1e-15, "output and inequality", worst_tip, 1e-15);
    printf("no_std check: jacobian-fd %.1e, dual %.1e, C_J D %.1e, f32 %.1e, forces-fd %.1e, outputs %.1e: %s\n",
           worst_fd, worst_dual, worst_cd, worst_f32, worst_ffd, worst_tip, failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}
