package node

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Rules as iptables -S prints them; the node deletes the jumps into its
// chains by passing the split rule back to iptables -D.
func TestSplitRule(t *testing.T) {
	tests := map[string]struct {
		line string
		want []string
		jump bool
	}{
		"a jump with a quoted comment": {
			line: `-A INPUT -m comment --comment "kubernetes health check service ports" -j KUBE-NODEPORTS`,
			want: []string{"-A", "INPUT", "-m", "comment", "--comment", "kubernetes health check service ports", "-j", "KUBE-NODEPORTS"},
			jump: true,
		},
		"a comment with an escaped quote": {
			line: `-A OUTPUT -m comment --comment "say \"hi\"" -j KUBE-FIREWALL`,
			want: []string{"-A", "OUTPUT", "-m", "comment", "--comment", `say "hi"`, "-j", "KUBE-FIREWALL"},
			jump: true,
		},
		"a chain of the machine's own": {
			line: `-A FORWARD -i eth0 -j ACCEPT`,
			want: []string{"-A", "FORWARD", "-i", "eth0", "-j", "ACCEPT"},
		},
		"a new chain": {
			line: `-N KUBE-SERVICES`,
			want: []string{"-N", "KUBE-SERVICES"},
		},
	}
	added := map[string]bool{"KUBE-NODEPORTS": true, "KUBE-FIREWALL": true, "KUBE-SERVICES": true}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := splitRule(tc.line)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("splitRule (-want +got):\n%s", diff)
			}
			if jump := jumpsTo(got, added); jump != tc.jump {
				t.Errorf("jumpsTo = %v, want %v", jump, tc.jump)
			}
		})
	}
}
