//! Quantized ops: Quantize/DequantizeLinear, the int8 GEMM and convolutions, MatMulNBits.

pub mod integer;
pub mod linear;
pub mod nbits;
pub mod qgemm;
pub mod qlinear_matmul;
