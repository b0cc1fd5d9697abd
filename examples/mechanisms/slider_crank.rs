// The slider_crank mechanism, shared by the example and the tests.

mechgen::mechanism! {
    /// Planar slider crank: a crank of length `l1` turning about the origin, a rod of
    /// length `l2`, and a slider at `(s, 0)` on the x axis.
    pub mod slider_crank {
        /// Crank length (m).
        param l1 = 0.1;
        /// Rod length (m).
        param l2 = 0.3;
        coord theta = 0.3;
        coord beta = 1.4721295802647691;
        coord s = 0.39407456415626446;
        let crank = vec2(l1 * cos(theta), l1 * sin(theta));
        let rod = vec2(l2 * sin(beta), -l2 * cos(beta));
        constraint crank + rod == vec2(s, 0.0);
    }
}
