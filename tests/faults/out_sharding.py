"""Planted faults for suites/test_out_sharding.py: creators that forget the sharding asked for,
contractions that drop their accumulation type or round their operands, a convolution that drops
its rhs dilation, operations that drop out_sharding, and parameters read as their defaults."""

from .registry import fault, jnp_module, lax_module, wrap

CREATORS = ("zeros", "ones", "empty", "full", "zeros_like", "ones_like", "full_like", "empty_like", "arange",
            "linspace", "eye", "array", "asarray")
JNP_CONTRACTIONS = ("dot", "matmul", "tensordot", "einsum")
LAX_CONTRACTIONS = ("dot", "dot_general", "ragged_dot", "ragged_dot_general", "conv_general_dilated")


def dropping(names):
    """``make(original)``: the original called without the keywords ``names`` (each read as its default)."""
    def make(original):
        def replacement(*args, **kwargs):
            for name in names:
                kwargs.pop(name, None)
            return original(*args, **kwargs)
        return replacement
    return make


@fault("creators-drop-device-and-out-sharding",
       "jnp's creators (zeros, full, arange, linspace, eye, array, the *_like ...) ignore device= and out_sharding=",
       suites=("out_sharding",))
def creators_drop_device_and_out_sharding():
    for name in CREATORS:
        wrap(jnp_module(), name, dropping(("device", "out_sharding")))


@fault("contractions-ignore-preferred-element-type",
       "dot, matmul, tensordot, einsum, lax.dot(_general), ragged dots and convolutions accumulate in the operands' "
       "type, ignoring preferred_element_type", suites=("out_sharding",))
def contractions_ignore_preferred_element_type():
    for name in JNP_CONTRACTIONS:
        wrap(jnp_module(), name, dropping(("preferred_element_type",)))
    for name in LAX_CONTRACTIONS:
        wrap(lax_module(), name, dropping(("preferred_element_type",)))


# where each lax contraction takes precision positionally (the jnp ones take it by keyword only)
PRECISION_POSITION = {"dot_general": 3, "ragged_dot": 3, "ragged_dot_general": 4, "conv_general_dilated": 9}


@fault("contractions-round-float32-operands-to-bfloat16",
       "dot, matmul, tensordot, einsum and the lax contractions given a precision ignore it and round float32 "
       "operands to bfloat16 (what DEFAULT precision does on a TPU)", suites=("out_sharding",))
def contractions_round_float32_operands_to_bfloat16():
    jnp = jnp_module()

    def rounded(x):
        return jnp.asarray(x).astype(jnp.bfloat16).astype(jnp.float32) if getattr(x, "dtype", None) == jnp.float32 \
            else x

    def ignoring_precision(name, operands):
        def make(original):
            def replacement(*args, **kwargs):
                position = PRECISION_POSITION.get(name, len(args))
                if kwargs.pop("precision", None) is None and len(args) <= position:
                    return original(*args, **kwargs)
                args = [rounded(a) if i in operands(len(args)) else a for i, a in enumerate(args[:position])]
                return original(*args, **kwargs)
            return replacement
        return make

    for name in JNP_CONTRACTIONS:
        operands = (lambda n: range(1, n)) if name == "einsum" else (lambda n: (0, 1))
        wrap(jnp_module(), name, ignoring_precision(name, operands))
    for name in LAX_CONTRACTIONS:
        wrap(lax_module(), name, ignoring_precision(name, lambda n: (0, 1)))


@fault("conv-ignores-rhs-dilation", "lax.conv_general_dilated ignores rhs_dilation (given by keyword or position)",
       suites=("out_sharding",))
def conv_ignores_rhs_dilation():
    def make(original):
        def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None, rhs_dilation=None,
                                 *args, **kwargs):
            return original(lhs, rhs, window_strides, padding, lhs_dilation, None, *args, **kwargs)
        return conv_general_dilated
    wrap(lax_module(), "conv_general_dilated", make)


@fault("operations-drop-out-sharding",
       "the jnp and lax operations (broadcasts, reshapes, repeat, reductions, percentile, contractions) drop "
       "out_sharding and return the layout they infer", suites=("out_sharding",))
def operations_drop_out_sharding():
    for name in ("broadcast_to", "reshape", "ravel", "repeat", "bincount", "percentile") + JNP_CONTRACTIONS:
        wrap(jnp_module(), name, dropping(("out_sharding",)))
    for name in ("broadcast", "broadcasted_iota", "reshape", "reduce_sum", "empty") + LAX_CONTRACTIONS:
        wrap(lax_module(), name, dropping(("out_sharding",)))
    wrap(lax_module(), "full", dropping(("sharding",)))


@fault("parameters-read-as-their-defaults",
       "order, dimensions, endpoint, k, method, total_repeat_length, optimize and out are read as their defaults "
       "(order='C', no transpose, endpoint=True, k=0, 'linear', ...)", suites=("out_sharding",))
def parameters_read_as_their_defaults():
    jnp, lax = jnp_module(), lax_module()
    wrap(jnp, "reshape", dropping(("order",)))
    wrap(jnp, "ravel", dropping(("order",)))
    wrap(jnp, "linspace", dropping(("endpoint",)))
    wrap(jnp, "eye", dropping(("k",)))
    wrap(jnp, "percentile", dropping(("method", "out", "overwrite_input")))
    wrap(jnp, "einsum", dropping(("out",)))
    wrap(jnp, "repeat", dropping(("total_repeat_length",)))

    def lax_reshape(original):
        def reshape(operand, new_sizes, dimensions=None, **kwargs):
            return original(operand, new_sizes, **kwargs)
        return reshape
    wrap(lax, "reshape", lax_reshape)
