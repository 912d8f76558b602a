//! What a call costs: asked first of the sets extension (by overload), then of kube's
//! estimator for its libraries (by function name: `lowerAscii`, `isSorted`, `quantity`,
//! ...), then of cel-go's own estimates for the standard library (by overload: string
//! traversals, `matches`, `in`, `+`, comparisons); anything else costs 1. The arguments'
//! own costs are added to the call's; the receiver's is added by the caller.

use super::estimator::{Estimator, Node};
use super::{CostEstimate, Size, go_u64};
use crate::syntax::{ExprKind, Literal};
use crate::ty::Type;

/// cel-go's factor for traversing a string or bytes once.
const STRING_TRAVERSAL: f64 = 0.1;
/// cel-go's guess of a regular expression's cost per character of its pattern.
const REGEX_STRING_LENGTH: f64 = 0.25;
/// cel-go's cost of making a list.
const LIST_CREATE: f64 = 10.0;
/// cel-go's cost of making a message.
const STRUCT_CREATE: f64 = 40.0;
/// kube's longest format name (`MaxFormatSize`).
const MAX_FORMAT_SIZE: u64 = 64;
/// kube's guess of a named format's regular expression length (`MaxNameFormatRegexSize`).
const MAX_NAME_FORMAT_REGEX_SIZE: f64 = 128.0;

/// A call's cost, and the size of its result when the estimate knows it.
pub(super) struct CallEstimate {
    /// The cost, the arguments' included.
    pub(super) cost: CostEstimate,
    /// The result's size.
    pub(super) result_size: Option<Size>,
}

impl CallEstimate {
    fn cost(cost: CostEstimate) -> CallEstimate {
        CallEstimate {
            cost,
            result_size: None,
        }
    }

    fn sized(cost: CostEstimate, size: Size) -> CallEstimate {
        CallEstimate {
            cost,
            result_size: Some(size),
        }
    }
}

const ONE: CostEstimate = CostEstimate::exactly(1);

