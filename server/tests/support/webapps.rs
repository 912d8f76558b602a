//! WebApps as a compiled kind and as a kind a CustomResourceDefinition defines: the
//! suites whose scenarios run unchanged on both (`on_both_kinds!`).

use serde_json::json;

use super::Server;

/// The WebApps a scenario runs on: the compiled kind, or the same kind (its published v1
/// schema) defined by a CustomResourceDefinition in another group, served through the
/// runtime's path for installed kinds.
#[derive(Clone, Copy, Debug)]
pub(crate) enum WebApps {
    Compiled,
    Defined,
}

impl WebApps {
    /// The group they are served in.
    pub(crate) fn group(self) -> &'static str {
        match self {
            WebApps::Compiled => "apps.example.dev",
            WebApps::Defined => "defined.example.dev",
        }
    }

    /// `<group>/v1`.
    pub(crate) fn api_version(self) -> String {
        format!("{}/v1", self.group())
    }

    /// The resource as kubectl names it unambiguously: `webapps.<group>`.
    pub(crate) fn resource(self) -> String {
        format!("webapps.{}", self.group())
    }

    /// The path of the WebApps of namespace `default`.
    pub(crate) fn collection(self) -> String {
        self.collection_in("default")
    }

    /// The path of the WebApps of `namespace`.
    pub(crate) fn collection_in(self, namespace: &str) -> String {
        format!("/apis/{}/v1/namespaces/{namespace}/webapps", self.group())
    }

    /// A server serving these WebApps.
    pub(crate) fn start(self) -> Server {
        self.serve(Server::start())
    }

    /// `server`, serving these WebApps once it returns (defining them when
    /// [`WebApps::Defined`]).
    pub(crate) fn serve(self, server: Server) -> Server {
        if let WebApps::Defined = self {
            let client = server.client();
            let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
            let mut crd = super::webapp_crd::webapp_crd(&root);
            crd["metadata"]["name"] = json!(format!("webapps.{}", self.group()));
            crd["spec"]["group"] = json!(self.group());
            // What the compiled kind declares beside its schema.
            crd["spec"]["names"]["categories"] = json!(["all"]);
            let version = &mut crd["spec"]["versions"][0];
            version["selectableFields"] = json!([{"jsonPath": ".spec.container.image"}]);
            version["additionalPrinterColumns"] = json!([
                {"name": "Image", "type": "string", "jsonPath": ".spec.container.image"},
                {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
                {"name": "Ready", "type": "integer", "jsonPath": ".status.readyReplicas"},
                {"name": "Paused", "type": "boolean", "jsonPath": ".spec.paused", "priority": 1},
                {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
            ]);
            let created = client
                .post(
                    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                    &crd,
                )
                .expect("a response");
            assert_eq!(created.status, 201, "{}", created.body);
            super::wait_for(
                std::time::Duration::from_secs(10),
                "the WebApp definition to be served",
                String::new,
                || (client.get(&self.collection()).ok()?.status == 200).then_some(()),
            );
            // And the group's APIService, which the aggregator writes once the group is
            // served: nothing the definition causes is written after this returns.
            let api_service = format!(
                "/apis/apiregistration.k8s.io/v1/apiservices/v1.{}",
                self.group()
            );
            super::wait_for(
                std::time::Duration::from_secs(10),
                "the WebApp group's APIService",
                String::new,
                || (client.get(&api_service).ok()?.status == 200).then_some(()),
            );
        }
        server
    }
}

/// `on_both_kinds! { scenario => scenario_compiled, scenario_defined; }` runs
/// `scenario(WebApps::Compiled)` and `scenario(WebApps::Defined)` as two tests.
#[allow(unused_macros)]
macro_rules! on_both_kinds {
    ($($scenario:ident => $compiled:ident, $defined:ident;)*) => {$(
        #[test]
        fn $compiled() {
            $scenario($crate::support::webapps::WebApps::Compiled);
        }

        #[test]
        fn $defined() {
            $scenario($crate::support::webapps::WebApps::Defined);
        }
    )*};
}
#[allow(unused_imports)]
pub(crate) use on_both_kinds;
