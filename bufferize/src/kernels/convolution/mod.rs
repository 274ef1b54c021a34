//! Convolutions and pooling: direct, Winograd, transposed, deformable, sliding windows.

pub mod causal_conv;
pub mod conv;
pub mod conv_transpose;
pub mod deform_conv;
pub mod lp_pool;
pub mod pool;
pub mod sliding;
pub mod window;
pub mod winograd;
