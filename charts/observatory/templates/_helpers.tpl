{{/* Chart name, overridable. */}}
{{- define "observatory.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name of the release's objects: the release name, with the chart name appended unless already contained. */}}
{{- define "observatory.fullname" -}}
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

{{- define "observatory.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels that select the operator's Pods. */}}
{{- define "observatory.selectorLabels" -}}
app.kubernetes.io/name: {{ include "observatory.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
{{- end }}

{{- define "observatory.labels" -}}
helm.sh/chart: {{ include "observatory.chart" . }}
{{ include "observatory.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: observatory
{{- end }}

{{- define "observatory.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "observatory.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* repository:tag, or repository@digest when a digest is given. */}}
{{- define "observatory.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* The namespace whose resources the operator reconciles; "" means every namespace. */}}
{{- define "observatory.watchNamespace" -}}
{{- if .Values.operator.watchNamespace }}
{{- .Values.operator.watchNamespace }}
{{- else if not .Values.rbac.clusterWide }}
{{- .Release.Namespace }}
{{- end }}
{{- end }}

{{- define "observatory.leaseName" -}}
{{- default (printf "%s-leader" (include "observatory.fullname" .)) .Values.leaderElection.leaseName | trunc 63 | trimSuffix "-" }}
{{- end }}
