// The five-bar shared by examples/atlas_map.rs and tests/atlas.rs.

mechgen::mechanism! {
    /// Planar five-bar: base joints at (0, 0) and (g, 0), proximal links l1, l4 (actuated
    /// angles a1, a2), distal links l2, l3 (absolute angles ph1, ph2) meeting at the tool.
    pub mod five_bar {
        param l1 = 1.0;
        param l2 = 2.0;
        param l3 = 2.0;
        param l4 = 1.0;
        param g = 1.5;
        coord a1 = 1.9;
        coord a2 = 1.164454;
        coord ph1 = 0.966718;
        coord ph2 = 2.158655;
        independent a1, a2;
        constraint vec2(l1 * cos(a1) + l2 * cos(ph1), l1 * sin(a1) + l2 * sin(ph1))
            == vec2(g + l4 * cos(a2) + l3 * cos(ph2), l4 * sin(a2) + l3 * sin(ph2));
    }
}
