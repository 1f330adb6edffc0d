{{/* Chart name, truncated to 63 characters. */}}
{{- define "apply-hygiene.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Full name: <release>-<chart> unless the release name already contains the
chart name. Also the name of the webhook configurations and the Service.
*/}}
{{- define "apply-hygiene.fullname" -}}
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

{{- define "apply-hygiene.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "apply-hygiene.selectorLabels" -}}
app.kubernetes.io/name: {{ include "apply-hygiene.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "apply-hygiene.labels" -}}
helm.sh/chart: {{ include "apply-hygiene.chart" . }}
{{ include "apply-hygiene.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: webhook
{{- end }}

{{- define "apply-hygiene.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "apply-hygiene.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "apply-hygiene.tlsSecretName" -}}
{{- default (printf "%s-tls" (include "apply-hygiene.fullname" .)) .Values.tlsSecretName }}
{{- end }}

{{- define "apply-hygiene.configMapName" -}}
{{- printf "%s-config" (include "apply-hygiene.fullname" .) }}
{{- end }}

{{- define "apply-hygiene.policiesConfigMapName" -}}
{{- printf "%s-policies" (include "apply-hygiene.fullname" .) }}
{{- end }}

{{/* urlMode is "true" when the webhook runs outside the cluster. */}}
{{- define "apply-hygiene.urlMode" -}}
{{- if .Values.webhook.url }}true{{ end }}
{{- end }}

{{/* selfManagedTLS is "true" when the server makes its own certificate:
neither cert-manager nor, in url mode, a caBundle of the user's own. */}}
{{- define "apply-hygiene.selfManagedTLS" -}}
{{- if and (not .Values.webhook.caBundle) (not .Values.certManager.enabled) }}true{{ end }}
{{- end }}

{{- define "apply-hygiene.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* Combinations the schema cannot express. */}}
{{- define "apply-hygiene.validate" -}}
{{- if and .Values.webhook.url .Values.certManager.enabled }}
{{- fail "webhook.url and certManager.enabled=true exclude each other: in URL mode the external server brings its own certificate (webhook.caBundle)" }}
{{- end }}
{{- if and .Values.webhook.caBundle (not .Values.webhook.url) }}
{{- fail "webhook.caBundle is only used with webhook.url" }}
{{- end }}
{{- $names := list "not-never-intercepted" "not-a-controller" "not-a-removal-proof" "may-have-a-decision" "may-be-repairable" }}
{{- range (default list .Values.webhook.extraMatchConditions) }}
{{- if has .name $names }}
{{- fail (printf "webhook.extraMatchConditions: the name %q is taken (the chart's own are not-never-intercepted, not-a-controller, not-a-removal-proof, may-have-a-decision and may-be-repairable; names must be unique)" .name) }}
{{- end }}
{{- $names = append $names .name }}
{{- end }}
{{- if and .Values.audit.enabled .Values.audit.fix .Values.webhook.extraMatchConditions }}
{{- fail "audit.fix and webhook.extraMatchConditions exclude each other: the periodic audit fix cannot evaluate the conditions (they are CEL on the API server's admission request), so it would write objects they keep the webhooks away from. Exclude objects from both with webhook.objectSelector (labels), excludeNamespaces or the apply-hygiene.io/ignore namespace label, or leave audit.fix off and fix with kubectl hygiene audit --fix (docs/audit.md)" }}
{{- end }}
{{- range $i, $kind := (default list .Values.extraKinds) }}
{{- range (default list $kind.subresources) }}
{{- if ne . "scale" }}
{{- fail (printf "extraKinds[%d].subresources: %s/%s: only scale can be listed. apply-hygiene reviews the writes of an object and of its /scale, and lets every other subresource's write (/status, a pod's /resize or /ephemeralcontainers, a custom resource's) through unreviewed: the API server would call the webhooks for nothing (docs/install.md)" $i $kind.resource .) }}
{{- end }}
{{- end }}
{{- end }}
{{- range (default list .Values.extraEnv) }}
{{- if has .name (list "POD_NAMESPACE" "POD_NAME" "GOMEMLIMIT") }}
{{- fail (printf "extraEnv: %s is set by the chart and cannot be redefined (GOMEMLIMIT follows resources.limits.memory)" .name) }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The kinds of each `kinds` preset, per API group: {group, version, scope,
resources}. Subresources only where a rule acts on them: /scale of the
workloads that have one (kubectl scale); never /status (controllers').
Scope "*" where a group has cluster-scoped kinds (Namespace, ClusterRole,
ClusterRoleBinding). The all preset is rendered by apply-hygiene.allRules.
*/}}
{{- define "apply-hygiene.presetGroups" -}}
{{- $workloads := dict "group" "apps" "version" "v1" "scope" "Namespaced" "resources" (list "deployments" "deployments/scale" "statefulsets" "statefulsets/scale" "daemonsets") }}
{{- $groups := list $workloads }}
{{- if eq .Values.kinds "common" }}
{{- $groups = list
  (dict "group" "" "version" "v1" "scope" "*" "resources" (list "configmaps" "namespaces" "secrets" "serviceaccounts" "services"))
  $workloads
  (dict "group" "autoscaling" "version" "v2" "scope" "Namespaced" "resources" (list "horizontalpodautoscalers"))
  (dict "group" "batch" "version" "v1" "scope" "Namespaced" "resources" (list "cronjobs" "jobs"))
  (dict "group" "networking.k8s.io" "version" "v1" "scope" "Namespaced" "resources" (list "ingresses" "networkpolicies"))
  (dict "group" "policy" "version" "v1" "scope" "Namespaced" "resources" (list "poddisruptionbudgets"))
  (dict "group" "rbac.authorization.k8s.io" "version" "v1" "scope" "*" "resources" (list "clusterrolebindings" "clusterroles" "rolebindings" "roles")) }}
{{- end }}
{{- toYaml (dict "groups" $groups) }}
{{- end }}

{{/*
The all preset: every resource of every group and version the API server
serves (the API server itself never calls webhooks on the webhook and
admission-policy configurations; "*" is no subresource of them), plus the
/scale of the built-in kinds that have one. What must never be intercepted is kept away by the
never-intercepted match condition: admission rules cannot exclude.
*/}}
{{- define "apply-hygiene.allRules" -}}
- apiGroups: ["*"]
  apiVersions: ["*"]
  operations: ["UPDATE"]
  resources: ["*"]
  scope: "*"
- apiGroups: [""]
  apiVersions: ["v1"]
  operations: ["UPDATE"]
  resources: ["replicationcontrollers/scale"]
  scope: Namespaced
- apiGroups: ["apps"]
  apiVersions: ["v1"]
  operations: ["UPDATE"]
  resources: ["deployments/scale", "replicasets/scale", "statefulsets/scale"]
  scope: Namespaced
{{- end }}

{{/*
The scale parents the server reads (get) to review a /scale request, per
group: the preset's built-in ones, then each extraKinds resource with a
scale subresource.
*/}}
{{- define "apply-hygiene.scaleParents" -}}
{{- $parents := list (dict "group" "apps" "resources" (list "deployments" "statefulsets")) }}
{{- if eq .Values.kinds "all" }}
{{- $parents = list (dict "group" "" "resources" (list "replicationcontrollers")) (dict "group" "apps" "resources" (list "deployments" "replicasets" "statefulsets")) }}
{{- end }}
{{- range .Values.extraKinds }}
{{- if has "scale" (default list .subresources) }}
{{- $parents = append $parents (dict "group" (include "apply-hygiene.group" .group) "resources" (list .resource)) }}
{{- end }}
{{- end }}
{{- toYaml (dict "parents" $parents) }}
{{- end }}

{{/*
The CRDs the server reads (get, by name) to find where the /scale of a
custom resource sets its count (subresources.scale.specReplicasPath): the
CRD <resource>.<group> of each extraKinds resource with a scale subresource
outside the built-in groups ("" and apps, whose kinds keep spec.replicas).
*/}}
{{- define "apply-hygiene.scaleCRDs" -}}
{{- $names := list }}
{{- range .Values.extraKinds }}
{{- $group := include "apply-hygiene.group" .group }}
{{- if and (has "scale" (default list .subresources)) (ne $group "") (ne $group "apps") }}
{{- $names = append $names (printf "%s.%s" .resource $group) }}
{{- end }}
{{- end }}
{{- toYaml (dict "names" (uniq $names)) }}
{{- end }}

{{/*
The resources the periodic audit lists, per group: {group, version,
resources}. The preset's kinds without subresources (the common kinds for
all: listing every object of every kind each interval is not an audit), but
never Secrets: listing them cluster-wide would read every Secret's value
(run kubectl hygiene audit --kind secrets as someone who may), then each
extraKinds resource.
*/}}
{{- define "apply-hygiene.auditGroups" -}}
{{- $root := . }}
{{- $preset := .Values.kinds }}
{{- if eq $preset "all" }}{{ $preset = "common" }}{{ end }}
{{- $values := mergeOverwrite (deepCopy .Values) (dict "kinds" $preset) }}
{{- $groups := list }}
{{- range (include "apply-hygiene.presetGroups" (dict "Values" $values) | fromYaml).groups }}
{{- $resources := list }}
{{- range .resources }}
{{- if and (not (contains "/" .)) (ne . "secrets") }}{{ $resources = append $resources . }}{{ end }}
{{- end }}
{{- $groups = append $groups (dict "group" .group "version" .version "resources" $resources) }}
{{- end }}
{{- range .Values.extraKinds }}
{{- $groups = append $groups (dict "group" (include "apply-hygiene.group" .group) "version" .version "resources" (list .resource)) }}
{{- end }}
{{- toYaml (dict "groups" $groups) }}
{{- end }}

{{/* patch on the kinds the audit lists (auditGroups): audit.fix and removalProofs. */}}
{{- define "apply-hygiene.patchRules" -}}
{{- range (include "apply-hygiene.auditGroups" . | fromYaml).groups }}
  - apiGroups: [{{ .group | quote }}]
    resources: {{ toJson (sortAlpha .resources) }}
    verbs: ["patch"]
{{- end }}
{{- end }}

{{/* --audit-resources: group/version/resource, version/resource for core. */}}
{{- define "apply-hygiene.auditResourcesFlag" -}}
{{- $specs := list }}
{{- range (include "apply-hygiene.auditGroups" . | fromYaml).groups }}
{{- $gv := .version }}
{{- if .group }}{{ $gv = printf "%s/%s" .group .version }}{{ end }}
{{- range .resources }}{{ $specs = append $specs (printf "%s/%s" $gv .) }}{{ end }}
{{- end }}
{{- join "," $specs }}
{{- end }}

{{/* An API group as the API server names it: "core" is the core group "". */}}
{{- define "apply-hygiene.group" -}}
{{- if ne . "core" }}{{ . }}{{ end }}
{{- end }}

{{/*
The admission rules of the chosen kinds and extraKinds. No subresource but
/scale: the server reviews the writes of an object and of its /scale only
(reviewsSubresource in internal/review/update.go) and lets any other
through, so apply-hygiene.validate rejects any other in extraKinds, and
the all preset's "*" matches no subresource.
*/}}
{{- define "apply-hygiene.rules" -}}
rules:
  {{- if eq .Values.kinds "all" }}
  {{- include "apply-hygiene.allRules" . | nindent 2 }}
  {{- else }}
  {{- range (include "apply-hygiene.presetGroups" . | fromYaml).groups }}
  - apiGroups: [{{ .group | quote }}]
    apiVersions: [{{ .version | quote }}]
    operations: ["UPDATE"]
    resources:
      {{- toYaml .resources | nindent 6 }}
    scope: {{ .scope | quote }}
  {{- end }}
  {{- end }}
  {{- range .Values.extraKinds }}
  - apiGroups: [{{ include "apply-hygiene.group" .group | quote }}]
    apiVersions: [{{ .version | quote }}]
    operations: ["UPDATE"]
    resources:
      - {{ .resource }}
      {{- $resource := .resource }}
      {{- range .subresources }}
      - {{ printf "%s/%s" $resource . }}
      {{- end }}
    scope: {{ default "Namespaced" .scope | quote }}
  {{- end }}
{{- end }}

{{/* The controllers' user names, a JSON list: files/controller-users.json
(written from the server's own list) and controllerUsers. */}}
{{- define "apply-hygiene.controllerUsers" -}}
{{- concat (.Files.Get "files/controller-users.json" | fromJsonArray) (default list .Values.controllerUsers) | toJson }}
{{- end }}

{{/* One clientConfig; argument: (dict "root" $ "path" "/mutate"). */}}
{{- define "apply-hygiene.clientConfig" -}}
{{- $root := .root }}
{{- if $root.Values.webhook.url }}
url: {{ printf "%s%s" (trimSuffix "/" $root.Values.webhook.url) .path | quote }}
{{- with $root.Values.webhook.caBundle }}
caBundle: {{ . }}
{{- end }}
{{- else }}
service:
  name: {{ include "apply-hygiene.fullname" $root }}
  namespace: {{ $root.Release.Namespace }}
  path: {{ .path }}
  port: 443
{{- end }}
{{- end }}

{{/*
The CEL conditions under which the API server calls a webhook; a dict with
"root" (the chart's context) and "mutating" (bool). They only save calls: the server decides the same itself.
*/}}
{{- define "apply-hygiene.matchConditions" -}}
matchConditions:
  {{- if eq .root.Values.kinds "all" }}
  # kinds=all only: what must never be intercepted, which admission rules
  # cannot exclude. Events (core and events.k8s.io): every controller's
  # records of what happened, never applied, and the server's own audit
  # patches them (a call per event, and a loop). Leases: leader election and
  # node heartbeats, every few seconds. Endpoints and EndpointSlices: the
  # controllers' mirror of each Service's pods. APIServices: the aggregation
  # layer's registrations, which discovery and every client depend on. The
  # API server itself never calls webhooks on the webhook and admission
  # policy configurations, and TokenReviews, SubjectAccessReviews and the
  # other reviews are only created, never updated (the rules are UPDATE
  # only).
  - name: not-never-intercepted
    expression: >-
      !((has(request.resource.group) ? request.resource.group : '') + '/' + request.resource.resource
      in ['/events', 'events.k8s.io/events', 'coordination.k8s.io/leases', '/endpoints',
      'discovery.k8s.io/endpointslices', 'apiregistration.k8s.io/apiservices'])
  {{- end }}
  # Kubernetes components, kubelets and kube-controller-manager's own
  # controllers by their service accounts (files/controller-users.json, the
  # server's ControllerUsers in internal/review/controllers.go), and
  # controllerUsers: apply-hygiene lets their writes through unreviewed, so
  # the API server need not call it. Other kube-system service accounts (a
  # third-party controller, a GitOps tool's) are reviewed; other system:
  # users (OpenShift's system:admin, system:anonymous) are people.
  - name: not-a-controller
    expression: >-
      !(request.userInfo.username in {{ include "apply-hygiene.controllerUsers" .root }}
      || request.userInfo.username.startsWith('system:node:'))
  # apply-hygiene's own removal proofs (--removal-proofs): server-side dry
  # runs that prove an orphaned field's removal sticks, sent while it
  # reviews an apply. Nothing of them is stored, and the server would only
  # skip them (kube.DryRunFieldManager in internal/kube/removal.go).
  - name: not-a-removal-proof
    expression: >-
      !(has(request.dryRun) && request.dryRun
      && has(request.options) && has(request.options.fieldManager)
      && request.options.fieldManager == 'apply-hygiene-dry-run')
  {{- if and (not .mutating) (not .root.Values.reviewWritesWithoutLastApplied) }}
  # Writes a rule may decide on (the mutating webhook's may-be-repairable
  # implies this): /scale, a client that names its field manager (every
  # apply, server-side ones included, and kubectl's commands), last-applied
  # in the old or the new object, or a new pod template (a rollout undo is
  # warned about even without last-applied). The rest, such as a
  # controller's client-go update of a leader-election ConfigMap or a token
  # Secret, is an imperative write without last-applied: no rule decides on
  # it (imperative-edit needs the fields last-applied owns, the other rules
  # an apply, a save-config, an undo or a last-applied to read). A policy
  # of your own that decides on such writes needs
  # reviewWritesWithoutLastApplied=true. A custom resource's spec need
  # not be an object (a list or a string where its CRD allows one): spec
  # is read only when it is a map, as has() on a list's field is an error,
  # which failurePolicy Fail would turn into a denial.
  - name: may-have-a-decision
    expression: >-
      (has(request.subResource) && request.subResource == 'scale')
      || (has(request.options) && has(request.options.fieldManager) && request.options.fieldManager != '')
      || (has(object.metadata.annotations) && 'kubectl.kubernetes.io/last-applied-configuration' in object.metadata.annotations)
      || (has(oldObject.metadata.annotations) && 'kubectl.kubernetes.io/last-applied-configuration' in oldObject.metadata.annotations)
      || (has(object.spec) && type(object.spec) == map && has(object.spec.template)
      && (!has(oldObject.spec) || type(oldObject.spec) != map || !has(oldObject.spec.template)
      || object.spec.template != oldObject.spec.template))
  {{- end }}
  {{- if .mutating }}
  # Writes the mutating webhook may repair (repairable in
  # webhook/reviewer.go): applies (client- or server-side; every apply sends
  # a field manager, or changes last-applied) and rollout undo (no field
  # manager, a new pod template). Not kubectl's in-place commands (edit,
  # patch, set, label, annotate, scale, rollout restart/pause/resume).
  # spec is read only when it is a map, as in may-have-a-decision.
  - name: may-be-repairable
    expression: >-
      has(request.options) && has(request.options.fieldManager) && request.options.fieldManager != ''
      ? !(request.options.fieldManager in ['kubectl-edit', 'kubectl-patch', 'kubectl-set',
      'kubectl-label', 'kubectl-annotate', 'kubectl-scale', 'kubectl-rollout'])
      : (has(object.spec) && type(object.spec) == map && has(object.spec.template)
      && (!has(oldObject.spec) || type(oldObject.spec) != map || !has(oldObject.spec.template)
      || object.spec.template != oldObject.spec.template))
      || (has(object.metadata.annotations) && 'kubectl.kubernetes.io/last-applied-configuration' in object.metadata.annotations
      ? object.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration'] : '')
      != (has(oldObject.metadata.annotations) && 'kubectl.kubernetes.io/last-applied-configuration' in oldObject.metadata.annotations
      ? oldObject.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration'] : '')
  {{- end }}
  {{- with .root.Values.webhook.extraMatchConditions }}
  # webhook.extraMatchConditions, after the chart's own.
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end }}

{{/* Everything a webhook has in common with the other one. */}}
{{- define "apply-hygiene.webhookCommon" -}}
{{ include "apply-hygiene.rules" . }}
namespaceSelector:
  matchExpressions:
    - key: kubernetes.io/metadata.name
      operator: NotIn
      values:
        {{- toYaml (uniq (concat (list "kube-system" .Release.Namespace) .Values.excludeNamespaces)) | nindent 8 }}
    - key: apply-hygiene.io/ignore
      operator: DoesNotExist
{{- with .Values.webhook.objectSelector }}
objectSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
failurePolicy: {{ .Values.failurePolicy }}
matchPolicy: Equivalent
sideEffects: None
timeoutSeconds: {{ .Values.timeoutSeconds }}
admissionReviewVersions: ["v1"]
{{- end }}

{{/* Annotations of both webhook configurations. */}}
{{- define "apply-hygiene.webhookAnnotations" -}}
{{- if .Values.certManager.enabled }}
annotations:
  cert-manager.io/inject-ca-from: {{ printf "%s/%s-serving" .Release.Namespace (include "apply-hygiene.fullname" .) }}
{{- end }}
{{- end }}

{{/* The policy data document, in policy.Config's shape. */}}
{{- define "apply-hygiene.policyConfig" -}}
{{- $p := .Values.policy }}
{{- $doc := dict "namespaceLabel" $p.namespaceLabel }}
{{- with $p.rules }}{{ $_ := set $doc "rules" . }}{{ end }}
{{- with $p.breakGlassGroups }}{{ $_ := set $doc "breakGlassGroups" . }}{{ end }}
{{- with $p.deployTools }}{{ $_ := set $doc "deployTools" . }}{{ end }}
{{- $ex := dict }}
{{- range $k, $v := $p.exemptions }}{{ if $v }}{{ $_ := set $ex $k $v }}{{ end }}{{ end }}
{{- with $ex }}{{ $_ := set $doc "exemptions" . }}{{ end }}
{{- with $p.ownership }}{{ $_ := set $doc "ownership" . }}{{ end }}
{{- toYaml $doc }}
{{- end }}

{{/* GOMEMLIMIT: 80 % of resources.limits.memory in bytes, the rest for
what the Go runtime does not count (the binary's pages, thread stacks). */}}
{{- define "apply-hygiene.goMemLimit" -}}
{{- $q := toString . }}
{{- $units := dict "Ki" 1024 "Mi" 1048576 "Gi" 1073741824 "k" 1000 "M" 1000000 "G" 1000000000 }}
{{- $n := regexFind "^[0-9]+" $q }}
{{- $unit := trimPrefix $n $q }}
{{- if or (not $n) (and $unit (not (hasKey $units $unit))) }}
{{- fail (printf "resources.limits.memory %q: use a whole number of bytes, optionally with Ki, Mi, Gi, k, M or G" $q) }}
{{- end }}
{{- $bytes := mul (int64 $n) (ternary 1 (get $units $unit) (eq $unit "")) }}
{{- div (mul $bytes 8) 10 }}
{{- end }}

{{/*
The pod's grace period: shutdownDelay + shutdownTimeout (whole seconds, as
the schema requires) + 10 s for the audit lease's release and the exit.
A value missing after helm upgrade --reuse-values from a chart without it
counts as the server's default, which the deployment then leaves to it.
*/}}
{{- define "apply-hygiene.terminationGracePeriodSeconds" -}}
{{- $delay := .Values.shutdownDelay | default "5s" }}
{{- $timeout := .Values.shutdownTimeout | default "30s" }}
{{- add (trimSuffix "s" $delay | atoi) (trimSuffix "s" $timeout | atoi) 10 }}
{{- end }}

{{/* The helm test's resources: their name (also the namespace it creates,
where the webhooks intercept) and labels, which never match the server's
pod selector. */}}
{{- define "apply-hygiene.testName" -}}
{{- printf "%s-test" (include "apply-hygiene.fullname" . | trunc 58 | trimSuffix "-") }}
{{- end }}

{{- define "apply-hygiene.testLabels" -}}
helm.sh/chart: {{ include "apply-hygiene.chart" . }}
app.kubernetes.io/part-of: {{ include "apply-hygiene.fullname" . }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: test
{{- end }}
