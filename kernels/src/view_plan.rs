//! The methods shared by the plans that enqueue on views of caller-owned
//! device memory ([`crate::ReducePlan`], [`crate::ScanPlan`]): the element
//! count, and `enqueue` on whole `CudaSlice`s, which is `enqueue_view` on
//! views of the whole slices (the same launches with the same arguments).

/// Inside the `impl` block of a plan over `E` with a field `n: usize` (its
/// element count, at least 1) and a method `enqueue_view(&mut self, &CudaView<'_,
/// E>, &mut CudaViewMut<'_, E::Output>) -> GpuResult<()>`: `len`, `is_empty`
/// and `enqueue`. The doc comments before `len;` and `enqueue;` become those
/// methods' docs; `CudaSlice` and `GpuResult` must be in scope.
macro_rules! view_plan_methods {
    ($(#[$len_doc:meta])* len; $(#[$enqueue_doc:meta])* enqueue;) => {
        $(#[$len_doc])*
        pub fn len(&self) -> usize {
            self.n
        }

        /// Always false: a plan holds at least one element.
        pub fn is_empty(&self) -> bool {
            self.n == 0
        }

        $(#[$enqueue_doc])*
        pub fn enqueue(&mut self, input: &CudaSlice<E>, output: &mut CudaSlice<E::Output>) -> GpuResult<()> {
            self.enqueue_view(&input.as_view(), &mut output.as_view_mut())
        }
    };
}
