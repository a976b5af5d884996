"""PyTorch's row kernels checked under the row contracts, as PyTorch states
them (`framework="torch"`): `F.layer_norm` (and `aten.native_layer_norm`
with its saved mean and rstd), `F.rms_norm` with its default eps
(float32's machine epsilon, 2^-23, for every input type: the contract
`rmsnorm.<t>.<t>.eps_opmath`) and
`F.cross_entropy` (ignore_index -100, the mean over the rows not ignored),
over float32 and bfloat16, pass; a one-pass Triton layer norm
(var = E[x^2] - E[x]^2 in float32) fails on the offset rows with a line
naming `layernorm.f32.f32`. FOR THE GPU MACHINE: needs torch with CUDA (and
Triton for the last test); NOT RUN in this repository's CI (no GPU there),
and every test skips without it.

    pip install target/wheels/primlab-*.whl
    pytest examples/python/test_torch_rows.py -v
"""

import pytest

import primlab

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device visible to torch", allow_module_level=True)
F = torch.nn.functional

SEED = 0x5EED
TYPES = [("f32", torch.float32), ("bf16", torch.bfloat16)]


@pytest.mark.parametrize("short,dtype", TYPES)
def test_torch_layer_norm_passes(short, dtype):
    def layer_norm(x, gamma, beta, rows, cols, eps):
        return F.layer_norm(x.view(rows, cols), (cols,), gamma, beta, eps)

    name = f"layernorm.{short}.{short}.affine"
    result = primlab.check(
        layer_norm, primitive="layernorm", contract=name, framework="torch", device="cuda", seed=SEED
    )
    assert result.contract == name


def test_torch_native_layer_norm_saves_mean_and_rstd_within_the_contract():
    def native(x, gamma, beta, rows, cols, eps):
        out, mean, rstd = torch.ops.aten.native_layer_norm(x.view(rows, cols), [cols], gamma, beta, eps)
        return out, mean.float(), rstd.float()

    primlab.check(
        native, primitive="layernorm", contract="layernorm.bf16.bf16.affine.stats", device="cuda", seed=SEED
    )


@pytest.mark.parametrize("short,dtype", TYPES)
def test_torch_rms_norm_with_its_default_eps_passes_under_torchs_rule(short, dtype):
    def rms_norm(x, gamma, rows, cols, eps):
        return F.rms_norm(x.view(rows, cols), (cols,), gamma)  # eps None: float32's epsilon (opmath), also for bf16

    result = primlab.check(
        rms_norm, primitive="rmsnorm", contract=f"rmsnorm.{short}.{short}.affine", framework="torch",
        device="cuda", seed=SEED,
    )
    assert result.contract == f"rmsnorm.{short}.{short}.affine.eps_opmath"


@pytest.mark.parametrize("short,dtype", TYPES)
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_torch_cross_entropy_passes(short, dtype, reduction):
    def cross_entropy(x, target, rows, cols, ignore_index):
        return F.cross_entropy(x.view(rows, cols), target, ignore_index=ignore_index, reduction=reduction)

    primlab.check(
        cross_entropy, primitive="cross_entropy", contract=f"cross_entropy.{short}.{short}.{reduction}",
        framework="torch", device="cuda", seed=SEED,
    )


def test_a_one_pass_triton_layer_norm_fails_on_the_offset_rows():
    triton = pytest.importorskip("triton")
    tl = pytest.importorskip("triton.language")

    @triton.jit
    def one_pass(X, Y, cols, eps, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        s = tl.zeros([BLOCK], tl.float32)
        q = tl.zeros([BLOCK], tl.float32)
        for start in range(0, cols, BLOCK):
            offs = start + tl.arange(0, BLOCK)
            x = tl.load(X + row * cols + offs, mask=offs < cols, other=0.0)
            s += x
            q += x * x
        mean = tl.sum(s, 0) / cols
        var = tl.sum(q, 0) / cols - mean * mean  # cancels on rows of 1e4 + small integers
        rstd = 1.0 / tl.sqrt(var + eps)
        for start in range(0, cols, BLOCK):
            offs = start + tl.arange(0, BLOCK)
            x = tl.load(X + row * cols + offs, mask=offs < cols, other=0.0)
            tl.store(Y + row * cols + offs, (x - mean) * rstd, mask=offs < cols)

    def layer_norm(x, rows, cols, eps):
        y = torch.empty_like(x)
        one_pass[(rows,)](x, y, cols, eps, BLOCK=1024)
        return y

    with pytest.raises(AssertionError, match=r"layernorm/user\.layernorm\.f32\.f32 .*family=offset"):
        primlab.check(layer_norm, primitive="layernorm", contract="layernorm.f32.f32", device="cuda", seed=SEED)
