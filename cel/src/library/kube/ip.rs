//! kube's IP library: `ip()`, `isIP()` and `ip.isCanonical()` read a string as an IP
//! address (`net.IP`: IPv4 or IPv6, without a zone, not IPv4-mapped), which tells its
//! `family()` and kind (`isUnspecified()`, `isLoopback()`, `isLinkLocalMulticast()`,
//! `isLinkLocalUnicast()`, `isGlobalUnicast()`), converts back with `string()` and
//! compares with `==`.

use std::any::Any;
use std::net::IpAddr;
use std::sync::Arc;

use kapi_core::net::ip;

use super::{equal_as, opaque};
use crate::library::{Env, Error, Implementation, Overload as O, Result, string};
use crate::ty::Type;
use crate::value::{Opaque, Value};

/// The CEL type name of IP addresses.
pub const TYPE: &str = "net.IP";

/// A `net.IP` value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IpValue(pub IpAddr);

impl IpValue {
    /// What runtime costs count of it: its length in bytes (4 or 16).
    pub fn size(&self) -> u64 {
        match self.0 {
            IpAddr::V4(_) => 4,
            IpAddr::V6(_) => 16,
        }
    }
}

impl Opaque for IpValue {
    fn type_name(&self) -> &'static str {
        TYPE
    }

    /// The same address.
    fn equals(&self, other: &dyn Opaque) -> bool {
        equal_as(self, other, |a, b| a == b)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// An address as a CEL value.
pub(super) fn value(addr: IpAddr) -> Value {
    Value::Opaque(Arc::new(IpValue(addr)))
}

/// `args[i]`'s address.
pub(super) fn arg(args: &[Value], i: usize) -> Result<IpAddr> {
    opaque::<IpValue>(args, i).map(|v| v.0)
}

/// kube's `ip()` of `args[i]`.
pub(super) fn parse(args: &[Value], i: usize) -> Result<IpAddr> {
    ip::parse(string(args, i)?).map_err(|e| Error::new(e.cel_message()))
}

/// Adds the IP library to `env`, with `net.IP` as a type name.
pub fn install(env: &mut Env) {
    env.variable(TYPE, Type::of_type(Type::opaque(TYPE)));
    env.add(
        "ip",
        [O::new("string_to_ip", "(string) -> net.IP", |a| {
            parse(a, 0).map(value)
        })],
    );
    env.add(
        "ip.isCanonical",
        [O::new("ip_is_canonical", "(string) -> bool", |a| {
            ip::is_canonical(string(a, 0)?)
                .map(Value::Bool)
                .map_err(|e| Error::new(e.cel_message()))
        })],
    );
    env.add(
        "isIP",
        [O::new("is_ip", "(string) -> bool", |a| {
            Ok(Value::Bool(ip::is_ip(string(a, 0)?)))
        })],
    );
    env.add(
        "string",
        [O::new("ip_to_string", "(net.IP) -> string", |a| {
            Ok(Value::string(ip::format(arg(a, 0)?)))
        })],
    );
    env.add(
        "family",
        [O::new("ip_family", "net.IP.() -> int", |a| {
            Ok(Value::Int(ip::family(arg(a, 0)?).into()))
        })],
    );
    let tests: [(&str, &'static str, Implementation); 5] = [
        ("isUnspecified", "ip_is_unspecified", |a| {
            Ok(Value::Bool(ip::is_unspecified(arg(a, 0)?)))
        }),
        ("isLoopback", "ip_is_loopback", |a| {
            Ok(Value::Bool(ip::is_loopback(arg(a, 0)?)))
        }),
        ("isLinkLocalMulticast", "ip_is_link_local_multicast", |a| {
            Ok(Value::Bool(ip::is_link_local_multicast(arg(a, 0)?)))
        }),
        ("isLinkLocalUnicast", "ip_is_link_local_unicast", |a| {
            Ok(Value::Bool(ip::is_link_local_unicast(arg(a, 0)?)))
        }),
        ("isGlobalUnicast", "ip_is_global_unicast", |a| {
            Ok(Value::Bool(ip::is_global_unicast(arg(a, 0)?)))
        }),
    ];
    for (name, id, implementation) in tests {
        env.add(name, [O::new(id, "net.IP.() -> bool", implementation)]);
    }
}
