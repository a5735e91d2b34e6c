"""Kubernetes' built-in kinds: their records, schemas (from the official client's models),
kube-apiserver's defaults and validation rules, strategic-merge keys, and the events.k8s.io view."""
