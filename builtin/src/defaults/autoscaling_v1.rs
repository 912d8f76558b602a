//! `autoscaling/v1`: an autoscaler keeps at least one replica (its CPU target is v2's
//! default metric, made by the conversion).

use super::or;
use crate::api::autoscaling::v1::HorizontalPodAutoscaler;

pub(crate) fn horizontal_pod_autoscaler(autoscaler: &mut HorizontalPodAutoscaler) {
    or(&mut autoscaler.spec.min_replicas, 1);
}
