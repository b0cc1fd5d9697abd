// The spatial_slider_crank mechanism, shared by the example and the tests.

mechgen::mechanism! {
    /// Spatial slider crank: crank angle `theta` about z, rod direction by the angles
    /// `alpha` (about z) and `gamma` (elevation), slider position `s` along the line
    /// `(s, e_y, e_z)`. 4 coordinates, 3 constraint equations, 1 degree of freedom.
    pub mod spatial_slider_crank {
        /// Crank length (m).
        param r = 0.08;
        /// Rod length (m).
        param l = 0.3;
        /// Offset of the slider line in y (m).
        param ey = 0.05;
        /// Offset of the slider line in z (m).
        param ez = 0.1;
        coord theta = 0.5;
        coord alpha = -0.03;
        coord gamma = 0.35;
        coord s = 0.34;
        let crank_pin = rot_z(theta) * vec3(r, 0.0, 0.0);
        let rod = rot_z(alpha) * rot_y(-gamma) * vec3(l, 0.0, 0.0);
        constraint crank_pin + rod == vec3(s, ey, ez);
    }
}
