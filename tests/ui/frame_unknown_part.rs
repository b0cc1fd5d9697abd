mechgen::mechanism! {
    pub mod m {
        coord th = 0.3;
        let A = rot(th);
        constraint A.z_axis.x == 0.5;
    }
}

fn main() {}
