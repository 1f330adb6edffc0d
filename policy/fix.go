package policy

import "strings"

// fixMarker introduces the command that fixes a finding in the bundled
// rules' messages (docs/rules.md): "… with: kubectl …".
const fixMarker = "with: kubectl "

// FixCommand returns the kubectl command that a rule's message ends with:
// the text after the last "with: " that is followed by "kubectl ", up to
// the first ", " or the end, without a final full stop; a single-quoted
// argument (the JSON patch of an orphaned field) is kept whole. It returns
// "" when the message names no such command: the messages that suggest a
// different procedure (last-applied-too-large's server-side apply) and
// user policies' messages that do not follow the convention.
//
// Some commands keep a placeholder for what only the user knows, e.g.
// "kubectl apply set-last-applied -f <manifest> --create-annotation".
func FixCommand(message string) string {
	i := strings.LastIndex(message, fixMarker)
	if i < 0 {
		return ""
	}
	return commandPrefix(message[i+len("with: "):])
}

// commandPrefix returns s up to the first ", " outside single quotes,
// without a final "." outside them.
func commandPrefix(s string) string {
	quoted := false
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && !quoted:
			i++ // the shell's \' between two quoted parts
		case s[i] == '\'':
			quoted = !quoted
		case !quoted && strings.HasPrefix(s[i:], ", "):
			return strings.TrimSuffix(s[:i], ".")
		}
	}
	if quoted {
		return s
	}
	return strings.TrimSuffix(s, ".")
}