impl Estimator<'_> {
    /// The estimate of calling `function` by `overload` with `target` (a receiver) and
    /// `args`, whose own costs are `arg_costs`.
    pub(super) fn call_estimate(
        &self,
        function: &str,
        overload: &str,
        target: Option<&Node<'_>>,
        args: &[Node<'_>],
        arg_costs: &[CostEstimate],
    ) -> CallEstimate {
        let arg_sum = (arg_costs.iter()).fold(CostEstimate::default(), |sum, c| sum.add(*c));
        let library = self
            .sets_estimate(overload, args)
            .or_else(|| self.kube_estimate(function, overload, target, args));
        if let Some(estimate) = library {
            return CallEstimate {
                cost: estimate.cost.add(arg_sum),
                result_size: estimate.result_size,
            };
        }
        self.standard_estimate(overload, target, args, arg_costs, arg_sum)
    }

    /// The sets extension's estimates: the product of the two lists' sizes.
    fn sets_estimate(&self, overload: &str, args: &[Node<'_>]) -> Option<CallEstimate> {
        let factor = match overload {
            "list_sets_contains_list" | "list_sets_intersects_list" => 1.0,
            // Equivalence may compare both ways.
            "list_sets_equivalent_list" => 2.0,
            _ => return None,
        };
        let [a, b] = args else {
            return None;
        };
        let product = self.size_or_unknown(a).multiply(self.size_or_unknown(b));
        Some(CallEstimate::cost(product.times(factor).add(ONE)))
    }

    /// kube's estimator (`library.CostEstimator.EstimateCallCost`), by function name.
    fn kube_estimate(
        &self,
        function: &str,
        overload: &str,
        target: Option<&Node<'_>>,
        args: &[Node<'_>],
    ) -> Option<CallEstimate> {
        let size = |node: &Node<'_>| self.size_or_unknown(node);
        let first = || args.first().map(size);
        Some(match function {
            // Authorization checks cost a fixed amount, so that two fit in an expression.
            "check" => CallEstimate::cost(CostEstimate::exactly(350_000)),
            "serviceAccount" | "path" | "group" | "resource" | "subresource" | "namespace"
            | "name" | "allowed" | "reason" | "error" | "errored" => CallEstimate::cost(ONE),
            "fieldSelector" | "labelSelector" if args.len() == 1 => {
                CallEstimate::cost(selector_cost(size(&args[0])))
            }
            "isSorted" | "sum" | "max" | "min" | "indexOf" | "lastIndexOf" => {
                let target = target?;
                let cost = match self.element_node(target) {
                    Some(element) => {
                        let mut per_element = ONE;
                        if matches!(element.ty, Type::String | Type::Bytes) {
                            per_element = per_element.add(size(&element).times(STRING_TRAVERSAL));
                        }
                        size(target).multiply(per_element)
                    }
                    // A string's `indexOf`.
                    None => size(target).times(STRING_TRAVERSAL),
                };
                CallEstimate::cost(cost)
            }
            "url" | "jsonpatch.escapeKey" if args.len() == 1 => {
                let sz = size(&args[0]);
                CallEstimate::sized(sz.times(STRING_TRAVERSAL), sz)
            }
            "lowerAscii" | "upperAscii" | "substring" | "trim" => {
                let sz = size(target?);
                CallEstimate::sized(sz.times(STRING_TRAVERSAL), sz)
            }
            "replace" if args.len() >= 2 => {
                let sz = size(target?);
                let result = replaced_size(sz, size(&args[0]), size(&args[1]));
                CallEstimate::sized(sz.times(2.0 * STRING_TRAVERSAL), result)
            }
            "split" => {
                let sz = size(target?);
                let mut max = sz.max;
                if let Some(limit) = args.get(1)
                    && let Some(e) = limit.expr
                    && let ExprKind::Literal(Literal::Int(n)) = e.kind
                {
                    max = n as u64;
                }
                CallEstimate::sized(sz.times(2.0 * STRING_TRAVERSAL), Size::new(0, max))
            }
            "join" => {
                let target = target?;
                let list = size(target);
                let mut sz = match self.element_node(target) {
                    Some(element) => list.multiply(size(&element)),
                    None => Size::default(),
                };
                if let Some(separator) = args.first() {
                    let separators =
                        Size::new(list.min.saturating_sub(1), list.max.saturating_sub(1));
                    sz = sz.add(size(separator).multiply(separators));
                }
                CallEstimate::sized(sz.times(STRING_TRAVERSAL), sz)
            }
            "find" | "findAll" if !args.is_empty() => {
                let sz = size(target?);
                let string = sz.add(ONE).times(STRING_TRAVERSAL);
                let regex = size(&args[0]).times(REGEX_STRING_LENGTH);
                CallEstimate::sized(string.multiply(regex), Size::new(0, sz.max))
            }
            "cidr" | "isIP" | "isCIDR" | "quantity" | "isQuantity" => {
                CallEstimate::cost(first()?.times(STRING_TRAVERSAL))
            }
            "ip" if !args.is_empty() && overload != "cidr_ip" => {
                CallEstimate::cost(size(&args[0]).times(STRING_TRAVERSAL))
            }
            // The address of a CIDR: a field.
            "ip" => CallEstimate::cost(ONE),
            "ip.isCanonical" => CallEstimate::cost(first()?.times(2.0 * STRING_TRAVERSAL)),
            "masked"
            | "prefixLength"
            | "family"
            | "isUnspecified"
            | "isLoopback"
            | "isLinkLocalMulticast"
            | "isLinkLocalUnicast"
            | "isGlobalUnicast" => CallEstimate::cost(ONE),
            "containsIP" | "containsCIDR" if !args.is_empty() => {
                // Comparing two addresses of 4 or 16 bytes.
                let address = Size::new(4, 16);
                let mut cost = address.add(address).times(STRING_TRAVERSAL);
                if function == "containsCIDR" {
                    // Masking the base CIDR and comparing the prefix bits.
                    cost = cost.add(address.times(STRING_TRAVERSAL)).add(ONE);
                }
                if matches!(
                    overload,
                    "cidr_contains_ip_string" | "cidr_contains_cidr_string"
                ) {
                    cost = cost.add(size(&args[0]).times(STRING_TRAVERSAL));
                }
                CallEstimate::cost(cost)
            }
            "validate" => CallEstimate::cost(
                first()?
                    .times(STRING_TRAVERSAL)
                    .times(MAX_NAME_FORMAT_REGEX_SIZE * REGEX_STRING_LENGTH),
            ),
            "format.named" | "sign" | "asInteger" | "isInteger" | "asApproximateFloat"
            | "isGreaterThan" | "isLessThan" | "compareTo" | "add" | "sub" | "getScheme"
            | "getHostname" | "getHost" | "getPort" | "getEscapedPath" | "getQuery" => {
                CallEstimate::cost(ONE)
            }
            "_==_" if args.len() == 2 => return self.kube_equality(&args[0], &args[1]),
            _ => return None,
        })
    }

    /// kube's equality of its own types: constant for most, a format name's traversal,
    /// a URL's (as kube sizes it: the right operand's computed size, twice).
    fn kube_equality(&self, lhs: &Node<'_>, rhs: &Node<'_>) -> Option<CallEstimate> {
        if lhs.ty != rhs.ty {
            return None;
        }
        let Type::Opaque(name, _) = &lhs.ty else {
            return None;
        };
        let cost = match &**name {
            "net.IP"
            | "net.CIDR"
            | "kubernetes.Quantity"
            | "kubernetes.Semver"
            | "kubernetes.authorization.Authorizer"
            | "kubernetes.authorization.PathCheck"
            | "kubernetes.authorization.GroupCheck"
            | "kubernetes.authorization.ResourceCheck"
            | "kubernetes.authorization.Decision" => ONE,
            "kubernetes.NamedFormat" => {
                CostEstimate::new(1, MAX_FORMAT_SIZE).times(STRING_TRAVERSAL)
            }
            "kubernetes.URL" => {
                let max = rhs.computed_size().map_or(1, |size| size.max);
                CostEstimate::new(1, max).times(STRING_TRAVERSAL)
            }
            _ => return None,
        };
        Some(CallEstimate::cost(cost))
    }

    /// The element of a list (the key of a map) as a node of its own, with the path to
    /// it when the list has one (kube's `listElementNode`).
    fn element_node(&self, list: &Node<'_>) -> Option<Node<'static>> {
        let ty = list.first_parameter()?.clone();
        let path = match list.path.is_empty() {
            true => Vec::new(),
            false => {
                let mut path = list.path.clone();
                path.push("@items".to_owned());
                path
            }
        };
        Some(Node {
            path,
            ty,
            expr: None,
            derived: None,
        })
    }

    /// cel-go's estimates of its standard library, by overload; 1 for the rest.
    fn standard_estimate(
        &self,
        overload: &str,
        target: Option<&Node<'_>>,
        args: &[Node<'_>],
        arg_costs: &[CostEstimate],
        arg_sum: CostEstimate,
    ) -> CallEstimate {
        let size = |node: &Node<'_>| self.size(node);
        let traversal = |node: &Node<'_>| size(node).times(STRING_TRAVERSAL);
        match (overload, target, args) {
            ("string_format", Some(target), _) => {
                return CallEstimate::cost(traversal(target).add(arg_sum));
            }
            ("string_to_bytes", _, [arg]) => {
                // A character takes up to 4 bytes.
                let sz = size(arg);
                let result = Size::new(sz.min, sz.max.wrapping_mul(4));
                return CallEstimate::sized(traversal(arg).add(arg_sum), result);
            }
            ("bytes_to_string", _, [arg]) => {
                let sz = size(arg);
                let result = Size::new(sz.min / 4, sz.max);
                return CallEstimate::sized(traversal(arg).add(arg_sum), result);
            }
            ("strings_quote", _, [arg]) => {
                // Every character escaped, and two quotes.
                let sz = size(arg);
                let result = Size::new(
                    sz.min.wrapping_add(2),
                    sz.max.wrapping_mul(2).wrapping_add(2),
                );
                return CallEstimate::sized(traversal(arg).add(arg_sum), result);
            }
            ("starts_with_string" | "ends_with_string", _, [arg]) => {
                return CallEstimate::cost(traversal(arg).add(arg_sum));
            }
            ("in_list", _, [_, list]) => {
                return CallEstimate::cost(size(list).times(1.0).add(arg_sum));
            }
            ("matches_string", Some(target), [pattern]) => {
                // One more than the string's length: an empty string still runs the regex.
                let string = size(target).add(ONE).times(STRING_TRAVERSAL);
                let regex = size(pattern).times(REGEX_STRING_LENGTH);
                return CallEstimate::cost(string.multiply(regex).add(arg_sum));
            }
            ("contains_string", Some(target), [substring]) => {
                let cost = traversal(target).multiply(traversal(substring));
                return CallEstimate::cost(cost.add(arg_sum));
            }
            ("logical_or" | "logical_and", _, _) => {
                // Short-circuiting: at least the left operand.
                let (lhs, rhs) = (arg_costs[0], arg_costs[1]);
                return CallEstimate::cost(CostEstimate::new(lhs.min, lhs.add(rhs).max));
            }
            ("conditional", _, [_, if_true, if_false]) => {
                let result = size(if_true).union(size(if_false));
                let cost = arg_costs[0].add(arg_costs[1].union(arg_costs[2]));
                return CallEstimate::sized(cost, result);
            }
            ("add_string" | "add_bytes" | "add_list", _, [lhs, rhs]) => {
                let result = size(lhs).add(size(rhs));
                let cost = match overload {
                    // Concatenating lists is constant; only the size is tracked.
                    "add_list" => ONE,
                    _ => result.times(STRING_TRAVERSAL),
                };
                return CallEstimate::sized(cost.add(arg_sum), result);
            }
            (
                "less_string"
                | "greater_string"
                | "less_equals_string"
                | "greater_equals_string"
                | "less_bytes"
                | "greater_bytes"
                | "less_equals_bytes"
                | "greater_equals_bytes"
                | "equals"
                | "not_equals",
                _,
                [lhs, rhs, ..],
            ) => {
                // Comparing stops at the shorter operand; scalars cost 1.
                let smallest = size(lhs).max.min(size(rhs).max);
                let cost = CostEstimate::new(u64::from(smallest > 0), smallest);
                return CallEstimate::cost(cost.times(STRING_TRAVERSAL).add(arg_sum));
            }
            _ => {}
        }
        CallEstimate::cost(ONE.add(arg_sum))
    }
}

/// kube's cost of parsing a label or field selector of `length` characters: a list, a
/// traversal, and a requirement (a struct and a list) per two characters.
fn selector_cost(length: Size) -> CostEstimate {
    let parse = length.times(STRING_TRAVERSAL);
    let requirements = length.times(0.5).times(LIST_CREATE + STRUCT_CREATE);
    CostEstimate::exactly(LIST_CREATE as u64)
        .add(parse)
        .add(requirements)
}

/// The size of `replace`'s result on a string of size `string`, replacing strings of size
/// `from` by strings of size `to` (kube's estimate).
fn replaced_size(string: Size, from: Size, to: Size) -> Size {
    let (mut count, mut retained) = (Size::default(), Size::default());
    // The longest result.
    if from.min == 0 {
        // An empty string is replaced around every character.
        count.max = string.max.saturating_add(1);
        retained.max = string.max;
    } else if to.max <= from.min {
        retained.max = string.max;
    } else {
        count.max = go_u64((string.max as f64 / from.min as f64).ceil());
    }
    // The shortest result.
    if from.max == 0 {
        count.min = string.min.saturating_add(1);
        retained.min = string.min;
    } else if from.max <= to.min {
        retained.min = string.min;
    } else {
        count.min = go_u64((string.min as f64 / from.max as f64).ceil());
    }
    count.multiply(to).add(retained)
}
