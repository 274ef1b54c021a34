//! Axis arguments of ONNX ops: negative values count from the back.

/// Axis `a` of a rank-`rank` tensor, `None` when out of range.
pub fn normalize(a: i64, rank: usize) -> Option<usize> {
    let r = i64::try_from(rank).ok()?;
    let v = if a < 0 { a + r } else { a };
    (0..r).contains(&v).then_some(v as usize)
}

/// Every axis of `axes` normalized; `None` when one is out of range.
pub fn normalize_all(axes: &[i64], rank: usize) -> Option<Vec<usize>> {
    axes.iter().map(|&a| normalize(a, rank)).collect()
}

/// `axes` normalized, or every axis when absent.
pub fn or_all(axes: Option<&[i64]>, rank: usize) -> Option<Vec<usize>> {
    match axes {
        Some(a) => normalize_all(a, rank),
        None => Some((0..rank).collect()),
    }
}

/// `v` clamped into `0..=len` after adding `len` to negative values (the
/// rule of Slice starts/ends and Shape's start/end).
pub fn clamp_index(v: i64, len: i64) -> i64 {
    let v = if v < 0 { v.saturating_add(len) } else { v };
    v.clamp(0, len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_axes_count_from_the_back() {
        assert_eq!(normalize(-1, 3), Some(2));
        assert_eq!(normalize(3, 3), None);
        assert_eq!(normalize(-4, 3), None);
        assert_eq!(or_all(None, 2), Some(vec![0, 1]));
        assert_eq!(clamp_index(-10, 4), 0);
        assert_eq!(clamp_index(i64::MAX, 4), 4);
    }
}
