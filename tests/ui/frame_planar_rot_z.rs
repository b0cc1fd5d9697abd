mechgen::mechanism! {
    pub mod m {
        coord th = 0.3;
        let A = translate(vec2(1.0, 0.0)) * rot_z(th);
        constraint A.origin.x == 0.5;
    }
}

fn main() {}
