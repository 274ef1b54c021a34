//! The shared secret of `--auth-token-file`: a fleet listens on a network,
//! so every request (but `health`) carries the token.

use sha2::{Digest, Sha256};
use std::path::Path;

/// The secret in `path` (the file of `flag`): its first line, trimmed; at
/// least 16 bytes. As ssh does with keys, a file that group or others may
/// read or write is refused.
pub fn read_secret(path: &Path, flag: &str) -> Result<String, String> {
    read_private(path, flag, 16)
}

/// The first line of `path`, at least `min_len` bytes, from a file only
/// its owner may read (see [`read_secret`]).
pub fn read_private(path: &Path, flag: &str, min_len: usize) -> Result<String, String> {
    let meta = std::fs::metadata(path)
        .map_err(|e| format!("cannot read {flag} '{}': {e}", path.display()))?;
    private_mode(&meta).map_err(|mode| {
        format!(
            "{flag} '{}' is open to group or others (mode {mode:o}): chmod 600 it",
            path.display()
        )
    })?;
    read_token(path, flag, min_len)
}

#[cfg(unix)]
fn private_mode(meta: &std::fs::Metadata) -> Result<(), u32> {
    use std::os::unix::fs::PermissionsExt;
    let mode = meta.permissions().mode() & 0o777;
    match mode & 0o077 {
        0 => Ok(()),
        _ => Err(mode),
    }
}

#[cfg(not(unix))]
fn private_mode(_: &std::fs::Metadata) -> Result<(), u32> {
    Ok(())
}

/// The token in `path`: its first line, trimmed; at least `min_len` bytes.
fn read_token(path: &Path, flag: &str, min_len: usize) -> Result<String, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {flag} '{}': {e}", path.display()))?;
    let token = text.lines().next().unwrap_or("").trim().to_string();
    if token.len() < min_len {
        return Err(format!(
            "the secret in '{}' ({flag}) is shorter than {min_len} bytes",
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
        assert_eq!(read_token(&dir.join("t"), "--x", 16).unwrap(), t);
        std::fs::write(dir.join("short"), "abc\n").unwrap();
        assert!(read_token(&dir.join("short"), "--x", 16).is_err());
        // Mode 0600 only: group- or world-readable secrets are refused.
        use std::os::unix::fs::PermissionsExt;
        let set = |mode| {
            std::fs::set_permissions(dir.join("t"), std::fs::Permissions::from_mode(mode)).unwrap()
        };
        set(0o644);
        let e = read_secret(&dir.join("t"), "--x").unwrap_err();
        assert!(e.contains("chmod 600"), "{e}");
        set(0o600);
        assert_eq!(read_secret(&dir.join("t"), "--x").unwrap(), t);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
