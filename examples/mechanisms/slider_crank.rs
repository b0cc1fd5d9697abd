// The slider_crank mechanism, shared by the example and the tests.

mechgen::mechanism! {
    /// Planar slider crank: a crank of length `l1` turning about the origin, a rod of
    /// length `l2`, and a slider at `(s, 0)` on the x axis. Uniform bars for the crank and
    /// the rod, a point mass for the slider, gravity along −y and a driving torque on the
    /// crank.
    pub mod slider_crank {
        /// Crank length (m).
        param l1 = 0.1;
        /// Rod length (m).
        param l2 = 0.3;
        /// Crank, rod and slider masses (kg).
        param m1 = 0.5;
        param m2 = 1.0;
        param m3 = 0.8;
        /// Gravitational acceleration (m/s²).
        param g = 9.81;
        /// Driving torque on the crank (N m).
        param torque = 0.0;
        coord theta = 0.3;
        coord beta = 1.4721295802647691;
        coord s = 0.39407456415626446;
        /// The crank is the natural driver: it turns through whole revolutions.
        independent theta;
        let crank = vec2(l1 * cos(theta), l1 * sin(theta));
        let rod = vec2(l2 * sin(beta), -l2 * cos(beta));
        constraint crank + rod == vec2(s, 0.0);

        body crank_bar { mass = m1, inertia = m1 * l1 * l1 / 12.0, com = crank / 2.0, angle = theta }
        body rod_bar { mass = m2, inertia = m2 * l2 * l2 / 12.0, com = crank + rod / 2.0, angle = beta }
        body slider { mass = m3, com = vec2(s, 0.0) }
        gravity = vec2(0.0, -g);
        force theta = torque;
    }
}
