mechgen::mechanism! {
    pub mod slider_crank {
        param l1 = 0.1;
        param l2 = 0.3;
        coord theta = 0.3;
        coord beta = 0.46;
        coord s = 0.31;
        let crank = vec2(l1 * cos(thetta), l1 * sin(theta));
        let rod = vec2(l2 * sin(beta), -l2 * cos(beat));
        constraint vec2(l1 * cos(theta), l1 * sin(theta)) + vec2(l2 * sin(beta), -l2 * cos(beta)) == vec2(ss, 0.0);
    }
}

fn main() {}
