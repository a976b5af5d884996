"""Row contracts from Python (layer norm, RMS norm, cross-entropy): NumPy
kernels written from each definition pass, and the classic bugs fail on the
family made for them with a line that names the row contract and the case:
a one-pass E[x^2] - E[x]^2 variance on rows of 1e4 + small integers, a mean
over every row where ignore_index rows must not count, a cross-entropy
without the max shift on logits near ±1e4."""

import numpy as np
import pytest

import primlab

SEED = 0x7E57


def bf16_to_f32(bits):
    """bfloat16 raw bits (as the harness stores them) to float32, exactly."""
    return (bits.astype(np.uint32) << 16).view(np.float32)


def f32_to_bf16(x):
    """float32 to bfloat16 raw bits, rounded to nearest even."""
    b = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


def layernorm_two_pass(x, gamma, beta, rows, cols, eps):
    """Layer norm in float32: the mean, then the mean square of the deviations."""
    x = x.reshape(rows, cols)
    mean = x.mean(axis=1, dtype=np.float32, keepdims=True)
    d = x - mean
    var = (d * d).mean(axis=1, dtype=np.float32, keepdims=True)
    rstd = np.float32(1) / np.sqrt(var + np.float32(eps))
    y = d * rstd * gamma + beta
    return y, mean.reshape(-1), rstd.reshape(-1)


def layernorm_one_pass(x, rows, cols, eps):
    """Planted bug: var = E[x^2] - E[x]^2 in float32 (clamped at 0, as some kernels do)."""
    x = x.reshape(rows, cols)
    mean = x.mean(axis=1, dtype=np.float32, keepdims=True)
    var = np.maximum((x * x).mean(axis=1, dtype=np.float32, keepdims=True) - mean * mean, np.float32(0))
    return (x - mean) / np.sqrt(var + np.float32(eps))


def rmsnorm(x, gamma, rows, cols, eps):
    x = x.reshape(rows, cols)
    ms = (x * x).mean(axis=1, dtype=np.float32, keepdims=True)
    return x / np.sqrt(ms + np.float32(eps)) * gamma


def losses(x, target, rows, cols, ignore_index, shift=True):
    """Each row's -log softmax(x)[target] in float32; None for an ignored row."""
    x = x.reshape(rows, cols)
    m = x.max(axis=1, keepdims=True) if shift else np.zeros((rows, 1), dtype=np.float32)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        lse = np.log(np.exp(x - m).sum(axis=1, dtype=np.float32)) + m.reshape(-1)
        return [None if t == ignore_index else np.float32(lse[r] - x[r, t]) for r, t in enumerate(target)]


def test_a_two_pass_layer_norm_passes_every_case_with_its_statistics():
    result = primlab.check(
        layernorm_two_pass, primitive="layernorm", contract="layernorm.f32.f32.affine.stats", seed=SEED
    )
    assert (result.primitive, result.contract) == ("layernorm", "layernorm.f32.f32.affine.stats")
    assert result.cases_passed == 14 * 6 and "of its tolerance" in result.closest


def test_a_bfloat16_layer_norm_in_float32_passes_and_the_parts_name_it():
    def kernel(x, rows, cols, eps):
        y, _, _ = layernorm_two_pass(bf16_to_f32(x), np.float32(1), np.float32(0), rows, cols, eps)
        return f32_to_bf16(y)

    result = primlab.check(kernel, primitive="layernorm", dtype_in="bfloat16", seed=SEED)
    assert result.contract == "layernorm.bf16.bf16"


def test_a_one_pass_variance_fails_on_the_offset_rows():
    with pytest.raises(AssertionError) as failure:
        primlab.check(layernorm_one_pass, primitive="layernorm", contract="layernorm.f32.f32", seed=SEED)
    text = str(failure.value)
    assert "FAIL layernorm/user.layernorm.f32.f32 n=61x31 " in text and "family=offset" in text, text
    assert "check=layernorm within atol + rtol |exact| + rtol_acc scale" in text
    assert "rerun: primlab.check(fn, primitive='layernorm', contract='layernorm.f32.f32'" in text


