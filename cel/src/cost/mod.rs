//! The static cost estimate of a checked expression, as kube 1.32 computes it when a
//! CustomResourceDefinition is written: cel-go v0.22's estimator (`checker.Cost`) with
//! kube's options (a presence test `has()` costs nothing; the sets extension's own
//! estimates) and kube's estimator for its libraries and for the sizes of the schema's
//! values.
//!
//! Every node costs a range, `[min, max]`: a variable or field 1, a constant 0, a list
//! literal 10, a map literal 30, a call 1 unless its function traverses a string or a list
//! (then a tenth of the length, or the length), a loop its range's size times what one
//! iteration costs. Sizes that the expression does not show (the length of `self.name`,
//! the items of `self.items`) come from the schema ([`DeclType::max_elements`]: its
//! `maxLength`, `maxItems`, `maxProperties`, or what fits in a request), looked up by the
//! path from `self` through fields, `@items`, `@keys` and `@values` exactly as kube looks
//! them up. Sums and products saturate at `u64::MAX`, as cel-go's do.
//!
//! The estimate follows cel-go's static model, not [`crate::interpreter`]'s count: as in
//! kube, they differ in places (a runtime select of a field costs more than the estimate
//! says; constant lists cost nothing at run time), and what matters is kube's numbers.
//!
//! [`limits`] holds what kube does with the estimates when a definition is validated:
//! each rule's cost times how many times its node can occur
//! ([`max_cardinality`]), against a limit per expression and a limit for the whole schema.

mod estimator;
mod functions;
pub mod limits;
#[cfg(test)]
mod tests;

use crate::checker::Checked;
use crate::types::{DeclType, MAX_REQUEST_SIZE_BYTES};

pub use limits::{
    CostError, CostLimits, STATIC_ESTIMATED_COST_LIMIT, STATIC_ESTIMATED_CRD_COST_LIMIT,
    cost_error_message,
};

/// A range of costs, in cel-go's cost units.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CostEstimate {
    /// The least it can cost.
    pub min: u64,
    /// The most it can cost.
    pub max: u64,
}

/// A range of sizes (a string's length, a list's items, a map's entries).
pub(crate) type Size = CostEstimate;

impl CostEstimate {
    /// `[min, max]`.
    pub const fn new(min: u64, max: u64) -> CostEstimate {
        CostEstimate { min, max }
    }

    /// Exactly `n`.
    pub(crate) const fn exactly(n: u64) -> CostEstimate {
        CostEstimate { min: n, max: n }
    }

    /// Anything from 0 to `u64::MAX`: a size nothing bounds.
    pub(crate) const UNKNOWN: CostEstimate = CostEstimate::new(0, u64::MAX);

    /// The sum, bound by bound, saturating.
    pub(crate) fn add(self, other: CostEstimate) -> CostEstimate {
        CostEstimate::new(
            self.min.saturating_add(other.min),
            self.max.saturating_add(other.max),
        )
    }

    /// The product, bound by bound, saturating.
    pub(crate) fn multiply(self, other: CostEstimate) -> CostEstimate {
        CostEstimate::new(
            self.min.saturating_mul(other.min),
            self.max.saturating_mul(other.max),
        )
    }

    /// Each bound times `factor`, rounded up (cel-go's `MultiplyByCostFactor`).
    pub(crate) fn times(self, factor: f64) -> CostEstimate {
        CostEstimate::new(times(self.min, factor), times(self.max, factor))
    }

    /// The range covering both.
    pub(crate) fn union(self, other: CostEstimate) -> CostEstimate {
        CostEstimate::new(self.min.min(other.min), self.max.max(other.max))
    }
}

/// `x * factor` rounded up, `u64::MAX` when it does not fit (cel-go's
/// `multiplyByCostFactor`).
fn times(x: u64, factor: f64) -> u64 {
    let x = x as f64;
    if x > 0.0 && factor > 0.0 && x > u64::MAX as f64 / factor {
        return u64::MAX;
    }
    let product = (x * factor).ceil();
    if product >= TWO_TO_64 {
        return u64::MAX;
    }
    product as u64
}

/// 2^64 as a float.
const TWO_TO_64: f64 = 18_446_744_073_709_551_616.0;

/// A float converted to `u64` as Go converts one on amd64: 2^63 for values past the range
/// (Rust would saturate).
pub(crate) fn go_u64(f: f64) -> u64 {
    if f >= TWO_TO_64 { 1 << 63 } else { f as u64 }
}

/// The estimated cost of `checked`, whose `self` (and `oldSelf`) is of type `self_type`
/// (the schema node's [`DeclType`], as [`DeclType::of_schema`] gives it; `None` when the
/// node has no CEL type, so that no size is known).
///
/// kube keeps the `max` (`CompilationResult.MaxCost`) and checks it against its limits;
/// see [`limits`].
pub fn estimate(checked: &Checked, self_type: Option<&DeclType>) -> CostEstimate {
    estimator::Estimator::new(checked, estimator::Sizes::Schema(self_type)).run()
}

/// The most times data whose JSON takes at least `min_serialized_size` bytes can occur in
/// one request (kube's `maxCardinality`): how often a rule of a node under unbounded lists
/// or maps may run, each occurrence separated from the next by at least a comma.
pub fn max_cardinality(min_serialized_size: i64) -> u64 {
    let size = min_serialized_size.saturating_add(1);
    if size <= 0 {
        return u64::MAX;
    }
    (MAX_REQUEST_SIZE_BYTES / size) as u64
}

#[cfg(test)]
mod arithmetic_tests {
    use super::*;

    #[test]
    fn arithmetic_saturates_like_cel_go() {
        let big = CostEstimate::new(u64::MAX - 1, u64::MAX);
        assert_eq!(big.add(CostEstimate::exactly(5)).max, u64::MAX);
        assert_eq!(big.multiply(CostEstimate::exactly(2)).min, u64::MAX);
        assert_eq!(
            CostEstimate::exactly(7).times(0.1),
            CostEstimate::exactly(1)
        );
        assert_eq!(
            CostEstimate::exactly(0).times(0.1),
            CostEstimate::exactly(0)
        );
        assert_eq!(
            CostEstimate::UNKNOWN.times(0.1).max,
            1_844_674_407_370_955_264
        );
        assert_eq!(CostEstimate::UNKNOWN.times(1.0).max, u64::MAX);
        assert_eq!(go_u64(TWO_TO_64), 1 << 63);
    }

    #[test]
    fn cardinality_is_kubes() {
        assert_eq!(max_cardinality(2), 1_048_576);
        assert_eq!(max_cardinality(1), 1_572_864);
    }
}
