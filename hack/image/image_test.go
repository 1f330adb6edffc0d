package main

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// The server's image as make image builds it, read back from the OCI
// layout tarball: the platform that ctr images import filters on, the
// Dockerfile's user and entrypoint, and the files with their modes.
func TestArchiveHoldsTheServersImage(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "apply-hygiene")
	if err := os.WriteFile(bin, []byte("#!binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "images", "apply-hygiene.tar")
	err := run([]string{"-name", "ghcr.io/apply-hygiene/apply-hygiene:0.1.0", "-o", out,
		"-user", "65532:65532", "-entrypoint", "/apply-hygiene", "-expose", "9443/tcp",
		"-file", "/apply-hygiene=" + bin, "-file", "/etc/passwd=rootfs/etc/passwd",
		"-symlink", "/bin/sh=busybox", "-dir", "/tmp=1777", "-dir", "/home/nonroot=0700:65532:65532", "-label", "org.opencontainers.image.title=apply-hygiene"})
	if err != nil {
		t.Fatal(err)
	}
	lp := untar(t, out)
	index, err := layout.ImageIndexFromPath(lp)
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := index.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(manifest.Manifests) != 1 {
		t.Fatalf("index has %d manifests, want 1", len(manifest.Manifests))
	}
	desc := manifest.Manifests[0]
	gotDesc := fmt.Sprintf("%s %s %s/%s", desc.MediaType, desc.Annotations["io.containerd.image.name"], desc.Platform.OS, desc.Platform.Architecture)
	if want := "application/vnd.oci.image.manifest.v1+json ghcr.io/apply-hygiene/apply-hygiene:0.1.0 linux/" + runtime.GOARCH; gotDesc != want {
		t.Errorf("index entry = %q, want %q", gotDesc, want)
	}
	img, err := index.Image(desc.Digest)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	gotCfg := fmt.Sprintf("user=%s entrypoint=%q ports=%v labels=%v", cfg.Config.User, cfg.Config.Entrypoint, cfg.Config.ExposedPorts, cfg.Config.Labels)
	wantCfg := `user=65532:65532 entrypoint=["/apply-hygiene"] ports=map[9443/tcp:{}] labels=map[org.opencontainers.image.title:apply-hygiene]`
	if diff := cmp.Diff(wantCfg, gotCfg); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers = %d, %v; want 1", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rc.Close() }()
	want := []string{
		"apply-hygiene file 755 0:0",
		"bin/ dir 755 0:0",
		"bin/sh symlink→busybox 777 0:0",
		"etc/ dir 755 0:0",
		"etc/passwd file 644 0:0",
		"home/ dir 755 0:0",
		"home/nonroot/ dir 700 65532:65532",
		"tmp/ dir 1777 0:0",
	}
	if diff := cmp.Diff(want, entries(t, rc)); diff != "" {
		t.Errorf("layer entries (-want +got):\n%s", diff)
	}
}

func entries(t *testing.T, r io.Reader) []string {
	t.Helper()
	var got []string
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
		kind := map[byte]string{tar.TypeReg: "file", tar.TypeDir: "dir", tar.TypeSymlink: "symlink→" + hdr.Linkname}[hdr.Typeflag]
		mode := hdr.Mode & 0o777
		if hdr.Mode&0o1000 != 0 {
			mode += 0o1000
		}
		got = append(got, fmt.Sprintf("%s %s %o %d:%d", hdr.Name, kind, mode, hdr.Uid, hdr.Gid))
	}
}

// untar unpacks the OCI layout tarball into a directory.
func untar(t *testing.T, archive string) string {
	t.Helper()
	dir := t.TempDir()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return dir
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.FromSlash(hdr.Name))
		if hdr.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
