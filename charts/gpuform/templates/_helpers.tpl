{{/*
gpuform.image: the image reference, by digest when one is given.
*/}}
{{- define "gpuform.image" -}}
{{- $tag := .Values.image.tag | default .Chart.AppVersion -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ $tag }}
{{- end -}}
{{- end -}}

{{/*
gpuform.labels: the labels every object carries. Never gpuform.dev/stack:
gpuform does not own these objects, and must not prune them.
*/}}
{{- define "gpuform.labels" -}}
app.kubernetes.io/part-of: gpuform
app.kubernetes.io/instance: {{ .Release.Name }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}
