//! `discovery.k8s.io/v1`: an endpoint slice's ports are unnamed TCP ports unless said.

use super::or;
use crate::api::discovery::v1::EndpointPort;

pub(crate) fn endpoint_port(port: &mut EndpointPort) {
    or(&mut port.name, String::new());
    or(&mut port.protocol, "TCP".to_owned());
}
