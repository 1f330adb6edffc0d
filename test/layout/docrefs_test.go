package layout

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// mdRef is a Markdown file named in a comment: a repository URL's path or
// a relative path.
var mdRef = regexp.MustCompile(`(?:blob/main/)?([A-Za-z0-9_./-]+\.md)\b`)

// TestDocCommentsCiteFilesInTheRepository fails when a Go comment names a
// Markdown file that is not in the repository: a reader must be able to
// follow every reference. A name is looked up beside the Go file, then
// from the module root, then under docs/.
func TestDocCommentsCiteFilesInTheRepository(t *testing.T) {
	root := "../.."
	out, err := exec.CommandContext(t.Context(), "git", "-C", root, "ls-files", "*.go").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	files := strings.Fields(string(out))
	if len(files) < 100 {
		t.Fatalf("git ls-files listed %d Go files; want the whole module", len(files))
	}
	for _, file := range files {
		f, err := os.Open(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 1<<16), 1<<22)
		for line := 1; sc.Scan(); line++ {
			text := strings.TrimSpace(sc.Text())
			if !strings.HasPrefix(text, "//") {
				continue
			}
			for _, m := range mdRef.FindAllStringSubmatch(text, -1) {
				if !cited(root, filepath.Dir(file), m[1]) {
					t.Errorf("%s:%d cites %s, which is not in the repository", file, line, m[1])
				}
			}
		}
		_ = f.Close()
	}
}

// cited reports whether name resolves to a file beside dir, at the module
// root or under docs/.
func cited(root, dir, name string) bool {
	for _, p := range []string{filepath.Join(root, dir, name), filepath.Join(root, name), filepath.Join(root, "docs", name)} {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}
