// reduce.cu: kernels of this family are being written (see kernels/src/family.rs).
#include "common/config.cuh"
