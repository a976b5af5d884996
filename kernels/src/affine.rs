//! The non-commutative operator of reduce and scan, [`AffineMap`]
//! (composition of `x -> a*x + b` over wrapping u64), defined once in
//! `primlab-types` and shared with the model. Its Rust layout must equal the
//! CUDA `struct AffineMap` in `cuda/common/operators.cuh` (checked here).

pub use primlab_types::AffineMap;

#[cfg(test)]
mod tests {
    use super::*;

    /// The CUDA struct has the same size and alignment (checked by NVRTC).
    #[test]
    fn cuda_layout_matches() {
        assert_eq!((std::mem::size_of::<AffineMap>(), std::mem::align_of::<AffineMap>()), (16, 8));
        crate::compile::ensure_nvrtc().unwrap_or_else(|e| panic!("{e}: run `make verify`"));
        let unit = crate::sources::resolve_includes(
            "#include \"common/operators.cuh\"\n\
             static_assert(sizeof(primlab::AffineMap) == 16, \"size\");\n\
             static_assert(alignof(primlab::AffineMap) == 8, \"align\");\n\
             extern \"C\" __global__ void probe(primlab::AffineMap* m) { m->a = 1; m->b = 0; }\n",
        )
        .expect("headers resolve");
        let (_, log) =
            crate::compile::compile_source("affine_layout.cu", &unit, "sm_90").unwrap_or_else(|e| panic!("{e}"));
        assert!(log.is_empty(), "{log}");
    }
}
