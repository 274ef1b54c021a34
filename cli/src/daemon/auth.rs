//! The shared secret of `--auth-token-file`: a fleet listens on a network,
//! so every request (but `health`) carries the token.

use sha2::{Digest, Sha256};
use std::path::Path;

/// The token in `path`: its first line, trimmed; at least 16 bytes.
pub fn read_token(path: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read --auth-token-file '{}': {e}", path.display()))?;
    let token = text.lines().next().unwrap_or("").trim().to_string();
    if token.len() < 16 {
        return Err(format!(
            "the token in '{}' is shorter than 16 bytes",
            path.display()
        ));
    }
    Ok(token)
}

/// True when `given` is the token. Both sides are hashed first, so the
/// comparison reads the same 32 bytes whatever the inputs and their
/// lengths, and it folds every byte difference before deciding.
pub fn token_matches(given: Option<&str>, expected: &str) -> bool {
    let Some(given) = given else {
        return false;
    };
    let a = Sha256::digest(given.as_bytes());
    let b = Sha256::digest(expected.as_bytes());
    let diff = a
        .iter()
        .zip(b.iter())
        .fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(diff) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_only_the_token() {
        let t = "0123456789abcdef-secret";
        assert!(token_matches(Some(t), t));
        assert!(!token_matches(Some("0123456789abcdef-secreT"), t));
        assert!(!token_matches(Some(""), t));
        assert!(!token_matches(None, t));
        let dir = std::env::temp_dir().join(format!("onnxc-auth-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("t"), format!("{t}\n")).unwrap();
        assert_eq!(read_token(&dir.join("t")).unwrap(), t);
        std::fs::write(dir.join("short"), "abc\n").unwrap();
        assert!(read_token(&dir.join("short")).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
