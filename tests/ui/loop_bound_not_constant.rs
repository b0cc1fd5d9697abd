mechgen::mechanism! {
    pub mod chain {
        param n = 3.0;
        for i in 0..n {
            coord q[i] = 0.0;
        }
        constraint q[0] == 1.0;
    }
}

fn main() {}
