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
gpuform.agentImage: the agent's image, agent.image.repository (with its own
tag, default appVersion, or digest). Never image's: the agent needs gpuform
built with cgo on a glibc base (build/agent.Dockerfile), the CLI's image is
static. The schema requires it while the agent is enabled; required says so
again where the schema is skipped.
*/}}
{{- define "gpuform.agentImage" -}}
{{- $a := .Values.agent.image -}}
{{- $repo := required "agent.image.repository: the agent needs its own image, gpuform built with cgo from build/agent.Dockerfile and pushed to your registry (docs/helm.md#the-agents-image); or set agent.enabled=false" $a.repository -}}
{{- if $a.digest -}}
{{ $repo }}@{{ $a.digest }}
{{- else -}}
{{ $repo }}:{{ $a.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end -}}
