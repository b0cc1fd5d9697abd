mechgen::mechanism! {
    pub mod m {
        coord th = 0.3;
        let A = rot(th);
        constraint (A * vec2(1.0, 0.0)).x == 0.5;
    }
}

fn main() {}
