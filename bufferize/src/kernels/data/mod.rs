//! Data movement, shapes and indexing: concat, split, slice, pad, gather and scatter.

pub mod build;
pub mod extra;
pub mod gather;
pub mod index;
pub mod misc;
pub mod nms;
pub mod pad;
pub mod shape;
pub mod slice;
pub mod unique;
