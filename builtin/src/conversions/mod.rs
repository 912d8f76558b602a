//! Conversions between the versions of a built-in kind that its types cannot derive: kube
//! writes them by hand too (`pkg/apis/<group>/<version>/conversion.go`).

mod autoscaling;

pub(crate) use autoscaling::drop_round_trip_annotations;
