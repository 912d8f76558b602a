// A kind declared with `defaults` has every version's type default what it decodes: a
// version type without `kapi::defaults::Defaults` is an error at that type.
use kapi::Resource;
use kapi::meta::ObjectMeta;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

mod v1 {
    use super::*;

    #[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
    pub struct Gadget {
        pub metadata: ObjectMeta,
        pub size: Option<i32>,
    }

    impl kapi::Convert<super::Gadget> for Gadget {
        fn into_hub(self, hub: &mut super::Gadget) {
            hub.metadata = self.metadata;
            hub.size = self.size;
        }

        fn from_hub(hub: &super::Gadget) -> Self {
            Gadget {
                metadata: hub.metadata.clone(),
                size: hub.size,
            }
        }
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema, Resource)]
#[resource(
    group = "gadgets.example.dev",
    defaults,
    version(name = "v2", storage),
    version(name = "v1", ty = v1::Gadget)
)]
pub struct Gadget {
    pub metadata: ObjectMeta,
    pub size: Option<i32>,
}

/// The hub sets its defaults; v1 forgot to.
impl kapi::defaults::Defaults for Gadget {
    fn set_defaults(&mut self) {
        self.size.get_or_insert(1);
    }
}

fn main() {}
