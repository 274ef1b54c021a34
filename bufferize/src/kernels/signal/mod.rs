//! Signal and sampling: DFT/STFT, the cosine windows, resize, grid sampling.

pub mod dft;
pub mod grid_sample;
pub mod interp;
pub mod resize;
pub mod windows;
