//! The one shape every `impl Operator` has: a value type, an identity, a checked combine, a
//! name and a commutativity flag. Each operator file states those five parts and nothing else,
//! so the trait's method signatures are written once.

/// Writes `impl Operator for $op` from its parts:
///
/// ```text
/// impl_operator!([generics] Op => Value {
///     name: "Op", commutative: true, identity: expr,
///     combine(a, b) => expr returning Result<Value, ModelError>
/// });
/// ```
///
/// `a` and `b` are bound to `&Value` (`a` covers the lower input range, as the trait says).
macro_rules! impl_operator {
    (
        [$($generic:ident: $bound:path),*] $op:ty => $value:ty {
            name: $name:literal,
            commutative: $commutative:literal,
            identity: $identity:expr,
            combine($a:ident, $b:ident) => $combine:expr $(,)?
        }
    ) => {
        impl<$($generic: $bound),*> $crate::operator::Operator for $op {
            type Value = $value;
            fn identity(&self) -> $value {
                $identity
            }
            fn combine(&self, $a: &$value, $b: &$value) -> Result<$value, $crate::ModelError> {
                $combine
            }
            fn name(&self) -> &'static str {
                $name
            }
            fn is_commutative(&self) -> bool {
                $commutative
            }
        }
    };
    // Without generics: the same with an empty list.
    ($op:ty => $($parts:tt)*) => {
        impl_operator!([] $op => $($parts)*);
    };
}
