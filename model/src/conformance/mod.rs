//! Conformance (in progress).
