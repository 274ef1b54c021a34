//! Standard base64 (RFC 4648) for inline models and binary artifacts,
//! through the `base64` crate. Decoding accepts padded and unpadded text.

use base64::alphabet::STANDARD;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::Engine;

/// Encodes with padding; decodes either form (clients differ).
pub const ENGINE: GeneralPurpose = GeneralPurpose::new(
    &STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// Base64 of a byte slice as `Display`: a serializer writes it straight
/// into its output (serde_json's `collect_str`), without a `String`.
pub fn display(data: &[u8]) -> base64::display::Base64Display<'_, 'static, GeneralPurpose> {
    base64::display::Base64Display::new(data, &ENGINE)
}

pub fn encode(data: &[u8]) -> String {
    ENGINE.encode(data)
}

pub fn decode(text: &str) -> Result<Vec<u8>, String> {
    ENGINE.decode(text).map_err(|e| e.to_string())
}

/// Decodes into `scratch` when the result can be at most `max` bytes;
/// `Ok(None)` when it would be larger (nothing is allocated then).
pub fn decode_bounded<'s>(
    text: &str,
    max: u64,
    scratch: &'s bumpalo::Bump,
) -> Result<Option<&'s [u8]>, String> {
    // The estimate exceeds the decoded size by at most 2 bytes.
    let bound = base64::decoded_len_estimate(text.len());
    if bound as u64 > max.saturating_add(2) {
        return Ok(None);
    }
    let out = scratch.alloc_slice_fill_copy(bound, 0u8);
    let n = ENGINE.decode_slice(text, out).map_err(|e| e.to_string())?;
    Ok(out.get(..n).filter(|d| d.len() as u64 <= max))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_both_paddings() {
        for n in 0..70usize {
            let data: Vec<u8> = (0..n).map(|i| (i * 37 + 11) as u8).collect();
            let e = encode(&data);
            assert_eq!(e.len() % 4, 0);
            assert_eq!(decode(&e).unwrap(), data);
            assert_eq!(display(&data).to_string(), e);
        }
        assert_eq!(encode(b"fo"), "Zm8=");
        assert_eq!(decode("Zm8").unwrap(), b"fo");
        assert!(decode("Zm9v!").is_err());
        assert!(decode("Z").is_err());
        assert!(decode("Zm8===").is_err());
    }

    #[test]
    fn bounded_decode_refuses_before_allocating() {
        let scratch = bumpalo::Bump::new();
        let text = encode(b"foobar");
        assert_eq!(
            decode_bounded(&text, 6, &scratch).unwrap(),
            Some(&b"foobar"[..])
        );
        assert_eq!(decode_bounded(&text, 5, &scratch).unwrap(), None);
        assert_eq!(
            decode_bounded("A".repeat(4000).as_str(), 10, &scratch).unwrap(),
            None
        );
        assert!(decode_bounded("Zm9v!", 10, &scratch).is_err());
    }
}
