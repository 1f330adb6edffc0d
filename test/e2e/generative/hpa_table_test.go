package generative_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// The replicas kube-controller-manager's autoscaler may set without
// metrics: the bounds, with its downscale stabilization window and its
// scale-up limit.
func TestAutoscalerAllowed(t *testing.T) {
	now := time.Now()
	tests := map[string]struct {
		recommendations []recommendation
		replicas        int
		want            []int
	}{
		"above max goes to max": {
			recommendations: []recommendation{{5, now.Add(-time.Minute)}},
			replicas:        5, want: []int{3},
		},
		"below min goes to min": {
			recommendations: []recommendation{{2, now.Add(-time.Minute)}},
			replicas:        1, want: []int{2},
		},
		"below min after a clamp to max goes to min or to max (stabilization)": {
			recommendations: []recommendation{{2, now.Add(-2 * time.Minute)}, {3, now.Add(-time.Minute)}},
			replicas:        1, want: []int{2, 3},
		},
		"a recommendation at the window's edge may count or not": {
			recommendations: []recommendation{{3, now.Add(-5 * time.Minute)}},
			replicas:        1, want: []int{2, 3},
		},
		"a recommendation older than the window does not count": {
			recommendations: []recommendation{{3, now.Add(-6 * time.Minute)}},
			replicas:        1, want: []int{2},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			a := &autoscaler{min: 2, max: 3, recommendations: tc.recommendations}
			if diff := cmp.Diff(tc.want, a.allowed(tc.replicas, now)); diff != "" {
				t.Errorf("allowed (-want +got):\n%s", diff)
			}
		})
	}
}

// The autoscaler changes replicas only out of its bounds, and never 0.
func TestAutoscalerOutOfBounds(t *testing.T) {
	a := &autoscaler{min: 2, max: 3}
	got := map[int]bool{}
	for n := 0; n <= 5; n++ {
		got[n] = a.outOfBounds(n)
	}
	want := map[int]bool{0: false, 1: true, 2: false, 3: false, 4: true, 5: true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outOfBounds (-want +got):\n%s", diff)
	}
}

