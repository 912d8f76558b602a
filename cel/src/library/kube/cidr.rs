//! kube's CIDR library: `cidr()` and `isCIDR()` read a string as an IP prefix
//! (`net.CIDR`, the address kept as written), which tells whether it contains an address
//! (`containsIP()`) or another prefix (`containsCIDR()`), gives its `ip()`,
//! `prefixLength()` and `masked()` form, converts back with `string()` and compares with
//! `==` (address and length).

use std::any::Any;
use std::sync::Arc;

use kapi_core::net::cidr::{self, Cidr};

use super::{equal_as, ip, opaque};
use crate::library::{Env, Error, Overload as O, Result, no_such_overload, string};
use crate::ty::Type;
use crate::value::{Opaque, Value};

/// The CEL type name of CIDRs.
pub const TYPE: &str = "net.CIDR";

/// A `net.CIDR` value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CidrValue(pub Cidr);

impl CidrValue {
    /// What runtime costs count of it: its prefix length in bytes, rounded up (kube's
    /// `CIDR.Size`).
    pub fn size(&self) -> u64 {
        u64::from(self.0.prefix_len()).div_ceil(8)
    }
}

impl Opaque for CidrValue {
    fn type_name(&self) -> &'static str {
        TYPE
    }

    /// The same address (as written) and length.
    fn equals(&self, other: &dyn Opaque) -> bool {
        equal_as(self, other, |a, b| a == b)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A CIDR as a CEL value.
fn value(cidr: Cidr) -> Value {
    Value::Opaque(Arc::new(CidrValue(cidr)))
}

/// `args[i]`'s CIDR.
fn arg(args: &[Value], i: usize) -> Result<Cidr> {
    opaque::<CidrValue>(args, i).map(|v| v.0)
}

/// kube's `cidr()` of `args[i]`.
fn parse(args: &[Value], i: usize) -> Result<Cidr> {
    Cidr::parse(string(args, i)?).map_err(|e| Error::new(e.cel_message()))
}

/// Adds the CIDR library to `env`, with `net.CIDR` as a type name.
pub fn install(env: &mut Env) {
    env.variable(TYPE, Type::of_type(Type::opaque(TYPE)));
    env.add(
        "cidr",
        [O::new("string_to_cidr", "(string) -> net.CIDR", |a| {
            parse(a, 0).map(value)
        })],
    );
    env.add(
        "isCIDR",
        [O::new("is_cidr", "(string) -> bool", |a| {
            Ok(Value::Bool(cidr::is_cidr(string(a, 0)?)))
        })],
    );
    env.add(
        "string",
        [O::new("cidr_to_string", "(net.CIDR) -> string", |a| {
            Ok(Value::string(arg(a, 0)?.to_string()))
        })],
    );
    env.add(
        "containsIP",
        [
            O::new(
                "cidr_contains_ip_string",
                "net.CIDR.(string) -> bool",
                |a| {
                    // kube answers a string that is no address with "no such overload",
                    // not with the parse error.
                    let addr = ip::parse(a, 1).map_err(|_| no_such_overload())?;
                    Ok(Value::Bool(arg(a, 0)?.contains_ip(addr)))
                },
            ),
            O::new("cidr_contains_ip_ip", "net.CIDR.(net.IP) -> bool", |a| {
                Ok(Value::Bool(arg(a, 0)?.contains_ip(ip::arg(a, 1)?)))
            }),
        ],
    );
    env.add(
        "containsCIDR",
        [
            O::new(
                "cidr_contains_cidr_string",
                "net.CIDR.(string) -> bool",
                |a| contains_cidr(arg(a, 0)?, parse(a, 1)?),
            ),
            O::new("cidr_contains_cidr", "net.CIDR.(net.CIDR) -> bool", |a| {
                contains_cidr(arg(a, 0)?, arg(a, 1)?)
            }),
        ],
    );
    env.add(
        "ip",
        [O::new("cidr_ip", "net.CIDR.() -> net.IP", |a| {
            Ok(ip::value(arg(a, 0)?.addr()))
        })],
    );
    env.add(
        "prefixLength",
        [O::new("cidr_prefix_length", "net.CIDR.() -> int", |a| {
            Ok(Value::Int(arg(a, 0)?.prefix_len().into()))
        })],
    );
    env.add(
        "masked",
        [O::new("cidr_masked", "net.CIDR.() -> net.CIDR", |a| {
            Ok(value(arg(a, 0)?.masked()))
        })],
    );
}

/// `containsCIDR()` as Kubernetes 1.32.1 has it: true only when `other`'s address is this
/// CIDR's masked address (so `10.0.0.0/8` does not contain `10.1.0.0/16`) and `other` is
/// at least as long. Kubernetes 1.32.4 and 1.33 compare the leading bits instead
/// ([`Cidr::contains_cidr`]); kapi speaks 1.32.1.
fn contains_cidr(this: Cidr, other: Cidr) -> Result {
    Ok(Value::Bool(this.contains_cidr_v0_32_1(&other)))
}
