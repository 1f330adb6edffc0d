package policy

import (
	"embed"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// bundled holds the bundled rules and their tests.
//
//go:embed rules/*.rego
var bundled embed.FS

// Sources are the user policies of a policy set; the bundled rules are
// always part of it.
type Sources struct {
	// Dirs are directories whose *.rego files are policy modules: not
	// *_test.rego, not hidden, not in subdirectories. A Kubernetes
	// ConfigMap mounted as a volume is such a directory.
	Dirs []string
	// Modules are policy modules from memory, by name; the name appears
	// in errors as the file.
	Modules map[string]string
}

func (s Sources) clone() Sources {
	return Sources{Dirs: slices.Clone(s.Dirs), Modules: maps.Clone(s.Modules)}
}

// moduleFile is the text of one module, named for error messages.
type moduleFile struct {
	name string
	text string
}

// bundledModules returns the bundled rules; with tests, their tests too.
func bundledModules(tests bool) ([]moduleFile, error) {
	entries, err := fs.ReadDir(bundled, "rules")
	if err != nil {
		return nil, fmt.Errorf("reading bundled rules: %w", err)
	}
	var out []moduleFile
	for _, entry := range entries {
		name := path.Join("rules", entry.Name())
		if strings.HasSuffix(name, "_test.rego") && !tests {
			continue
		}
		text, err := fs.ReadFile(bundled, name)
		if err != nil {
			return nil, fmt.Errorf("reading bundled rule %s: %w", name, err)
		}
		out = append(out, moduleFile{name: name, text: string(text)})
	}
	return out, nil
}

// readSources returns the user modules of src, sorted by name. Files that
// cannot be read are returned as problems.
func readSources(src Sources) ([]moduleFile, []Problem) {
	var out []moduleFile
	var problems []Problem
	for _, dir := range src.Dirs {
		files, err := readDir(dir)
		if err != nil {
			problems = append(problems, Problem{File: dir, Message: err.Error()})
		}
		out = append(out, files...)
	}
	for _, name := range slices.Sorted(maps.Keys(src.Modules)) {
		out = append(out, moduleFile{name: name, text: src.Modules[name]})
	}
	return out, problems
}

// isModuleFile reports whether a directory entry is a policy module.
func isModuleFile(name string) bool {
	return strings.HasSuffix(name, ".rego") && !strings.HasSuffix(name, "_test.rego") && !strings.HasPrefix(name, ".")
}

func readDir(dir string) ([]moduleFile, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading policy directory: %w", err)
	}
	var out []moduleFile
	for _, entry := range entries {
		if !isModuleFile(entry.Name()) {
			continue
		}
		name := filepath.Join(dir, entry.Name())
		info, err := os.Stat(name) // follows ConfigMap symlinks
		if err != nil || info.IsDir() {
			continue
		}
		text, err := os.ReadFile(name)
		if err != nil {
			return out, fmt.Errorf("reading policy file: %w", err)
		}
		out = append(out, moduleFile{name: name, text: string(text)})
	}
	return out, nil
}
