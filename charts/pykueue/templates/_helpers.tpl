{{/* The namespace pykueue runs in. */}}
{{- define "pykueue.namespace" -}}
{{- .Values.namespace | default .Release.Namespace -}}
{{- end -}}

{{/* Labels of the controller's pods: the selector of its Deployment and Services. */}}
{{- define "pykueue.selectorLabels" -}}
app.kubernetes.io/component: controller
app.kubernetes.io/name: pykueue
{{- end -}}

{{/* What cert-manager's CA injector reads (with certManager.enable). */}}
{{- define "pykueue.certManagerAnnotations" -}}
cert-manager.io/inject-ca-from: {{ include "pykueue.namespace" . }}/pykueue-serving-cert
{{- end -}}
