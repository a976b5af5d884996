// BUG: a float32 cross-entropy with reduction "mean" (row contract
// cross_entropy.f32.f32.mean) whose per-row losses are right (shifted by the
// row maximum; an ignored row's loss written as 0) but whose mean divides by
// rows instead of the number of rows not ignored: with a quarter of the rows
// ignored the mean is a quarter too small (and 0 instead of NaN when all are).
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
    const long long t = target[blockIdx.x];
    if (threadIdx.x == 0) row_loss[blockIdx.x] = t == ignore_index ? 0.0f : logf(s) - (in[base + t] - m);
}

extern "C" __global__ void mean_loss(const float* row_loss, float* loss, int rows) {
    __shared__ float sh[kThreads];
    float s = 0.0f;
    for (int r = threadIdx.x; r < rows; r += blockDim.x) s += row_loss[r];
    s = block_reduce(s, sh, Add());
    if (threadIdx.x == 0) loss[0] = s / (float)rows;  // BUG: ignored rows counted
}
