//! Signal and sampling: DFT/STFT, windows, resize, grid sampling.

pub mod dft;
pub mod grid_sample;
pub mod interp;
pub mod resize;
