mechgen::mechanism! {
    pub mod m {
        coord th = 0.3;
        let A = rot(th);
        joint hinge = A;
    }
}

fn main() {}
