//! The reference's registration proof of work: the smallest counter ≥ 0 such that
//! SHA-256(UTF-8(nonce ‖ public_key ‖ decimal(counter))) starts with `difficulty` zero bytes
//! (byte-granular, not bits).

use crate::error::{Error, Result};
use crate::hash;

/// The most zero bytes asked for: 4 already takes about 2^32 hashes, and a server that asks for more
/// would keep a client busy for days.
pub const MAX_DIFFICULTY: u32 = 4;

fn checked(difficulty: u32) -> Result<usize> {
    if difficulty > MAX_DIFFICULTY {
        return Err(Error::PowDifficultyRange(difficulty));
    }
    Ok(difficulty as usize)
}

fn meets(prefix: &mut Vec<u8>, base: usize, counter: u64, zeros: usize) -> bool {
    prefix.truncate(base);
    prefix.extend_from_slice(counter.to_string().as_bytes());
    hash::sha256(prefix)[..zeros].iter().all(|&b| b == 0)
}

/// Whether `counter` meets the difficulty (not whether it is the smallest that does).
pub fn check(nonce: &str, public_key: &str, counter: u64, difficulty: u32) -> Result<bool> {
    let zeros = checked(difficulty)?;
    let mut buf = [nonce.as_bytes(), public_key.as_bytes()].concat();
    let base = buf.len();
    Ok(meets(&mut buf, base, counter, zeros))
}

/// The smallest counter that meets the difficulty.
pub fn solve(nonce: &str, public_key: &str, difficulty: u32) -> Result<u64> {
    let zeros = checked(difficulty)?;
    let mut buf = [nonce.as_bytes(), public_key.as_bytes()].concat();
    let base = buf.len();
    // At 4 zero bytes a solution lies past 2^40 with probability about e^-256: the loop ends.
    (0u64..).find(|&c| meets(&mut buf, base, c, zeros)).ok_or(Error::PowDifficultyRange(difficulty))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn difficulty_zero_is_counter_zero_and_the_bound_is_typed() {
        assert_eq!(solve("n", "k", 0), Ok(0));
        assert_eq!(solve("n", "k", 5), Err(Error::PowDifficultyRange(5)));
        assert_eq!(check("n", "k", 0, 5), Err(Error::PowDifficultyRange(5)));
    }
}
