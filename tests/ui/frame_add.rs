mechgen::mechanism! {
    pub mod m {
        coord th = 0.3;
        let A = rot(th);
        let B = A + A;
        constraint th == 0.5;
    }
}

fn main() {}
