{{/*
The chart's name, for labels.
*/}}
{{- define "hecate.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The prefix of every resource name: the release name when it contains the chart's name
(a release named hecate makes hecate-controller, hecate-api), else <release>-hecate.
*/}}
{{- define "hecate.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
A component's resource name: (dict "root" $ "name" "controller") → hecate-controller.
*/}}
{{- define "hecate.componentName" -}}
{{- printf "%s-%s" (include "hecate.fullname" .root) .name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Labels of a component's objects: (dict "root" $ "name" "controller-shard1" "component"
"controller"). `name` tells workloads apart (a shard's Deployment selects only its own
Pods); `component` groups them (every controller, shard or not).
*/}}
{{- define "hecate.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "hecate.selectorLabels" . }}
app.kubernetes.io/component: {{ .component }}
app.kubernetes.io/part-of: hecate
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
{{- end }}

{{/*
The labels a workload selects its Pods by (immutable once installed).
*/}}
{{- define "hecate.selectorLabels" -}}
app.kubernetes.io/name: {{ printf "%s-%s" (include "hecate.name" .root) .name | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- end }}

{{/*
A component's image: (dict "root" $ "image" .Values.api.image); the tag defaults to the
chart's appVersion.
*/}}
{{- define "hecate.image" -}}
{{- printf "%s:%s" .image.repository (default .root.Chart.AppVersion .image.tag) }}
{{- end }}

{{/*
What every component's Pod spec shares: (dict "root" $ "values" .Values.api
"serviceAccount" "hecate-api" "ctx" $ctx), rendered at the Pod spec's indentation.
`ctx` is the workload's label context: a topology spread constraint without a
labelSelector spreads the workload's own Pods.
*/}}
{{- define "hecate.podSpec" -}}
serviceAccountName: {{ .serviceAccount }}
{{- with .root.Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
securityContext:
  {{- toYaml .root.Values.podSecurityContext | nindent 2 }}
{{- with .values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.topologySpreadConstraints }}
{{- $selector := dict "matchLabels" (include "hecate.selectorLabels" $.ctx | fromYaml) }}
topologySpreadConstraints:
  {{- range . }}
  {{- $constraint := . }}
  {{- if not (hasKey $constraint "labelSelector") }}
  {{- $constraint = merge (dict "labelSelector" $selector) . }}
  {{- end }}
  - {{ toYaml $constraint | nindent 4 | trim }}
  {{- end }}
{{- end }}
{{- end }}

{{/*
A PodDisruptionBudget for a replicated workload: (dict "root" $ "values" $values
"ctx" $ctx); nothing for one replica, where a budget would block every node drain.
*/}}
{{- define "hecate.podDisruptionBudget" -}}
{{- if and .values.podDisruptionBudget.enabled (gt (int .values.replicas) 1) }}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "hecate.componentName" .ctx }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "hecate.labels" .ctx | nindent 4 }}
spec:
  maxUnavailable: {{ .values.podDisruptionBudget.maxUnavailable }}
  selector:
    matchLabels:
      {{- include "hecate.selectorLabels" .ctx | nindent 6 }}
{{- end }}
{{- end }}

{{/*
A component's Pod metadata: (dict "root" $ "values" .Values.api "name" "api"
"component" "api"), rendered at the Pod template's indentation.
*/}}
{{- define "hecate.podMetadata" -}}
labels:
  {{- include "hecate.labels" . | nindent 2 }}
  {{- with .values.podLabels }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- with .values.podAnnotations }}
annotations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/*
The web UI's public address for links in notices: notifications.uiURL, else the API's
ingress host over HTTPS, else nothing.
*/}}
{{- define "hecate.uiURL" -}}
{{- if .Values.notifications.uiURL }}
{{- .Values.notifications.uiURL }}
{{- else if and .Values.api.enabled .Values.api.ingress.enabled .Values.api.ingress.host }}
{{- printf "https://%s" .Values.api.ingress.host }}
{{- end }}
{{- end }}
