mechgen::mechanism! {
    pub mod m {
        coord th = 0.3;
        coord x = 0.4;
        let A = rot(th) * translate(vec2(1.0, 0.0));
        let B = translate(vec2(x, 0.0));
        joint ball = spherical(A, B);
    }
}

fn main() {}
