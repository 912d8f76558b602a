//! kapi's CEL engine: Kubernetes' validation rules (`x-kubernetes-validations` in
//! CustomResourceDefinitions, later the derives' rules and admission policies) evaluated as
//! kube-apiserver evaluates them.
//!
//! Built in parts. This first part is [`escape`]: how a schema's property names become CEL
//! identifiers (`self.spec.__dash__name`), kube's `Escape` and `Unescape`.

pub mod escape;