// The autoscaler writes through /scale, which changes the replicas alone:
// what else changed while the runner waited for its clamp (up to 45 s,
// longer than awaitAudit's window) is another writer's, the periodic
// audit's, and is judged as such before the next step, while the count
// stays recorded as the controller's (soak seed 271126, sequence 710: the
// audit's removal of a person's annotation, made while the runner waited
// for the clamp, was recorded as the autoscaler's write, and the removal
// then judged a robot's field lost).
func TestAutoscalerClampBetweenSteps(t *testing.T) {
	la := map[string]any{"spec": map[string]any{}}
	key := "gen.example.com/k-3"
	annotation := framework.Path("metadata", "annotations").Key(key)
	with := map[string]any{key: "o2"}
	tests := map[string]struct {
		fields map[string]setField
		// clamped is the object after the clamp, read once the
		// autoscaler changed the replicas.
		clamped map[string]any
		want    []string
		wrote   map[string]int
		planted []string
		robots  []string
	}{
		"the clamp alone": {
			fields:  map[string]setField{annotation.String(): {path: annotation, person: true}},
			clamped: deploymentWith(la, nil, with, 3, nil),
			planted: []string{annotation.String()}, robots: []string{"spec.replicas"},
		},
		"the audit removed a person's orphan while the runner waited for the clamp": {
			fields:  map[string]setField{annotation.String(): {path: annotation, person: true}},
			clamped: deploymentWith(la, nil, nil, 3, nil),
			wrote:   map[string]int{"periodic audit removals": 1}, robots: []string{"spec.replicas"},
		},
		"the audit removed a robot's field while the runner waited for the clamp": {
			fields:  map[string]setField{annotation.String(): {path: annotation}},
			clamped: deploymentWith(la, nil, nil, 3, nil),
			want:    []string{"self-write-lost"}, robots: []string{"spec.replicas"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			prev := deploymentWith(la, nil, with, 2, nil)
			r := &runner{t: t, fields: map[string]setField{}, wrote: map[string]int{}, last: prev, scope: scopeFix, hpa: &autoscaler{min: 3, max: 3}}
			for k, f := range tc.fields {
				r.fields[k] = f
			}
			r.recordClamp(prev, tc.clamped)
			r.betweenSteps(0, tc.clamped)
			got := r.failedChecks()
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("failed checks (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wrote, r.wrote, cmpEmpty); diff != "" {
				t.Errorf("counted writes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.planted, strs(r.planted(false))); diff != "" {
				t.Errorf("people's fields after (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.robots, strs(r.setByRobots())); diff != "" {
				t.Errorf("robots' fields after (-want +got):\n%s", diff)
			}
		})
	}
}

// A kubectl scale out of the autoscaler's bounds whose count the
// controller clamped before the runner read the object is judged as the
// scale left it, and the clamp is the controller's (seed 281149, sequence
// 002, step 18); any other step is judged as read.
func TestScaledThenClamped(t *testing.T) {
	read := map[string]any{"spec": map[string]any{"replicas": float64(2)}}
	scaled := map[string]any{"spec": map[string]any{"replicas": float64(4)}}
	tests := map[string]struct {
		args    []string
		exit    int
		noHPA   bool
		read    map[string]any
		written map[string]any
		clamped bool
	}{
		"a scale to 4 read back clamped to 2":       {args: []string{"scale", "deployment/web", "--replicas=4"}, read: read, written: scaled, clamped: true},
		"a scale to 4 read back as 4":               {args: []string{"scale", "deployment/web", "--replicas=4"}, read: scaled, written: scaled},
		"a scale within the bounds":                 {args: []string{"scale", "deployment/web", "--replicas=2"}, read: read, written: read},
		"a scale to 0, which the autoscaler leaves": {args: []string{"scale", "deployment/web", "--replicas=0"}, read: read, written: read},
		"a scale that failed":                       {args: []string{"scale", "deployment/web", "--replicas=4"}, exit: 1, read: read, written: read},
		"a scale without an autoscaler":             {args: []string{"scale", "deployment/web", "--replicas=4"}, noHPA: true, read: read, written: read},
		"a write that is no scale":                  {args: []string{"set", "image", "deployment/web", "app=a:2"}, read: read, written: read},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := &runner{t: t, hpa: &autoscaler{min: 2, max: 2}}
			if tc.noHPA {
				r.hpa = nil
			}
			written, clamp := r.scaledThenClamped(as(robot, tc.args...), framework.Result{ExitCode: tc.exit}, tc.read)
			if diff := cmp.Diff(tc.written, written); diff != "" {
				t.Errorf("written (-want +got):\n%s", diff)
			}
			if got := clamp != nil; got != tc.clamped {
				t.Errorf("clamp = %v, want one: %v", clamp, tc.clamped)
			}
		})
	}
}

// TestRecordForgetsADeletedAutoscaler holds the model to the autoscaler
// that kubectl delete hpa removed, whoever reviews the namespace
// (generative seed 281159, sequence 003: the model of a namespace the
// webhook ignores kept it and waited 45 s for its clamp).
func TestRecordForgetsADeletedAutoscaler(t *testing.T) {
	obj := map[string]any{"metadata": map[string]any{"name": "web"}, "spec": map[string]any{"replicas": 5.0}}
	tests := map[string]struct {
		s    step
		kept bool
	}{
		"kubectl delete hpa":                         {s: person("delete", "horizontalpodautoscaler/web")},
		"kubectl delete of another object":           {s: person("delete", "configmap/web"), kept: true},
		"kubectl scale, which the autoscaler clamps": {s: person("scale", "deployment/web", "--replicas=5"), kept: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := &runner{t: t, hpa: &autoscaler{min: 2, max: 3}, fields: map[string]setField{}}
			r.record(tc.s, obj, obj)
			if got := r.hpa != nil; got != tc.kept {
				t.Fatalf("autoscaler kept = %v, want %v", got, tc.kept)
			}
		})
	}
}
