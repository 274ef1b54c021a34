//! Matrix products: MatMul and Gemm on the packed GEMM, Einsum.

pub mod einsum;
pub mod gemm;
pub mod matmul;
