package merge

import (
	"testing"
)

func TestIsServerDefault(t *testing.T) {
	deployment := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"containers": []any{
			map[string]any{"name": "app", "image": "nginx:1.27"},
			map[string]any{"name": "latest", "image": "registry.example/team/tool"},
		},
	}}}}
	service := map[string]any{"apiVersion": "v1", "kind": "Service", "spec": map[string]any{"ports": []any{
		map[string]any{"port": int64(80), "protocol": "TCP", "targetPort": int64(80)},
	}}}
	container := func(name string, rest ...string) Path {
		p := mustParsePath(t, "spec.template.spec.containers[name="+name+"]")
		for _, f := range rest {
			p = append(p, fieldName(f))
		}
		return p
	}
	port80 := mustParsePath(t, "spec.ports[port=80,protocol=TCP]")
	tests := []struct {
		name string
		kind string
		obj  map[string]any
		p    Path
		v    any
		want bool
	}{
		{"terminationMessagePath", "Deployment", deployment, container("app", "terminationMessagePath"), "/dev/termination-log", true},
		{"another terminationMessagePath", "Deployment", deployment, container("app", "terminationMessagePath"), "/tmp/log", false},
		{"imagePullPolicy of a tagged image", "Deployment", deployment, container("app", "imagePullPolicy"), "IfNotPresent", true},
		{"Always for a tagged image is set", "Deployment", deployment, container("app", "imagePullPolicy"), "Always", false},
		{"imagePullPolicy of an untagged image", "Deployment", deployment, container("latest", "imagePullPolicy"), "Always", true},
		{"probe period", "Deployment", deployment, append(container("app", "readinessProbe"), fieldName("periodSeconds")), int64(10), true},
		{"probe period 5", "Deployment", deployment, append(container("app", "readinessProbe"), fieldName("periodSeconds")), int64(5), false},
		{"targetPort equal to the port", "Service", service, append(port80.Append(), fieldName("targetPort")), int64(80), true},
		{"targetPort other than the port", "Service", service, append(port80.Append(), fieldName("targetPort")), int64(8080), false},
		{"sessionAffinity", "Service", service, mustParsePath(t, "spec.sessionAffinity"), "None", true},
		{"ClientIP affinity", "Service", service, mustParsePath(t, "spec.sessionAffinity"), "ClientIP", false},
		{"a field without a default", "Service", service, mustParsePath(t, "spec.externalName"), "", false},
		{"a kind without defaults", "ConfigMap", map[string]any{}, mustParsePath(t, "data.a"), "TCP", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := isServerDefault(tc.kind, tc.obj, tc.p, tc.v); got != tc.want {
				t.Errorf("isServerDefault(%s, %s, %v) = %v, want %v", tc.kind, tc.p, tc.v, got, tc.want)
			}
		})
	}
}

func mustParsePath(t *testing.T, s string) Path {
	t.Helper()
	p, err := ParsePath(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
