// Schedule perturbation: a kernel that holds a share of the SMs while the
// kernels under test run on the rest, so their blocks are scheduled in other
// orders and at other times than on an idle GPU. Results that depend on
// block order (look-back that trusts blockIdx order, a missing fence before a
// flag, order-dependent atomics) show up here, where no sanitizer looks.
//
// Each block asks for a whole SM's shared memory (the launch sets it), so no
// two of them share an SM and the grid size is the number of SMs held.
// Even blocks hold until the host releases them; odd blocks let go one after
// another, stagger_ns apart, so the share held changes while the case runs.
// Every block also gives up at hold_ns: nothing may wait on this kernel
// forever (a kernel under test that needs every SM resident still ends).
extern "C" __global__ void __launch_bounds__(1024, 1)
primlab_hold_sms(const volatile unsigned int* release, unsigned long long hold_ns, unsigned long long stagger_ns) {
    extern __shared__ unsigned char held[];
    unsigned long long start;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    const unsigned long long limit =
        start + ((blockIdx.x & 1u) ? stagger_ns * (blockIdx.x / 2u + 1u) : hold_ns);
    if (threadIdx.x == 0) {
        held[0] = 0;
        unsigned long long now = start;
        while (*release == 0u && now < limit) {
            __nanosleep(2000);
            asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        }
    }
    // Every thread stays until thread 0 lets go (the block keeps its SM).
    __syncthreads();
}
