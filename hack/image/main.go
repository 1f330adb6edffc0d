package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// listFlag is a flag that may be given more than once.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	*l = append(*l, v)
	return nil
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	name := fs.String("name", "", "image name, e.g. ghcr.io/apply-hygiene/apply-hygiene:0.1.0 (required)")
	out := fs.String("o", "", "output OCI layout tarball (required)")
	user := fs.String("user", "", "user of the config, e.g. 65532:65532")
	workdir := fs.String("workdir", "", "working directory of the config")
	var entrypoint, files, links, dirs, env, labels, ports listFlag
	fs.Var(&entrypoint, "entrypoint", "entrypoint argument (repeat for each)")
	fs.Var(&files, "file", "IMAGE_PATH=LOCAL_FILE to copy (repeat)")
	fs.Var(&links, "symlink", "IMAGE_PATH=TARGET (repeat)")
	fs.Var(&dirs, "dir", "IMAGE_PATH=OCTAL_MODE[:UID:GID], an empty directory (repeat)")
	fs.Var(&env, "env", "KEY=VALUE of the config (repeat)")
	fs.Var(&labels, "label", "KEY=VALUE of the config (repeat)")
	fs.Var(&ports, "expose", "exposed port, e.g. 9443/tcp (repeat)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *name == "" || *out == "" {
		return errors.New("-name and -o are required")
	}
	spec := Spec{Entrypoint: entrypoint, User: *user, WorkingDir: *workdir, Env: env, ExposedPorts: ports}
	if err := addEntries(&spec, files, links, dirs); err != nil {
		return err
	}
	if len(labels) > 0 {
		spec.Labels = map[string]string{}
		for _, l := range labels {
			k, v, ok := strings.Cut(l, "=")
			if !ok {
				return fmt.Errorf("-label %q: want KEY=VALUE", l)
			}
			spec.Labels[k] = v
		}
	}
	img, err := Build(spec)
	if err != nil {
		return err
	}
	return WriteArchive(img, *name, *out)
}

// addEntries parses the -file, -symlink and -dir flags into spec.
func addEntries(spec *Spec, files, links, dirs []string) error {
	for _, f := range files {
		p, src, ok := strings.Cut(f, "=")
		if !ok {
			return fmt.Errorf("-file %q: want IMAGE_PATH=LOCAL_FILE", f)
		}
		spec.Entries = append(spec.Entries, Entry{Path: p, Source: src})
	}
	for _, l := range links {
		p, target, ok := strings.Cut(l, "=")
		if !ok {
			return fmt.Errorf("-symlink %q: want IMAGE_PATH=TARGET", l)
		}
		spec.Entries = append(spec.Entries, Entry{Path: p, Link: target})
	}
	for _, d := range dirs {
		e, err := parseDir(d)
		if err != nil {
			return err
		}
		spec.Entries = append(spec.Entries, e)
	}
	return nil
}

// parseDir parses a -dir flag: IMAGE_PATH=OCTAL_MODE[:UID:GID].
func parseDir(d string) (Entry, error) {
	p, spec, ok := strings.Cut(d, "=")
	if !ok {
		return Entry{}, fmt.Errorf("-dir %q: want IMAGE_PATH=OCTAL_MODE[:UID:GID]", d)
	}
	parts := strings.Split(spec, ":")
	if len(parts) != 1 && len(parts) != 3 {
		return Entry{}, fmt.Errorf("-dir %q: want IMAGE_PATH=OCTAL_MODE[:UID:GID]", d)
	}
	m, err := strconv.ParseInt(parts[0], 8, 64)
	if err != nil {
		return Entry{}, fmt.Errorf("-dir %q: mode: %w", d, err)
	}
	e := Entry{Path: p, Mode: m}
	if len(parts) == 3 {
		if e.UID, err = strconv.Atoi(parts[1]); err != nil {
			return Entry{}, fmt.Errorf("-dir %q: uid: %w", d, err)
		}
		if e.GID, err = strconv.Atoi(parts[2]); err != nil {
			return Entry{}, fmt.Errorf("-dir %q: gid: %w", d, err)
		}
	}
	return e, nil
}
