//! What names a memory: the id of a new episode, and the hash of its content.
//!
//! Both formulas live here only: Python's `Home.new_id` and `records.content_hash` call
//! them, and an import's items ([`super::items`]) use them in a batch. Text is taken as
//! bytes (Python hands a string's UTF-8, lone surrogates kept), so any text has an id.

use blake2::digest::{Update, VariableOutput};
use blake2::Blake2bVar;
use sha2::{Digest, Sha256};

/// The id of an episode written at `stamp` (its recording time, ISO) with `text`, the
/// home holding `n` rows before it (plus the ids a batch has taken): `ep-` and the 8-byte
/// BLAKE2b of `n|stamp|text` in hex. The caller steps `n` past an id already taken.
pub fn episode_id(n: u64, stamp: &[u8], text: &[u8]) -> String {
    let mut hasher = Blake2bVar::new(8).expect("8 bytes is a BLAKE2b output size");
    hasher.update(n.to_string().as_bytes());
    hasher.update(b"|");
    hasher.update(stamp);
    hasher.update(b"|");
    hasher.update(text);
    let mut digest = [0u8; 8];
    hasher
        .finalize_variable(&mut digest)
        .expect("the buffer is the output size");
    let mut id = String::with_capacity(3 + 16);
    id.push_str("ep-");
    hex(&mut id, &digest);
    id
}

/// What identifies a memory's content across ids: the SHA-256 of its user and narrative
/// (`cuemem-content\0user\0narrative`), in hex. It reveals nothing else.
pub fn content_hash(user: &[u8], narrative: &[u8]) -> String {
    let mut hasher = Sha256::new();
    Digest::update(&mut hasher, b"cuemem-content\0");
    Digest::update(&mut hasher, user);
    Digest::update(&mut hasher, b"\0");
    Digest::update(&mut hasher, narrative);
    let mut out = String::with_capacity(64);
    hex(&mut out, &hasher.finalize());
    out
}

fn hex(out: &mut String, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for &b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 15)] as char);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The values Python's hashlib gives for the same input.
    #[test]
    fn an_episode_id_is_blake2b_of_counter_stamp_and_text() {
        let id = episode_id(7, b"2026-01-02T03:04:05+00:00", "Acme signed é".as_bytes());
        assert_eq!(id, "ep-d01117782ab03a7e");
    }

    #[test]
    fn a_content_hash_is_sha256_of_user_and_narrative() {
        assert_eq!(
            content_hash(b"alice", "Acme signed é".as_bytes()),
            "c2f978bf9c0cbb9f7d110eae6246bc4ce1c9262a2cc74381c4d100f41c14f96a"
        );
    }
}
