//! Analyses over the IR: dominance (liveness and buffer origins join later).

pub mod dominance;
pub mod view_layout;
