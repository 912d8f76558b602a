use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

// `#[rule]` needs `#[kapi::rules]` above the derives.
#[derive(Serialize, Deserialize, JsonSchema)]
#[rule("self.x > 0")]
pub struct Forgotten {
    pub x: i32,
}

// Below the derives, the attribute comes too late for them.
#[derive(Serialize, Deserialize, JsonSchema)]
#[kapi::rules]
#[rule("self.x > 0")]
pub struct TooLate {
    pub x: i32,
}

fn main() {}