def test_an_rms_norm_passes_and_torchs_eps_is_a_named_rule():
    primlab.check(rmsnorm, primitive="rmsnorm", contract="rmsnorm.f32.f32.affine", seed=SEED)

    def torch_default_eps(x, rows, cols, eps):
        # F.rms_norm(x, shape) with eps None: float32's machine epsilon, whatever eps the case gives.
        return rmsnorm(x, np.float32(1), rows, cols, np.finfo(np.float32).eps)

    result = primlab.check(torch_default_eps, primitive="rmsnorm", dtype_in="float32", framework="torch", seed=SEED)
    assert result.contract == "rmsnorm.f32.f32.eps_opmath"
    with pytest.raises(AssertionError, match=r"rmsnorm/user\.rmsnorm\.f32\.f32 "):
        primlab.check(torch_default_eps, primitive="rmsnorm", contract="rmsnorm.f32.f32", seed=SEED)


def test_cross_entropy_per_row_and_mean_pass_and_planted_bugs_fail_on_their_families():
    def none(x, target, rows, cols, ignore_index):
        return np.array([0 if v is None else v for v in losses(x, target, rows, cols, ignore_index)], np.float32)

    def mean(x, target, rows, cols, ignore_index, count_ignored=False):
        counted = [v for v in losses(x, target, rows, cols, ignore_index) if v is not None]
        k = rows if count_ignored else len(counted)
        with np.errstate(invalid="ignore"):
            return np.float32(np.sum(counted, dtype=np.float32) / np.float32(k))

    primlab.check(none, primitive="cross_entropy", contract="cross_entropy.f32.f32.none", seed=SEED)
    result = primlab.check(mean, primitive="cross_entropy", dtype_in="float32", seed=SEED)
    assert result.contract == "cross_entropy.f32.f32.mean"
    # Rows of one logit lose 0 whatever is counted: the first failure is the all-ignored mean (0, not NaN).
    counted = r"cross_entropy/user\.cross_entropy\.f32\.f32\.mean .*family=(all_ignored|ignored_rows)"
    with pytest.raises(AssertionError, match=counted):
        primlab.check(
            lambda *a, **p: mean(*a, **p, count_ignored=True),
            primitive="cross_entropy", contract="cross_entropy.f32.f32.mean", seed=SEED,
        )

    def unshifted(x, target, rows, cols, ignore_index):
        rows_losses = losses(x, target, rows, cols, ignore_index, shift=False)
        return np.array([0 if v is None else v for v in rows_losses], np.float32)

    with pytest.raises(AssertionError, match=r"cross_entropy\.f32\.f32\.none .*family=extreme_logits"):
        primlab.check(unshifted, primitive="cross_entropy", contract="cross_entropy.f32.f32.none", seed=SEED)


def test_a_row_kind_takes_only_its_own_contracts():
    with pytest.raises(ValueError, match=r"primitive layernorm has the contracts layernorm\.<in>\.<out>"):
        primlab.check(layernorm_one_pass, primitive="layernorm", contract="rows.f32", seed=SEED)
    with pytest.raises(ValueError, match=r"a layernorm contract names its types"):
        primlab.check(layernorm_one_pass, primitive="layernorm", contract="layernorm", seed=SEED)


def test_case_ids_and_the_index_name_the_row_kind(tmp_path):
    # The ids `@primlab.cases` gives its tests: <primitive>-<contract>-n<size>-<family>-<run seed>.
    from primlab._cases import Export

    export = Export.create(tmp_path / "e", "rmsnorm", "rmsnorm.f32.f32.affine", None, SEED)
    assert export.primitive == "rmsnorm" and export.contracts == ["rmsnorm.f32.f32.affine"]
    first = export.cases[0]
    assert first.id == f"rmsnorm-rmsnorm.f32.f32.affine-n61x1-uniform-{SEED:#x}"
    assert [b.role for b in first.inputs] == ["in", "gamma"] and first.tolerance == "row_tolerance"
    assert {name for name, _, _ in first.params} == {"rows", "cols", "eps"}
