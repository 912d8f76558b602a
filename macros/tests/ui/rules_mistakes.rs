use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[kapi::rules]
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[rule("self.minReplicas <= self.maxReplica", message = "min exceeds max")]
#[rule("self.minReplicas <=", message = "does not parse")]
#[rule("self.minReplicas > 0", message = "")]
#[rule("self.minReplicas > 0", message = "two\nlines")]
#[rule("self.minReplicas > 0", reason = "FieldValueWrong")]
#[rule("self.minReplicas > 0", field_path = ".minimum")]
#[rule("self.minReplicas > 0", field_path = "minReplicas")]
#[rule("self.minReplicas > 0", optional_old_self)]
#[rule("self.minReplicas > 0", message_expression = "'x' +")]
#[rule("self.minReplicas > 0", mesage = "typo")]
#[rule(message = "no rule")]
#[rule("")]
#[rule("self.minReplicas > 0", "second")]
#[rule(7)]
pub struct Scaling {
    pub min_replicas: i32,
    pub max_replicas: i32,
    #[rule("self.size() >", message = "field rule that does not parse")]
    pub name: String,
}

#[kapi::rules]
#[derive(Serialize, Deserialize)]
#[rule("self.x > 0")]
pub struct NoSchema {
    pub x: i32,
}

#[kapi::rules(strict)]
#[derive(Serialize, Deserialize, JsonSchema)]
pub struct WithArguments {
    pub x: i32,
}

fn main() {}
