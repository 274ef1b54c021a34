//! Normalization, reductions, softmax, attention, rotary embeddings, recurrent cells, losses.

pub mod attention;
pub mod linear_attention;
pub mod loss;
pub mod norm;
pub mod reduce;
pub mod rnn;
pub mod rotary;
pub mod softmax;
