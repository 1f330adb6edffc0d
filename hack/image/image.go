package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"path"
	"runtime"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Entry is one path of the image's only layer.
type Entry struct {
	// Path is the absolute path in the image.
	Path string
	// Source is the file on this machine to copy (its mode is kept).
	// Empty for a directory or a symlink.
	Source string
	// Link, when set, makes Path a symlink to it.
	Link string
	// Mode is the permission of a directory (Source and Link empty).
	Mode int64
	// UID and GID own the entry. Default: root.
	UID, GID int
}

// Spec describes an image.
type Spec struct {
	// Entries are the files, directories and symlinks of the layer; parent
	// directories are added with mode 0755.
	Entries []Entry
	// Entrypoint is the config's entrypoint.
	Entrypoint []string
	// User is the config's user, e.g. 65532:65532. Default: root.
	User string
	// WorkingDir is the config's working directory.
	WorkingDir string
	// Env is the config's environment, KEY=VALUE.
	Env []string
	// Labels are the config's labels.
	Labels map[string]string
	// ExposedPorts are the config's ports, e.g. 9443/tcp.
	ExposedPorts []string
	// Platform is the image's os/arch. Default: linux and this machine's
	// architecture. `ctr images import` drops an image without one.
	Platform v1.Platform
}

// epoch dates every layer entry and the image, for reproducible images.
var epoch = time.Unix(0, 0).UTC()

// Build assembles the image: an OCI manifest, its config, and one
// gzip-compressed layer.
func Build(spec Spec) (v1.Image, error) {
	layerTar, err := layerTar(spec.Entries)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("making the layer: %w", err)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.AppendLayers(img, layer)
	if err != nil {
		return nil, fmt.Errorf("adding the layer: %w", err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("reading the config: %w", err)
	}
	cfg = cfg.DeepCopy()
	platform := spec.Platform
	if platform.OS == "" {
		platform = v1.Platform{OS: "linux", Architecture: runtime.GOARCH}
	}
	cfg.OS, cfg.Architecture, cfg.Variant = platform.OS, platform.Architecture, platform.Variant
	cfg.Created = v1.Time{Time: epoch}
	cfg.Config.Entrypoint = spec.Entrypoint
	cfg.Config.User = spec.User
	cfg.Config.WorkingDir = spec.WorkingDir
	cfg.Config.Env = spec.Env
	cfg.Config.Labels = spec.Labels
	if len(spec.ExposedPorts) > 0 {
		cfg.Config.ExposedPorts = map[string]struct{}{}
		for _, p := range spec.ExposedPorts {
			cfg.Config.ExposedPorts[p] = struct{}{}
		}
	}
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		return nil, fmt.Errorf("setting the config: %w", err)
	}
	return img, nil
}

// layerTar writes the entries, and their parent directories, as a tar
// sorted by path.
func layerTar(entries []Entry) ([]byte, error) {
	byPath := map[string]Entry{}
	for _, e := range entries {
		p := path.Clean("/" + e.Path)
		if _, dup := byPath[p]; dup {
			return nil, fmt.Errorf("path %s given twice", p)
		}
		e.Path = p
		byPath[p] = e
		for dir := path.Dir(p); dir != "/"; dir = path.Dir(dir) {
			if _, ok := byPath[dir]; !ok {
				byPath[dir] = Entry{Path: dir, Mode: 0o755}
			}
		}
	}
	paths := make([]string, 0, len(byPath))
	for p := range byPath {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, p := range paths {
		if err := writeEntry(tw, byPath[p]); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("closing the layer: %w", err)
	}
	return buf.Bytes(), nil
}

func writeEntry(tw *tar.Writer, e Entry) error {
	hdr := &tar.Header{Name: strings.TrimPrefix(e.Path, "/"), ModTime: epoch, Format: tar.FormatPAX, Uid: e.UID, Gid: e.GID}
	var data []byte
	switch {
	case e.Link != "":
		hdr.Typeflag, hdr.Linkname, hdr.Mode = tar.TypeSymlink, e.Link, 0o777
	case e.Source != "":
		fi, err := os.Stat(e.Source)
		if err != nil {
			return fmt.Errorf("reading %s for %s: %w", e.Source, e.Path, err)
		}
		if data, err = os.ReadFile(e.Source); err != nil {
			return fmt.Errorf("reading %s for %s: %w", e.Source, e.Path, err)
		}
		hdr.Typeflag, hdr.Mode, hdr.Size = tar.TypeReg, int64(fi.Mode().Perm()), int64(len(data))
	default:
		hdr.Typeflag, hdr.Name, hdr.Mode = tar.TypeDir, hdr.Name+"/", e.Mode
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("writing %s: %w", e.Path, err)
	}
	if _, err := tw.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", e.Path, err)
	}
	return nil
}
