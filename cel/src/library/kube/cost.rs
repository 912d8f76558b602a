//! The runtime costs kube's cost estimator (`library.CostEstimator.CallCost`) gives calls,
//! by function name, ahead of cel-go's own: a call it names costs what it says.

use super::cidr::CidrValue;
use super::format::NamedFormat;
use super::ip::IpValue;
use crate::value::Value;

/// A tenth of a size, rounded up (cel-go's string traversal factor).
fn tenth(size: u64) -> u64 {
    (size as f64 * 0.1).ceil() as u64
}

/// kube's `traversalCost`: a tenth of each string's and bytes' length (rounded down),
/// summed over lists and maps; 1 for other values.
pub fn traversal(v: &Value) -> u64 {
    match v {
        Value::String(s) => (s.len() as f64 * 0.1) as u64,
        Value::Bytes(b) => (b.len() as f64 * 0.1) as u64,
        Value::List(l) => l.items.iter().map(traversal).sum(),
        Value::Map(m) => (m.entries.iter())
            .map(|(k, v)| traversal(&k.to_value()) + traversal(v))
            .sum(),
        _ => 1,
    }
}

/// What kube's costs count of a value: an IP address's length in bytes, a CIDR's prefix
/// length in bytes (rounded up), else [`Value::size`].
fn actual_size(v: &Value) -> u64 {
    if let Some(ip) = v.downcast::<IpValue>() {
        ip.size()
    } else if let Some(cidr) = v.downcast::<CidrValue>() {
        cidr.size()
    } else {
        v.size()
    }
}

/// The cost kube gives a call of `function` (overload `overload`), if it gives one.
pub fn call_cost(function: &str, overload: &str, args: &[Value], result: &Value) -> Option<u64> {
    let size = |i: usize| args.get(i).map_or(0, actual_size);
    Some(match function {
        "isSorted" | "sum" | "max" | "min" | "indexOf" | "lastIndexOf" => {
            args.first().map_or(0, traversal)
        }
        "url" | "lowerAscii" | "upperAscii" | "substring" | "trim" if !args.is_empty() => {
            tenth(size(0))
        }
        "replace" | "split" if !args.is_empty() => (size(0) as f64 * 2.0 * 0.1).ceil() as u64,
        "join" if !args.is_empty() => (result.size() as f64 * 2.0 * 0.1).ceil() as u64,
        "find" | "findAll" if args.len() >= 2 => {
            let string = ((1.0 + size(0) as f64) * 0.1).ceil() as u64;
            string * (size(1) as f64 * 0.25).ceil() as u64
        }
        "cidr" | "isIP" | "isCIDR" | "quantity" | "isQuantity" if !args.is_empty() => {
            tenth(size(0))
        }
        "ip" if !args.is_empty() => match overload {
            "cidr_ip" => 1,
            _ => tenth(size(0)),
        },
        "ip.isCanonical" if !args.is_empty() => (size(0) as f64 * 2.0 * 0.1).ceil() as u64,
        "masked"
        | "prefixLength"
        | "family"
        | "isUnspecified"
        | "isLoopback"
        | "isLinkLocalMulticast"
        | "isLinkLocalUnicast"
        | "isGlobalUnicast" => 1,
        "containsIP" if args.len() >= 2 => {
            let mut cost = tenth(size(0) * 2);
            if overload == "cidr_contains_ip_string" {
                cost += tenth(size(1));
            }
            cost
        }
        "containsCIDR" if args.len() >= 2 => {
            let mut cost = tenth(size(0) * 2) + tenth(size(0)) + 1;
            if overload == "cidr_contains_cidr_string" {
                cost += tenth(size(1));
            }
            cost
        }
        "validate" if args.len() >= 2 => match args[0].downcast::<NamedFormat>() {
            Some(format) => {
                let string = ((1.0 + size(1) as f64) * 0.1).ceil() as u64;
                string * (format.max_regex_size as f64 * 0.25).ceil() as u64
            }
            None => return None,
        },
        "format.named" | "sign" | "asInteger" | "isInteger" | "asApproximateFloat"
        | "isGreaterThan" | "isLessThan" | "compareTo" | "add" | "sub" | "getScheme"
        | "getHostname" | "getHost" | "getPort" | "getEscapedPath" | "getQuery" => 1,
        "_==_" if matches!(args.first(), Some(Value::Opaque(_))) => 1,
        _ => return None,
    })
}
