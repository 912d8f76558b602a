//! kube's CertificateSigningRequest strategy on create: the request names who made it
//! (their name, uid, groups and extra attributes, whatever the client wrote there), and
//! starts with no status, so that nobody creates a request already approved.

use crate::api::certificates::v1::{
    CertificateSigningRequest, CertificateSigningRequestStatus, ExtraValue,
};

impl kapi::Strategy for CertificateSigningRequest {
    fn prepare_for_create_by(&mut self, user: Option<&kapi::user::UserInfo>) {
        let spec = &mut self.spec;
        let user = user.cloned().unwrap_or_default();
        spec.username = user.name;
        spec.uid = user.uid;
        spec.groups = user.groups;
        spec.extra = (user.extra.into_iter())
            .map(|(key, values)| (key, ExtraValue(values)))
            .collect();
        self.status = CertificateSigningRequestStatus::default();
    }

    fn allow_unconditional_update() -> bool {
        true
    }

    fn subresource_metadata(subresource: &str) -> &'static [&'static str] {
        match subresource {
            "status" | "approval" => kapi::api::STATUS_METADATA,
            _ => &[],
        }
    }
}
