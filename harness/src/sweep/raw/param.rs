//! Scalar parameters of a contract: values a case gives its kernel by value
//! (histogram bins and range, softmax rows and columns, the segment count, a float64
//! histogram's range as doubles),
//! beside `n`. A kernel argument names them; `index.json` lists them.

use super::Dtype;

/// A scalar parameter of a contract: its name (a kernel argument names it) and type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Param {
    /// Name: `bins`, `rows`, ...
    pub name: &'static str,
    /// Its type: int32 (`int`), int64 (`long long`), float32 (`float`) or float64 (`double`).
    pub dtype: Dtype,
}

/// The value of one parameter in one case.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    /// An `int`.
    Int32(i32),
    /// A `long long`.
    Int64(i64),
    /// A `float`.
    Float32(f32),
    /// A `double`.
    Float64(f64),
}

impl Value {
    /// Its type.
    pub fn dtype(self) -> Dtype {
        match self {
            Value::Int32(_) => Dtype::Int32,
            Value::Int64(_) => Dtype::Int64,
            Value::Float32(_) => Dtype::Float32,
            Value::Float64(_) => Dtype::Float64,
        }
    }

    /// The value as a JSON number (a float32 widens exactly to a JSON double; a float64 is one,
    /// written so that it reads back to the same bits).
    pub fn to_json(self) -> serde_json::Value {
        match self {
            Value::Int32(v) => v.into(),
            Value::Int64(v) => v.into(),
            Value::Float32(v) => f64::from(v).into(),
            Value::Float64(v) => v.into(),
        }
    }

    /// The value of type `dtype` in `json`, or why it is not one.
    pub fn from_json(dtype: Dtype, json: &serde_json::Value) -> Result<Value, String> {
        let wrong = || format!("{json} is not a {} value", dtype.name());
        match dtype {
            Dtype::Int32 => json.as_i64().and_then(|v| i32::try_from(v).ok()).map(Value::Int32).ok_or_else(wrong),
            Dtype::Int64 => json.as_i64().map(Value::Int64).ok_or_else(wrong),
            // Every f32 is a double; a double that is no f32 is refused, not rounded.
            Dtype::Float32 => {
                json.as_f64().filter(|v| f64::from(*v as f32) == *v).map(|v| Value::Float32(v as f32)).ok_or_else(wrong)
            }
            Dtype::Float64 => json.as_f64().map(Value::Float64).ok_or_else(wrong),
            _ => Err(format!("a parameter cannot be {}", dtype.name())),
        }
    }

    /// The value as an integer (None for a float).
    pub fn as_int(self) -> Option<i64> {
        match self {
            Value::Int32(v) => Some(v.into()),
            Value::Int64(v) => Some(v),
            Value::Float32(_) | Value::Float64(_) => None,
        }
    }
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Int32(v) => write!(f, "{v}"),
            Value::Int64(v) => write!(f, "{v}"),
            Value::Float32(v) => write!(f, "{v:e}"),
            Value::Float64(v) => write!(f, "{v:e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip_through_json_and_a_double_that_is_no_f32_is_refused() {
        let values =
            [Value::Int32(-9), Value::Int64(1 << 40), Value::Float32(-0.5), Value::Float32(0.1), Value::Float64(0.1)];
        for v in values {
            assert_eq!(Value::from_json(v.dtype(), &v.to_json()), Ok(v));
        }
        assert!(Value::from_json(Dtype::Float32, &serde_json::json!(0.1f64)).is_err());
        // A double's shortest text reads back to its bits.
        let third = Value::Float64(1.0 / 3.0);
        let text = serde_json::to_string(&third.to_json()).expect("serialises");
        assert_eq!(Value::from_json(Dtype::Float64, &serde_json::from_str(&text).expect("parses")), Ok(third));
        assert!(Value::from_json(Dtype::Int32, &serde_json::json!(1i64 << 40)).is_err());
        assert!(Value::from_json(Dtype::Int32, &serde_json::json!("3")).is_err());
    }
}
