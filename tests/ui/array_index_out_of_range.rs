mechgen::mechanism! {
    pub mod chain {
        const len = [1.0, 2.0];
        coord q = 0.0;
        constraint q == len[2];
    }
}

fn main() {}
