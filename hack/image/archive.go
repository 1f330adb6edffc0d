package main

import (
	"archive/tar"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// Annotations of the index entry: the OCI reference name, and the full
// image name that `ctr images import` tags the image with.
const (
	annotationRefName        = "org.opencontainers.image.ref.name"
	annotationContainerdName = "io.containerd.image.name"
)

// WriteArchive writes img, named name, as an OCI image layout tarball at
// out (replaced atomically).
func WriteArchive(img v1.Image, name, out string) error {
	dir, err := os.MkdirTemp("", "apply-hygiene-image-")
	if err != nil {
		return fmt.Errorf("creating the layout directory: %w", err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	lp, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("writing the image layout: %w", err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return fmt.Errorf("reading the config: %w", err)
	}
	err = lp.AppendImage(img,
		layout.WithAnnotations(map[string]string{annotationRefName: name, annotationContainerdName: name}),
		layout.WithPlatform(v1.Platform{OS: cfg.OS, Architecture: cfg.Architecture, Variant: cfg.Variant}))
	if err != nil {
		return fmt.Errorf("writing the image layout: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return fmt.Errorf("creating the output directory: %w", err)
	}
	tmp := out + ".tmp"
	if err := tarDir(dir, tmp); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, out); err != nil {
		return fmt.Errorf("writing %s: %w", out, err)
	}
	return nil
}

// tarDir writes the files under dir, relative to it, as a tar at out.
func tarDir(dir, out string) error {
	f, err := os.Create(out)
	if err != nil {
		return fmt.Errorf("creating %s: %w", out, err)
	}
	tw := tar.NewWriter(f)
	walkErr := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		hdr, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		hdr.Name, hdr.ModTime, hdr.Uid, hdr.Gid, hdr.Uname, hdr.Gname = filepath.ToSlash(rel), epoch, 0, 0, "", ""
		if d.IsDir() {
			hdr.Name += "/"
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		src, err := os.Open(p)
		if err != nil {
			return err
		}
		defer func() { _ = src.Close() }()
		_, err = io.Copy(tw, src)
		return err
	})
	closeErr := tw.Close()
	fileErr := f.Close()
	if walkErr != nil {
		return fmt.Errorf("writing %s: %w", out, walkErr)
	}
	if closeErr != nil {
		return fmt.Errorf("writing %s: %w", out, closeErr)
	}
	if fileErr != nil {
		return fmt.Errorf("writing %s: %w", out, fileErr)
	}
	return nil
}
