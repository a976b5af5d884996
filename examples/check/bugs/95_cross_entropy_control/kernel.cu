// CONTROL: a correct float32 cross-entropy with reduction "mean" (row
// contract cross_entropy.f32.f32.mean). The first kernel, one block of 256
// threads per row, computes the row's loss as log(sum exp(x - max)) -
// (x[t] - max): shifted by the row maximum, so exp never overflows; a target
// logit of -inf gives +inf (the contract's rule), other -inf logits add 0; an
// ignored row (target == ignore_index) writes nothing (its block still runs
// every barrier: no barrier sits under a branch on loaded data). The second kernel, one
// block, sums the losses of the rows not ignored and divides by their count:
// 0 / 0 = NaN when every row is ignored, as PyTorch's mean.
constexpr unsigned kThreads = 256;

struct Max {
    __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct Add {
    __device__ float operator()(float a, float b) const { return a + b; }
};

template <typename Op>
__device__ float block_reduce(float v, float* sh, Op op) {
    sh[threadIdx.x] = v;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) sh[threadIdx.x] = op(sh[threadIdx.x], sh[threadIdx.x + s]);
        __syncthreads();
    }
    const float r = sh[0];
    __syncthreads();
    return r;
}

extern "C" __global__ void row_losses(const float* in, const long long* target, float* row_loss, int rows, int cols,
                                      long long ignore_index) {
    __shared__ float sh[kThreads];
    const unsigned long long base = (unsigned long long)blockIdx.x * (unsigned long long)cols;
    float m = __int_as_float(0xff800000);
    for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, in[base + c]);
    m = block_reduce(m, sh, Max());
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) s += expf(in[base + c] - m);
    s = block_reduce(s, sh, Add());
    // Every thread reaches every barrier above; an ignored row's loss is not written.
    const long long t = target[blockIdx.x];
    if (threadIdx.x == 0 && t != ignore_index) row_loss[blockIdx.x] = logf(s) - (in[base + t] - m);
}

extern "C" __global__ void mean_loss(const long long* target, const float* row_loss, float* loss, int rows,
                                     long long ignore_index) {
    __shared__ float sh[kThreads];
    float s = 0.0f, k = 0.0f;
    for (int r = threadIdx.x; r < rows; r += blockDim.x) {
        if (target[r] != ignore_index) {
            s += row_loss[r];
            k += 1.0f;
        }
    }
    s = block_reduce(s, sh, Add());
    k = block_reduce(k, sh, Add());
    if (threadIdx.x == 0) loss[0] = s / k;
}
