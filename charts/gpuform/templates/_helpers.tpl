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

{{/*
gpuform.agentImage: the agent's image. The agent needs a build with cgo on
a glibc base, which may be another image than the static CLI's:
agent.image.repository names it (with its own tag, default appVersion, and
digest); without it, image, with agent.image's tag or digest where set.
*/}}
{{- define "gpuform.agentImage" -}}
{{- $a := .Values.agent.image -}}
{{- $own := ne $a.repository "" -}}
{{- $repo := $a.repository | default .Values.image.repository -}}
{{- $digest := $a.digest | default (ternary "" .Values.image.digest $own) -}}
{{- $tag := $a.tag | default (ternary .Chart.AppVersion (.Values.image.tag | default .Chart.AppVersion) $own) -}}
{{- if $digest -}}
{{ $repo }}@{{ $digest }}
{{- else -}}
{{ $repo }}:{{ $tag }}
{{- end -}}
{{- end -}}
