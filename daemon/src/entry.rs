//! The value of a shared cache entry: a magic, a 32-byte tag, the
//! artifact. With a fleet secret (`--cache-key-file`) the tag is
//! HMAC-SHA256 under it over the cache key and the artifact: only a daemon
//! holding the secret writes entries the others serve, and an entry moved
//! to another key fails. Without one it is the artifact's sha256, which
//! catches a torn or foreign value but not a forgery: anyone who can
//! write to Redis then chooses what the daemon serves
//! (`--trust-shared-cache`).

use super::cache::Key;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

const SIGNED: &[u8; 13] = b"ONNXC-SHARE2\n";
const PLAIN: &[u8; 13] = b"ONNXC-SHARE1\n";
/// Magic and tag.
pub const HEADER: usize = 13 + 32;

/// Why a value is not served.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    /// Not an entry, or its checksum fails: delete it.
    Corrupt,
    /// Under a secret, an entry whose tag fails or that has none.
    Forged,
    /// Signed under a secret this daemon does not hold: leave it.
    Unverifiable,
}

fn mac(secret: &[u8], key: &Key, data: &[u8]) -> Hmac<Sha256> {
    let mut m = Hmac::<Sha256>::new_from_slice(secret)
        .unwrap_or_else(|_| unreachable!("HMAC takes a key of any length"));
    m.update(key);
    m.update(data);
    m
}

/// The value to store for `data` under `key`.
pub fn wrap(key: &Key, data: &[u8], secret: Option<&[u8]>) -> Vec<u8> {
    let mut v = Vec::with_capacity(HEADER + data.len());
    match secret {
        Some(s) => {
            v.extend_from_slice(SIGNED);
            v.extend_from_slice(&mac(s, key, data).finalize().into_bytes());
        }
        None => {
            v.extend_from_slice(PLAIN);
            v.extend_from_slice(&Sha256::digest(data));
        }
    }
    v.extend_from_slice(data);
    v
}

/// The artifact in `value`, if this daemon may serve it.
pub fn unwrap(key: &Key, mut value: Vec<u8>, secret: Option<&[u8]>) -> Result<Vec<u8>, Refused> {
    if value.len() < HEADER {
        return Err(match secret {
            Some(_) => Refused::Forged,
            None => Refused::Corrupt,
        });
    }
    let data = value.split_off(HEADER);
    let (magic, tag) = value.split_at(SIGNED.len());
    match (secret, magic == SIGNED, magic == PLAIN) {
        (Some(s), true, _) => match mac(s, key, &data).verify_slice(tag) {
            Ok(()) => Ok(data),
            Err(_) => Err(Refused::Forged),
        },
        (Some(_), false, _) => Err(Refused::Forged),
        (None, true, _) => Err(Refused::Unverifiable),
        (None, false, true) if Sha256::digest(&data).as_slice() == tag => Ok(data),
        (None, false, _) => Err(Refused::Corrupt),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &[u8] = b"fleet-secret-0123456789";

    #[test]
    fn plain_entries_detect_damage() {
        let key = [7; 32];
        let v = wrap(&key, b"artifact", None);
        assert_eq!(unwrap(&key, v.clone(), None).unwrap(), b"artifact");
        let mut bad = v.clone();
        *bad.last_mut().unwrap() ^= 1;
        assert_eq!(unwrap(&key, bad, None), Err(Refused::Corrupt));
        assert_eq!(unwrap(&key, v[..20].to_vec(), None), Err(Refused::Corrupt));
        assert_eq!(
            unwrap(&key, b"foreign value".to_vec(), None),
            Err(Refused::Corrupt)
        );
    }

    #[test]
    fn signed_entries_need_the_secret_and_their_key() {
        let (key, other) = ([7; 32], [8; 32]);
        let v = wrap(&key, b"artifact", Some(SECRET));
        assert_eq!(unwrap(&key, v.clone(), Some(SECRET)).unwrap(), b"artifact");
        // Moved to another key, signed under another secret, re-hashed by
        // someone without the secret, or altered: refused.
        assert_eq!(
            unwrap(&other, v.clone(), Some(SECRET)),
            Err(Refused::Forged)
        );
        let theirs = wrap(&key, b"artifact", Some(b"another-secret-0123456"));
        assert_eq!(unwrap(&key, theirs, Some(SECRET)), Err(Refused::Forged));
        let plain = wrap(&key, b"evil", None);
        assert_eq!(unwrap(&key, plain, Some(SECRET)), Err(Refused::Forged));
        let mut bad = v.clone();
        *bad.last_mut().unwrap() ^= 1;
        assert_eq!(unwrap(&key, bad, Some(SECRET)), Err(Refused::Forged));
        assert_eq!(
            unwrap(&key, b"short".to_vec(), Some(SECRET)),
            Err(Refused::Forged)
        );
        // A daemon without the secret leaves signed entries alone.
        assert_eq!(unwrap(&key, v, None), Err(Refused::Unverifiable));
    }
}
