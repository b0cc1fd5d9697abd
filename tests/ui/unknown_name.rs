mechgen::mechanism! {
    pub mod slider_crank {
        param l1 = 0.1;
        param l2 = 0.3;
        coord theta = 0.3;
        coord beta = 1.4721;
        coord s = 0.3941;
        let crank = vec2(l1 * cos(thetta), l1 * sin(theta));
        let rod = vec2(l2 * sin(beta), -l2 * cos(beta));
        constraint crank + rod == vec2(s, 0.0);
    }
}

fn main() {}
