"""A service account's token, as a workload outside the cluster uses one: the official
Python client loads a kubeconfig (second argument) naming the server, its CA and the
token, asks who it is (a SelfSubjectReview), and lists Pods, which RBAC refuses it."""

import sys

import kubernetes
from kubernetes.client.rest import ApiException

from kapi import emit

kubernetes.config.load_kube_config(config_file=sys.argv[2])
review = kubernetes.client.AuthenticationV1Api().create_self_subject_review(
    body=kubernetes.client.V1SelfSubjectReview()
)
user = review.status.user_info
emit(username=user.username, groups=user.groups)

try:
    kubernetes.client.CoreV1Api().list_namespaced_pod("default")
    raise SystemExit("the service account listed pods without a binding")
except ApiException as error:
    emit(list_pods=error.status)
