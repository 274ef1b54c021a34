//! Which rule infers each op: one exhaustive match, so an op added to the
//! table (onnx/ops.table) must be given a rule here, or an explicit "no
//! rule" (its declared result types stay).

use super::elementwise as ew;
use super::{
    control, data_ops as data, misc, ml, nn, reduce, sequence as seq, shape_ops as shape, signal,
    tensor_ops as tensor, vision, Ctx, Inferred,
};
use ir::Type;
use onnx::{ops, OpKind};

pub(super) fn infer(cx: &Ctx<'_>, kind: OpKind) -> Inferred {
    // Variants by name keep the table compact; the match stays exhaustive.
    use OpKind::*;
    match kind {
        Abs | Acos | Acosh | Asin | Asinh | Atan | Atanh | Binarizer | BitwiseNot | Ceil | Celu
        | Clip | Cos | Cosh | CumProd | CumSum | Elu | Erf | Exp | Floor | Gelu
        | GroupNormalization | HardSigmoid | HardSwish | Hardmax | Identity | Imputer | LRN
        | LeakyRelu | Log | LogSoftmax | LpNormalization | Mish | Neg | Not
        | OptionalGetElement | PRelu | RMSNormalization | Reciprocal | Relu | ReverseSequence
        | RotaryEmbedding | Round | Scatter | ScatterElements | ScatterND | Selu | Shrink
        | Sigmoid | Sign | Sin | Sinh | Softmax | Softplus | Softsign | Sqrt | SwiGLU | Swish
        | Tan | Tanh | TensorScatter | ThresholdedRelu | Trilu => ew::same_type(cx),
        // Names over 20 characters get arms of their own: rustfmt lays out
        // an alternation that holds one with a name per line.
        InstanceNormalization | MeanVarianceNormalization => ew::same_type(cx),
        Add | BitShift | BitwiseAnd | BitwiseOr | BitwiseXor | Div | Max | Mean | Min | Mod
        | Mul | Pow | Sub | Sum => ew::arith(cx),
        And | Equal | Greater | GreaterOrEqual | Less | LessOrEqual | Or | Xor => ew::predicate(cx),
        IsInf | IsNaN => ew::test(cx),
        Cast => ew::cast(cx),
        CastLike => ew::cast_like(cx),
        EyeLike => ew::eye_like(cx),
        Dropout => ew::dropout(cx),
        Where => ew::where_(cx),
        LayerNormalization => ew::layer_norm(cx),
        MatMul => nn::matmul(cx),
        MatMulInteger => nn::matmul_integer(cx),
        MatMulNBits => nn::matmul_nbits(cx),
        QLinearMatMul => nn::qlinear_matmul(cx),
        Gemm => nn::gemm(cx),
        Conv => nn::conv(cx),
        ConvInteger => nn::conv_integer(cx),
        QLinearConv => nn::qlinear_conv(cx),
        DeformConv => nn::deform_conv(cx),
        ConvTranspose => nn::conv_transpose(cx),
        MaxPool => nn::max_pool(cx),
        AveragePool => nn::average_pool(cx),
        LpPool => nn::lp_pool(cx),
        GlobalAveragePool | GlobalLpPool | GlobalMaxPool => nn::global_pool(cx),
        BatchNormalization => nn::batch_norm(cx),
        Reshape => shape::reshape(cx),
        Flatten => shape::flatten(cx),
        Transpose => shape::transpose(cx),
        Squeeze => shape::squeeze(cx),
        Unsqueeze => shape::unsqueeze(cx),
        Concat => shape::concat(cx),
        Gather => shape::gather(cx),
        GatherElements => shape::gather_elements(cx),
        Shape => shape::shape(cx),
        Size => shape::size(cx),
        Slice => shape::slice(cx),
        Expand => shape::expand(cx),
        ConstantOfShape => shape::constant_of_shape(cx),
        Range => shape::range(cx),
        Tile => data::tile(cx),
        Pad => data::pad(cx),
        NonZero => data::non_zero(cx),
        Split => data::split(cx),
        TopK => data::top_k(cx),
        DepthToSpace => data::depth_to_space(cx),
        SpaceToDepth => data::space_to_depth(cx),
        ReduceL1 => reduce::reduce_l1(cx),
        ReduceL2 => reduce::reduce_l2(cx),
        ReduceLogSum => reduce::reduce_log_sum(cx),
        ReduceLogSumExp => reduce::reduce_log_sum_exp(cx),
        ReduceMax => reduce::reduce_max(cx),
        ReduceMean => reduce::reduce_mean(cx),
        ReduceMin => reduce::reduce_min(cx),
        ReduceProd => reduce::reduce_prod(cx),
        ReduceSum => reduce::reduce_sum(cx),
        ReduceSumSquare => reduce::reduce_sum_square(cx),
        ArgMax => reduce::arg_max(cx),
        ArgMin => reduce::arg_min(cx),
        RandomUniformLike => misc::random_uniform_like(cx),
        RandomNormalLike => misc::random_normal_like(cx),
        Bernoulli => misc::bernoulli(cx),
        QuantizeLinear => misc::quantize_linear(cx),
        DequantizeLinear => misc::dequantize_linear(cx),
        DynamicQuantizeLinear => misc::dynamic_quantize_linear(cx),
        Resize => misc::resize(cx),
        Upsample => misc::upsample(cx),
        OneHot => misc::one_hot(cx),
        GatherND => misc::gather_nd(cx),
        Compress => misc::compress(cx),
        NonMaxSuppression => misc::non_max_suppression(cx),
        Yield => control::yield_(cx),
        If => control::if_(cx),
        Loop => control::loop_(cx),
        Scan => control::scan(cx),
        RNN => seq::rnn(cx),
        GRU => seq::gru(cx),
        LSTM => seq::lstm(cx),
        Attention => seq::attention(cx),
        LinearAttention => seq::linear_attention(cx),
        CausalConvWithState => seq::causal_conv_with_state(cx),
        DFT => signal::dft(cx),
        STFT => signal::stft(cx),
        HannWindow => signal::hann_window(cx),
        HammingWindow => signal::hamming_window(cx),
        BlackmanWindow => signal::blackman_window(cx),
        MelWeightMatrix => signal::mel_weight_matrix(cx),
        GridSample => vision::grid_sample(cx),
        AffineGrid => vision::affine_grid(cx),
        RoiAlign => vision::roi_align(cx),
        Col2Im => vision::col2im(cx),
        CenterCropPad => vision::center_crop_pad(cx),
        MaxUnpool => vision::max_unpool(cx),
        ImageDecoder => vision::image_decoder(cx),
        Einsum => tensor::einsum(cx),
        Unique => tensor::unique(cx),
        Det => tensor::det(cx),
        BitCast => tensor::bit_cast(cx),
        TfIdfVectorizer => tensor::tf_idf_vectorizer(cx),
        SoftmaxCrossEntropyLoss => tensor::softmax_cross_entropy_loss(cx),
        NegativeLogLikelihoodLoss => tensor::negative_log_likelihood_loss(cx),
        OptionalHasElement => tensor::optional_has_element(cx),
        Normalizer | Scaler => ml::to_f32(cx),
        ArrayFeatureExtractor => ml::array_feature_extractor(cx),
        LinearRegressor => ml::linear_regressor(cx),
        TreeEnsembleRegressor => ml::tree_ensemble_regressor(cx),
        TreeEnsemble => ml::tree_ensemble(cx),
        FeatureVectorizer => ml::feature_vectorizer(cx),
        OneHotEncoder => ml::one_hot_encoder(cx),
        LinearClassifier => ml::linear_classifier(cx),
        TreeEnsembleClassifier => ml::tree_ensemble_classifier(cx),
        LabelEncoder => ml::label_encoder(cx),
        Constant => constant(cx),
        NoValue => Ok(Some(vec![Type::None])),
        // A node onnxc does not know: its declared types stay.
        Foreign => Ok(None),
        // No rule: string, map and sequence results, random tensors of an
        // attribute shape, SVM classifiers; their declared types stay.
        CastMap | CategoryMapper | DictVectorizer | MaxRoiPool | Multinomial | RandomNormal
        | RandomUniform | RegexFullMatch | SVMClassifier | SVMRegressor | StringConcat
        | StringNormalizer | StringSplit | ZipMap => Ok(None),
    }
}

/// The type of the `value` it holds.
fn constant(cx: &Ctx<'_>) -> Inferred {
    let e = ops::Constant::of(cx.m, cx.op)
        .value()
        .ok_or_else(|| cx.err("requires a 'value' elements attribute"))?;
    Ok(Some(vec![e.tensor_type()]))
}
