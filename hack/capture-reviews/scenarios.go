package main

// step is one kubectl run, or a wait: {"wait-revisions", selector, n}.
type step struct {
	args  []string
	stdin string
	env   []string
}

// scenario is a setup, not recorded, then the recorded steps.
type scenario struct {
	name string
	// as is "" for the admin, else "namespace/name" of a service account
	// that gets edit rights in the scenario's namespace ("" namespace: the
	// scenario's own).
	as     string
	setup  []step
	record []step
}

func apply(manifest string, extra ...string) step {
	return step{args: append([]string{"apply", "-f", "-"}, extra...), stdin: manifest}
}

func kubectl(args ...string) step { return step{args: args} }

func waitForRevisions(selector, n string) step {
	return step{args: []string{"wait-revisions", selector, n}}
}

// editor is a kubectl edit whose "editor" is a sed script.
func editor(script string, args ...string) step {
	return step{args: args, env: []string{"EDITOR=sed -i " + script, "KUBE_EDITOR=sed -i " + script}}
}

var (
	v1 = deployment("nginx:1.14.2")
	v2 = deployment("nginx:1.16.1")
)

var scenarios = []scenario{
	{name: "deployment-apply-create", record: []step{apply(v1)}},
	{name: "deployment-apply", setup: []step{apply(v1)}, record: []step{apply(v2)}},
	{name: "deployment-apply-reverts-drift", setup: []step{apply(v1), kubectl("set", "image", "deployment/web", "nginx=nginx:1.15.0")},
		record: []step{apply(v2)}},
	{name: "deployment-apply-server-side", setup: []step{apply(v1, "--server-side")}, record: []step{apply(v2, "--server-side")}},
	{name: "deployment-apply-server-side-after-restart", setup: []step{apply(v1, "--server-side"), kubectl("rollout", "restart", "deployment/web")},
		record: []step{apply(v2, "--server-side")}},
	{name: "deployment-apply-after-restart", setup: []step{apply(v1), kubectl("rollout", "restart", "deployment/web")}, record: []step{apply(v2)}},
	{name: "deployment-edit", setup: []step{apply(v1)}, record: []step{editor("s/nginx:1.14.2/nginx:1.15.0/", "edit", "deployment/web")}},
	{name: "deployment-patch", setup: []step{apply(v1)},
		record: []step{kubectl("patch", "deployment/web", "-p", `{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.15.0"}]}}}}`)}},
	{name: "deployment-set-image", setup: []step{apply(v1)}, record: []step{kubectl("set", "image", "deployment/web", "nginx=nginx:1.15.0")}},
	{name: "deployment-set-env", setup: []step{apply(v1)}, record: []step{kubectl("set", "env", "deployment/web", "-c", "nginx", "LOG_LEVEL=debug")}},
	{name: "deployment-label", setup: []step{apply(v1)}, record: []step{kubectl("label", "deployment/web", "team=payments")}},
	{name: "deployment-annotate", setup: []step{apply(v1)}, record: []step{kubectl("annotate", "deployment/web", "owner=alice")}},
	{name: "deployment-scale", setup: []step{apply(v1)}, record: []step{kubectl("scale", "deployment/web", "--replicas=5")}},
	{name: "deployment-rollout-restart", setup: []step{apply(v1)}, record: []step{kubectl("rollout", "restart", "deployment/web")}},
	{name: "deployment-rollout-undo", setup: []step{apply(v1), waitForRevisions("app=web", "1"), apply(v2), waitForRevisions("app=web", "2")},
		record: []step{kubectl("rollout", "undo", "deployment/web")}},
	{name: "deployment-replace-save-config", setup: []step{apply(v1)}, record: []step{{args: []string{"replace", "--save-config", "-f", "-"}, stdin: v2}}},
	{name: "deployment-set-last-applied", setup: []step{apply(v1)}, record: []step{{args: []string{"apply", "set-last-applied", "-f", "-"}, stdin: v2}}},
	{name: "deployment-edit-last-applied", setup: []step{apply(v1)},
		record: []step{editor("/replicas:/d", "apply", "edit-last-applied", "deployment/web")}},
	{name: "deployment-edit-by-service-account", as: "/ci-bot", setup: []step{apply(v1)},
		record: []step{editor("s/nginx:1.14.2/nginx:1.15.0/", "edit", "deployment/web")}},
	// What the horizontal pod autoscaler's writes look like.
	{name: "deployment-scale-by-controller", as: "kube-system/horizontal-pod-autoscaler", setup: []step{apply(v1)},
		record: []step{kubectl("scale", "deployment/web", "--replicas=5")}},
	{name: "statefulset-rollout-undo",
		setup: []step{apply(statefulSet("nginx:latest", true)), waitForRevisions("app=my-wonderhoy-app", "1"),
			apply(statefulSet("nginx:a-broken-version", false)), waitForRevisions("app=my-wonderhoy-app", "2")},
		record: []step{kubectl("rollout", "undo", "statefulset/my-wonderhoy-app", "--to-revision=1")}},
	{name: "statefulset-apply-after-undo",
		setup: []step{apply(statefulSet("nginx:latest", true)), waitForRevisions("app=my-wonderhoy-app", "1"),
			apply(statefulSet("nginx:a-broken-version", false)), waitForRevisions("app=my-wonderhoy-app", "2"),
			kubectl("rollout", "undo", "statefulset/my-wonderhoy-app", "--to-revision=1")},
		record: []step{apply(statefulSet("nginx:a-fixed-version", false))}},
	{name: "statefulset-scale", setup: []step{apply(statefulSet("nginx:latest", true))},
		record: []step{kubectl("scale", "statefulset/my-wonderhoy-app", "--replicas=5")}},
	{name: "daemonset-rollout-undo",
		setup: []step{apply(daemonSet("agent:1", true)), waitForRevisions("app=agent", "1"),
			apply(daemonSet("agent:2", false)), waitForRevisions("app=agent", "2")},
		record: []step{kubectl("rollout", "undo", "daemonset/agent")}},
}
