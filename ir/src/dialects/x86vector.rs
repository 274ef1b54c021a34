//! `x86vector`: x86 vector instructions that no target-neutral op
//! expresses, for kernels that bufferize writes only when the target has
//! them (as MLIR's x86vector dialect does).

use super::{expect_counts, op_error, operand_type, result_type};
use crate::diag::Result;
use crate::module::{Module, OpId};
use crate::Type;

/// `pmaddwd x, y` (SSE2 and up, any width): per i32 lane `i` of the
/// result, `x[2i]·y[2i] + x[2i+1]·y[2i+1]` of the i16 lanes, exact. The
/// LLVM emitter writes SSE2's 128-bit form per quarter or half, which
/// LLVM joins into AVX2's or AVX-512's where the function's CPU has them.
pub(crate) fn verify_pmaddwd(m: &Module, op: OpId) -> Result<()> {
    expect_counts(m, op, 2, 1)?;
    let r = result_type(m, op, 0)?.as_vector().cloned();
    let ok = r.is_some_and(|r| {
        let pairs = Type::vector(2 * r.len(), Type::i(16));
        r.shape.len() == 1
            && matches!(r.len(), 4 | 8 | 16)
            && r.elem.int_width() == Some(32)
            && (0..2).all(|i| operand_type(m, op, i).ok() == Some(&pairs))
    });
    if !ok {
        return Err(op_error(
            m,
            op,
            "operands must be vectors of 8, 16 or 32 i16 and the result half as many i32",
        ));
    }
    Ok(())
}

/// `vpdpbusd acc, u, s` (AVX-512 VNNI / AVX-VNNI): each i32 lane of `acc`
/// plus the four products of `u`'s unsigned bytes by `s`'s signed bytes
/// in that lane, without saturation; 4, 8 or 16 lanes.
pub(crate) fn verify_vpdpbusd(m: &Module, op: OpId) -> Result<()> {
    expect_counts(m, op, 3, 1)?;
    let t = result_type(m, op, 0)?;
    let ok = t.as_vector().is_some_and(|v| {
        v.shape.len() == 1 && matches!(v.len(), 4 | 8 | 16) && v.elem.int_width() == Some(32)
    });
    if !ok || (0..3).any(|i| operand_type(m, op, i).ok() != Some(t)) {
        return Err(op_error(
            m,
            op,
            "operands and result must be one vector of 4, 8 or 16 i32",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::text::parse_module;

    fn verdict(body: &str) -> Result<(), String> {
        let src = format!("func.func @f{body}");
        let m = parse_module(&src, "t").map_err(|e| e.to_string())?;
        crate::verify(&m).map_err(|e| e.to_string())
    }

    #[test]
    fn pair_dot_takes_twice_as_many_i16_as_it_gives_i32() {
        let ok = "(%x: vector<16xi16>) -> vector<8xi32> {
            %r = \"x86vector.pmaddwd\"(%x, %x) : (vector<16xi16>, vector<16xi16>) -> vector<8xi32>
            return %r : vector<8xi32>
        }";
        assert_eq!(verdict(ok), Ok(()));
        let lanes = "(%x: vector<16xi16>) -> vector<16xi32> {
            %r = \"x86vector.pmaddwd\"(%x, %x) : (vector<16xi16>, vector<16xi16>) -> vector<16xi32>
            return %r : vector<16xi32>
        }";
        assert!(verdict(lanes).is_err_and(|e| e.contains("half as many i32")));
    }

    #[test]
    fn byte_dot_and_bitcast_verify_their_types() {
        let ok = "(%a: vector<8xi32>, %q: vector<4xi8>) -> vector<8xi32> {
            %w = vector.bitcast %q : vector<4xi8> to vector<1xi32>
            %r = x86vector.vpdpbusd %a, %a, %a : vector<8xi32>
            return %r : vector<8xi32>
        }";
        assert_eq!(verdict(ok), Ok(()));
        let floats = "(%a: vector<8xf32>) -> vector<8xf32> {
            %r = x86vector.vpdpbusd %a, %a, %a : vector<8xf32>
            return %r : vector<8xf32>
        }";
        assert!(verdict(floats).is_err_and(|e| e.contains("4, 8 or 16 i32")));
        let bits = "(%q: vector<4xi8>) -> () {
            %w = vector.bitcast %q : vector<4xi8> to vector<2xi32>
            return
        }";
        assert!(verdict(bits).is_err_and(|e| e.contains("same bit count")));
    }
}
