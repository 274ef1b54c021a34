//! Standard base64 (RFC 4648, with padding) for inline models and binary
//! artifacts; small enough not to warrant a dependency.

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Base64 of a byte slice as `Display`: a serializer writes it straight
/// into its output (serde_json's `collect_str`), without a `String`.
pub struct Encoded<'a>(pub &'a [u8]);

impl std::fmt::Display for Encoded<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // 3 input bytes → 4 characters, written 1 KiB at a time.
        let mut out = [0u8; 1024];
        for block in self.0.chunks(768) {
            let mut n = 0;
            for chunk in block.chunks(3) {
                let b = [
                    chunk.first().copied().unwrap_or(0),
                    chunk.get(1).copied().unwrap_or(0),
                    chunk.get(2).copied().unwrap_or(0),
                ];
                let v = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
                for i in 0..4 {
                    out[n + i] = if i <= chunk.len() {
                        ALPHABET[((v >> (18 - 6 * i)) & 63) as usize]
                    } else {
                        b'='
                    };
                }
                n += 4;
            }
            // Only ASCII from the alphabet was written.
            f.write_str(std::str::from_utf8(&out[..n]).map_err(|_| std::fmt::Error)?)?;
        }
        Ok(())
    }
}

pub fn encode(data: &[u8]) -> String {
    Encoded(data).to_string()
}

fn value(c: u8) -> Option<u32> {
    Some(u32::from(match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => return None,
    }))
}

/// The exact decoded size of padded or unpadded base64 (whitespace is not
/// allowed), or why it cannot be base64.
pub fn decoded_size(text: &str) -> Result<usize, String> {
    let bytes = text.trim_end_matches('=').as_bytes();
    if text.len() - bytes.len() > 2 || bytes.len() % 4 == 1 {
        return Err("invalid base64 length".into());
    }
    Ok(bytes.len() / 4 * 3 + (bytes.len() % 4).saturating_sub(1))
}

/// Decodes into `out`, which holds exactly `decoded_size(text)` bytes.
pub fn decode_into(text: &str, out: &mut [u8]) -> Result<(), String> {
    if decoded_size(text)? != out.len() {
        return Err("base64 output of the wrong size".into());
    }
    let bytes = text.trim_end_matches('=').as_bytes();
    for (chunk, dst) in bytes.chunks(4).zip(out.chunks_mut(3)) {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            let v =
                value(c).ok_or_else(|| format!("invalid base64 character {:?}", char::from(c)))?;
            n |= v << (18 - 6 * i);
        }
        let full = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        let k = dst.len();
        dst.copy_from_slice(&full[..k]);
    }
    Ok(())
}

/// Decodes padded or unpadded base64; whitespace is not allowed.
pub fn decode(text: &str) -> Result<Vec<u8>, String> {
    let mut out = vec![0; decoded_size(text)?];
    decode_into(text, &mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        for n in 0..70usize {
            let data: Vec<u8> = (0..n).map(|i| (i * 37 + 11) as u8).collect();
            let e = encode(&data);
            assert_eq!(e.len() % 4, 0);
            assert_eq!(decode(&e).unwrap(), data);
        }
        assert_eq!(encode(b"foobar"), "Zm9vYmFy");
        assert_eq!(encode(b"fo"), "Zm8=");
        assert_eq!(decode("Zm8").unwrap(), b"fo");
        assert!(decode("Zm9v!").is_err());
        assert!(decode("Z").is_err());
        assert!(decode("Zm8===").is_err());
        assert_eq!(decoded_size("Zm9vYmE").unwrap(), 5);
        // Longer than one 768-byte block of the encoder.
        let big: Vec<u8> = (0..5000u32).map(|i| (i * 7 + i / 256) as u8).collect();
        assert_eq!(decode(&encode(&big)).unwrap(), big);
    }
}
