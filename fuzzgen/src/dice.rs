//! The source of random choices: a seeded ChaCha stream, or a byte slice (libFuzzer).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Where the choices of the generator and the mutator come from.
///
/// With a seed, every choice is drawn from `ChaCha8Rng` (deterministic per seed). With a
/// byte slice, each choice consumes four bytes (little endian); past the end of the slice
/// every choice is 0, the "smallest" option, so that libFuzzer's mutations of the bytes map
/// to local changes of the input and short slices give small inputs.
pub struct Dice {
    src: Src,
}

enum Src {
    Seeded(Box<ChaCha8Rng>),
    Bytes { data: Vec<u8>, pos: usize },
}

impl Dice {
    /// Choices drawn from `ChaCha8Rng` seeded with `seed`.
    pub fn from_seed(seed: u64) -> Self {
        Self {
            src: Src::Seeded(Box::new(ChaCha8Rng::seed_from_u64(seed))),
        }
    }

    /// Choices read from `data`, four bytes each, 0 once it is exhausted.
    pub fn from_bytes(data: &[u8]) -> Self {
        Self {
            src: Src::Bytes {
                data: data.to_vec(),
                pos: 0,
            },
        }
    }

    /// The next raw 32-bit choice.
    pub fn next_u32(&mut self) -> u32 {
        match &mut self.src {
            Src::Seeded(rng) => rng.next_u32(),
            Src::Bytes { data, pos } => {
                let mut b = [0u8; 4];
                for byte in &mut b {
                    if let Some(&x) = data.get(*pos) {
                        *byte = x;
                    }
                    *pos += 1;
                }
                u32::from_le_bytes(b)
            }
        }
    }

    /// A number in `0..n` (`0` when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        (self.next_u32() as u64 % n as u64) as usize
    }

    /// A number in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi.saturating_sub(lo) + 1)
    }

    /// True with probability `num / den`.
    pub fn chance(&mut self, num: usize, den: usize) -> bool {
        self.below(den) < num
    }

    /// A float uniform in `[lo, hi)`.
    pub fn float(&mut self, lo: f64, hi: f64) -> f64 {
        let u = f64::from(self.next_u32()) / 4_294_967_296.0;
        lo + (hi - lo) * u
    }

    /// One element of `items`. Panics on an empty slice: callers pick only from lists
    /// they have made non-empty (never from the input's bytes).
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_are_read_little_endian_then_zero() {
        let mut d = Dice::from_bytes(&[1, 0, 0, 0, 7, 1]);
        assert_eq!(d.next_u32(), 1);
        assert_eq!(d.next_u32(), 7 + 256);
        assert_eq!(d.next_u32(), 0);
        assert_eq!(d.below(5), 0);
    }

    #[test]
    fn seeded_is_deterministic() {
        let a: Vec<u32> = {
            let mut d = Dice::from_seed(42);
            (0..4).map(|_| d.next_u32()).collect()
        };
        let mut d = Dice::from_seed(42);
        let b: Vec<u32> = (0..4).map(|_| d.next_u32()).collect();
        assert_eq!(a, b);
        assert_ne!(a[0], a[1]);
    }
}
