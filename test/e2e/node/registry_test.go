package node_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
)

// No pull leaves the machine: a Pod whose image is nowhere on the node
// fails against loopback, docker.io's at the node's local registry and
// every other registry's at 127.0.0.1:1, never against the real one.
// (containerd 1.6 ignored a hosts.toml without a [host] table and went to
// registry-1.docker.io and quay.io.)
func TestImagePullsStayOnTheMachine(t *testing.T) {
	installed(t)
	f := framework.New(t)
	k := f.Kubectl
	tests := map[string]struct {
		image string
		want  string
	}{
		"docker.io": {image: "nginx:not-published", want: `failed to resolve reference "docker.io/library/nginx:not-published": docker.io/library/nginx:not-published: not found`},
		"quay.io":   {image: "quay.io/apply-hygiene/absent:1", want: `Head "https://127.0.0.1:1/v2/apply-hygiene/absent/manifests/1?ns=quay.io": dial tcp 127.0.0.1:1: connect: connection refused`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			pod := strings.ReplaceAll(name, ".", "-")
			k.Run(t, "run", pod, "--image="+tc.image, "--restart=Never").MustSucceed(t)
			var message string
			framework.Eventually(t, time.Minute, "the pull of "+tc.image+" to fail", func(context.Context) (bool, error) {
				res := k.Run(t, "get", "events", "--field-selector=involvedObject.name="+pod+",reason=Failed", "-o",
					`jsonpath={range .items[*]}{.message}{"\n"}{end}`)
				for _, line := range res.StdoutLines() {
					if strings.HasPrefix(line, "Failed to pull image") {
						message = line
						return true, nil
					}
				}
				return false, nil
			})
			if !strings.Contains(message, tc.want) {
				t.Errorf("pull failure:\n%s\nwant it to contain\n%s", message, tc.want)
			}
			if hosts := regexp.MustCompile(`https?://[^/"]+`).FindAllString(message, -1); len(hosts) > 0 {
				for _, h := range hosts {
					if !strings.HasPrefix(h, "https://127.0.0.1:") && !strings.HasPrefix(h, "http://127.0.0.1:") {
						t.Errorf("the pull reached %s", h)
					}
				}
			}
		})
	}
}
