package node

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// iptablesCommands are the IPv4 and IPv6 front ends.
var iptablesCommands = []string{"iptables", "ip6tables"}

// listChains returns every chain of iptablesTables, as
// "command/table/chain".
func listChains() (map[string]bool, error) {
	chains := map[string]bool{}
	for _, cmd := range iptablesCommands {
		for _, table := range iptablesTables {
			rules, err := iptablesRules(cmd, table)
			if err != nil {
				return nil, err
			}
			for _, r := range rules {
				if f := strings.Fields(r); len(f) >= 2 && (f[0] == "-N" || f[0] == "-P") {
					chains[cmd+"/"+table+"/"+f[1]] = true
				}
			}
		}
	}
	return chains, nil
}

func iptablesRules(cmd, table string) ([]string, error) {
	out, err := exec.Command(cmd, "-w", "-t", table, "-S").CombinedOutput()
	if err != nil {
		// A table the kernel lacks (raw on some kernels) has no chains.
		if strings.Contains(string(out), "does not exist") || strings.Contains(string(out), "Table does not exist") {
			return nil, nil
		}
		return nil, fmt.Errorf("%s -t %s -S: %w: %s", cmd, table, err, out)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n"), nil
}

// removeChains runs kube-proxy --cleanup, then deletes every rule that
// jumps to a chain the node added and those chains (the kubelet's
// KUBE-FIREWALL, KUBE-KUBELET-CANARY, … and whatever kube-proxy left).
func (h *hostState) removeChains(binDir string) error {
	var errs []error
	// It also tries IPVS and nftables, which this machine may lack, and
	// fails for them; what it leaves in iptables is removed below.
	_ = exec.Command(filepath.Join(binDir, "kube-proxy"), "--cleanup").Run()
	for _, cmd := range iptablesCommands {
		for _, table := range iptablesTables {
			errs = append(errs, h.removeTableChains(cmd, table))
		}
	}
	return errors.Join(errs...)
}

func (h *hostState) removeTableChains(cmd, table string) error {
	rules, err := iptablesRules(cmd, table)
	if err != nil {
		return err
	}
	added := map[string]bool{}
	for _, r := range rules {
		if f := splitRule(r); len(f) >= 2 && f[0] == "-N" && !h.Chains[cmd+"/"+table+"/"+f[1]] {
			added[f[1]] = true
		}
	}
	if len(added) == 0 {
		return nil
	}
	var errs []error
	for _, r := range rules {
		f := splitRule(r)
		if len(f) < 2 || f[0] != "-A" || added[f[1]] || !jumpsTo(f, added) {
			continue
		}
		args := append([]string{"-w", "-t", table, "-D"}, f[1:]...)
		if out, err := exec.Command(cmd, args...).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("%s %s: %w: %s", cmd, strings.Join(args, " "), err, out))
		}
	}
	for _, op := range []string{"-F", "-X"} {
		for chain := range added {
			if out, err := exec.Command(cmd, "-w", "-t", table, op, chain).CombinedOutput(); err != nil {
				errs = append(errs, fmt.Errorf("%s -t %s %s %s: %w: %s", cmd, table, op, chain, err, out))
			}
		}
	}
	return errors.Join(errs...)
}

func jumpsTo(rule []string, chains map[string]bool) bool {
	for i := 0; i+1 < len(rule); i++ {
		if (rule[i] == "-j" || rule[i] == "-g") && chains[rule[i+1]] {
			return true
		}
	}
	return false
}

// splitRule splits a line of iptables -S into arguments; iptables quotes
// an argument with spaces (a --comment) in double quotes.
func splitRule(line string) []string {
	var args []string
	var cur strings.Builder
	quoted, inArg := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\\' && quoted && i+1 < len(line):
			i++
			cur.WriteByte(line[i])
		case c == '"':
			quoted, inArg = !quoted, true
		case c == ' ' && !quoted:
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteByte(c)
			inArg = true
		}
	}
	if inArg {
		args = append(args, cur.String())
	}
	return args
}
