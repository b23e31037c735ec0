{{/* The labels every object carries: manifests/base's two, and Helm's. */}}
{{- define "sidecarset.labels" -}}
app.kubernetes.io/name: sidecarset
app.kubernetes.io/part-of: sidecarset
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* The webhook pods' selector, as in manifests/base (a selector cannot change after install). */}}
{{- define "sidecarset.selector" -}}
app.kubernetes.io/name: sidecarset
app.kubernetes.io/component: webhook
{{- end -}}

{{- define "sidecarset.namespace" -}}
{{ .Values.installation.namespace }}
{{- end -}}

{{/* clientConfig of one webhook: a Service (the third argument, default sidecarset-webhook), or
webhook.url for a webhook outside the cluster. */}}
{{- define "sidecarset.clientConfig" -}}
{{- $root := index . 0 -}}
{{- $path := index . 1 -}}
{{- $service := "sidecarset-webhook" -}}
{{- if gt (len .) 2 }}{{ $service = index . 2 }}{{ end -}}
{{- if $root.Values.webhook.url }}
url: {{ printf "%s%s" (trimSuffix "/" $root.Values.webhook.url) $path }}
{{- else }}
service:
  name: {{ $service }}
  namespace: {{ include "sidecarset.namespace" $root }}
  path: {{ $path }}
  port: 443
{{- end }}
{{- if and (eq $root.Values.certificates.source "secret") $root.Values.certificates.caBundle }}
caBundle: {{ $root.Values.certificates.caBundle }}
{{- end }}
{{- end -}}

{{/* cert-manager's CA injector fills the caBundle from the serving Certificate. */}}
{{- define "sidecarset.webhookAnnotations" -}}
{{- if eq .Values.certificates.source "certManager" }}
annotations:
  cert-manager.io/inject-ca-from: {{ include "sidecarset.namespace" . }}/sidecarset-webhook-tls
{{- end }}
{{- end -}}

{{/* The webhook's image; the helm test Pod runs `sidecarset check` from it too. */}}
{{- define "sidecarset.image" -}}
{{ printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end -}}
