//! Which rule infers each op: one exhaustive match, so an op added to the
//! table (onnx/ops.table) must be given a rule here, or an explicit "no
//! rule" (its declared result types stay).

use super::elementwise as ew;
use super::{
    control, data_ops as data, misc, ml, nn, reduce, sequence as seq, shape_ops as shape, signal,
    tensor_ops as tensor, vision, Ctx, Inferred,
};
use ir::Type;
use onnx::{ops, OpKind as K};

pub(super) fn infer(cx: &Ctx<'_>, kind: K) -> Inferred {
    match kind {
        K::Abs
        | K::Acos
        | K::Acosh
        | K::Asin
        | K::Asinh
        | K::Atan
        | K::Atanh
        | K::Binarizer
        | K::BitwiseNot
        | K::Ceil
        | K::Celu
        | K::Clip
        | K::Cos
        | K::Cosh
        | K::CumProd
        | K::CumSum
        | K::Elu
        | K::Erf
        | K::Exp
        | K::Floor
        | K::Gelu
        | K::GroupNormalization
        | K::HardSigmoid
        | K::HardSwish
        | K::Hardmax
        | K::Identity
        | K::Imputer
        | K::InstanceNormalization
        | K::LRN
        | K::LeakyRelu
        | K::Log
        | K::LogSoftmax
        | K::LpNormalization
        | K::MeanVarianceNormalization
        | K::Mish
        | K::Neg
        | K::Not
        | K::OptionalGetElement
        | K::PRelu
        | K::RMSNormalization
        | K::Reciprocal
        | K::Relu
        | K::ReverseSequence
        | K::RotaryEmbedding
        | K::Round
        | K::Scatter
        | K::ScatterElements
        | K::ScatterND
        | K::Selu
        | K::Shrink
        | K::Sigmoid
        | K::Sign
        | K::Sin
        | K::Sinh
        | K::Softmax
        | K::Softplus
        | K::Softsign
        | K::Sqrt
        | K::SwiGLU
        | K::Swish
        | K::Tan
        | K::Tanh
        | K::TensorScatter
        | K::ThresholdedRelu
        | K::Trilu => ew::same_type(cx),
        K::Add
        | K::BitShift
        | K::BitwiseAnd
        | K::BitwiseOr
        | K::BitwiseXor
        | K::Div
        | K::Max
        | K::Mean
        | K::Min
        | K::Mod
        | K::Mul
        | K::Pow
        | K::Sub
        | K::Sum => ew::arith(cx),
        K::And
        | K::Equal
        | K::Greater
        | K::GreaterOrEqual
        | K::Less
        | K::LessOrEqual
        | K::Or
        | K::Xor => ew::predicate(cx),
        K::IsInf | K::IsNaN => ew::test(cx),
        K::Cast => ew::cast(cx),
        K::CastLike => ew::cast_like(cx),
        K::EyeLike => ew::eye_like(cx),
        K::Dropout => ew::dropout(cx),
        K::Where => ew::where_(cx),
        K::LayerNormalization => ew::layer_norm(cx),
        K::MatMul => nn::matmul(cx),
        K::MatMulInteger => nn::matmul_integer(cx),
        K::QLinearMatMul => nn::qlinear_matmul(cx),
        K::Gemm => nn::gemm(cx),
        K::Conv => nn::conv(cx),
        K::ConvInteger => nn::conv_integer(cx),
        K::QLinearConv => nn::qlinear_conv(cx),
        K::DeformConv => nn::deform_conv(cx),
        K::ConvTranspose => nn::conv_transpose(cx),
        K::MaxPool => nn::max_pool(cx),
        K::AveragePool => nn::average_pool(cx),
        K::LpPool => nn::lp_pool(cx),
        K::GlobalAveragePool | K::GlobalLpPool | K::GlobalMaxPool => nn::global_pool(cx),
        K::BatchNormalization => nn::batch_norm(cx),
        K::Reshape => shape::reshape(cx),
        K::Flatten => shape::flatten(cx),
        K::Transpose => shape::transpose(cx),
        K::Squeeze => shape::squeeze(cx),
        K::Unsqueeze => shape::unsqueeze(cx),
        K::Concat => shape::concat(cx),
        K::Gather => shape::gather(cx),
        K::GatherElements => shape::gather_elements(cx),
        K::Shape => shape::shape(cx),
        K::Size => shape::size(cx),
        K::Slice => shape::slice(cx),
        K::Expand => shape::expand(cx),
        K::ConstantOfShape => shape::constant_of_shape(cx),
        K::Range => shape::range(cx),
        K::Tile => data::tile(cx),
        K::Pad => data::pad(cx),
        K::NonZero => data::non_zero(cx),
        K::Split => data::split(cx),
        K::TopK => data::top_k(cx),
        K::DepthToSpace => data::depth_to_space(cx),
        K::SpaceToDepth => data::space_to_depth(cx),
        K::ReduceL1 => reduce::reduce_l1(cx),
        K::ReduceL2 => reduce::reduce_l2(cx),
        K::ReduceLogSum => reduce::reduce_log_sum(cx),
        K::ReduceLogSumExp => reduce::reduce_log_sum_exp(cx),
        K::ReduceMax => reduce::reduce_max(cx),
        K::ReduceMean => reduce::reduce_mean(cx),
        K::ReduceMin => reduce::reduce_min(cx),
        K::ReduceProd => reduce::reduce_prod(cx),
        K::ReduceSum => reduce::reduce_sum(cx),
        K::ReduceSumSquare => reduce::reduce_sum_square(cx),
        K::ArgMax => reduce::arg_max(cx),
        K::ArgMin => reduce::arg_min(cx),
        K::RandomUniformLike => misc::random_uniform_like(cx),
        K::RandomNormalLike => misc::random_normal_like(cx),
        K::Bernoulli => misc::bernoulli(cx),
        K::QuantizeLinear => misc::quantize_linear(cx),
        K::DequantizeLinear => misc::dequantize_linear(cx),
        K::DynamicQuantizeLinear => misc::dynamic_quantize_linear(cx),
        K::Resize => misc::resize(cx),
        K::Upsample => misc::upsample(cx),
        K::OneHot => misc::one_hot(cx),
        K::GatherND => misc::gather_nd(cx),
        K::Compress => misc::compress(cx),
        K::NonMaxSuppression => misc::non_max_suppression(cx),
        K::Yield => control::yield_(cx),
        K::If => control::if_(cx),
        K::Loop => control::loop_(cx),
        K::Scan => control::scan(cx),
        K::RNN => seq::rnn(cx),
        K::GRU => seq::gru(cx),
        K::LSTM => seq::lstm(cx),
        K::Attention => seq::attention(cx),
        K::LinearAttention => seq::linear_attention(cx),
        K::CausalConvWithState => seq::causal_conv_with_state(cx),
        K::DFT => signal::dft(cx),
        K::STFT => signal::stft(cx),
        K::HannWindow => signal::hann_window(cx),
        K::HammingWindow => signal::hamming_window(cx),
        K::BlackmanWindow => signal::blackman_window(cx),
        K::MelWeightMatrix => signal::mel_weight_matrix(cx),
        K::GridSample => vision::grid_sample(cx),
        K::AffineGrid => vision::affine_grid(cx),
        K::RoiAlign => vision::roi_align(cx),
        K::Col2Im => vision::col2im(cx),
        K::CenterCropPad => vision::center_crop_pad(cx),
        K::MaxUnpool => vision::max_unpool(cx),
        K::ImageDecoder => vision::image_decoder(cx),
        K::Einsum => tensor::einsum(cx),
        K::Unique => tensor::unique(cx),
        K::Det => tensor::det(cx),
        K::BitCast => tensor::bit_cast(cx),
        K::TfIdfVectorizer => tensor::tf_idf_vectorizer(cx),
        K::SoftmaxCrossEntropyLoss => tensor::softmax_cross_entropy_loss(cx),
        K::NegativeLogLikelihoodLoss => tensor::negative_log_likelihood_loss(cx),
        K::OptionalHasElement => tensor::optional_has_element(cx),
        K::Normalizer | K::Scaler => ml::to_f32(cx),
        K::ArrayFeatureExtractor => ml::array_feature_extractor(cx),
        K::LinearRegressor => ml::linear_regressor(cx),
        K::TreeEnsembleRegressor => ml::tree_ensemble_regressor(cx),
        K::TreeEnsemble => ml::tree_ensemble(cx),
        K::FeatureVectorizer => ml::feature_vectorizer(cx),
        K::OneHotEncoder => ml::one_hot_encoder(cx),
        K::Constant => constant(cx),
        K::NoValue => Ok(Some(vec![Type::None])),
        // No rule: string, map and sequence results, random tensors of an
        // attribute shape, classifiers; their declared types stay.
        K::CastMap
        | K::CategoryMapper
        | K::DictVectorizer
        | K::LabelEncoder
        | K::LinearClassifier
        | K::MaxRoiPool
        | K::Multinomial
        | K::RandomNormal
        | K::RandomUniform
        | K::RegexFullMatch
        | K::SVMClassifier
        | K::SVMRegressor
        | K::StringConcat
        | K::StringNormalizer
        | K::StringSplit
        | K::TreeEnsembleClassifier
        | K::ZipMap => Ok(None),
    }
}

/// The type of the `value` it holds.
fn constant(cx: &Ctx<'_>) -> Inferred {
    let e = ops::Constant::of(cx.m, cx.op)
        .value()
        .ok_or_else(|| cx.err("requires a 'value' elements attribute"))?;
    Ok(Some(vec![e.tensor_type()]))
}
