package node

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// localRegistry is the node's stand-in for docker.io, in memory on
// loopback: containerd resolves docker.io's images there and nowhere
// else, so a Pod whose image is pulled every time (a :latest tag) runs
// what Publish put there.
type localRegistry struct {
	srv  *http.Server
	addr string
}

func startRegistry() (*localRegistry, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening for the local registry: %w", err)
	}
	srv := &http.Server{Handler: registry.New(registry.Logger(log.New(io.Discard, "", 0))), ReadHeaderTimeout: 10 * 1e9}
	go func() { _ = srv.Serve(ln) }()
	return &localRegistry{srv: srv, addr: ln.Addr().String()}, nil
}

func (r *localRegistry) close() error { return r.srv.Close() }

// Publish pushes the image of an OCI layout tarball (make image) to the
// node's docker.io as repoTag, e.g. library/nginx:latest.
func (n *Node) Publish(ctx context.Context, tarball, repoTag string) error {
	dir, err := os.MkdirTemp("", "apply-hygiene-publish-")
	if err != nil {
		return fmt.Errorf("creating a directory to unpack %s: %w", tarball, err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	if err := untar(tarball, dir); err != nil {
		return err
	}
	index, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return fmt.Errorf("reading %s: %w", tarball, err)
	}
	manifest, err := index.IndexManifest()
	if err != nil || len(manifest.Manifests) != 1 {
		return fmt.Errorf("reading %s: want one image: %w", tarball, err)
	}
	img, err := index.Image(manifest.Manifests[0].Digest)
	if err != nil {
		return fmt.Errorf("reading %s: %w", tarball, err)
	}
	ref, err := name.ParseReference(n.registry.addr+"/"+repoTag, name.Insecure)
	if err != nil {
		return fmt.Errorf("naming %s: %w", repoTag, err)
	}
	if err := remote.Write(ref, img, remote.WithContext(ctx)); err != nil {
		return fmt.Errorf("publishing %s as %s: %w", tarball, repoTag, err)
	}
	return nil
}

// untar unpacks a tarball of regular files and directories into dir.
func untar(tarball, dir string) error {
	f, err := os.Open(tarball)
	if err != nil {
		return fmt.Errorf("opening %s: %w", tarball, err)
	}
	defer func() { _ = f.Close() }()
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", tarball, err)
		}
		p := filepath.Join(dir, filepath.FromSlash(hdr.Name))
		if !strings.HasPrefix(p, dir+string(filepath.Separator)) {
			return fmt.Errorf("reading %s: entry %q leaves the directory", tarball, hdr.Name)
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(p, 0o755)
		case tar.TypeReg:
			err = writeEntry(tr, p)
		}
		if err != nil {
			return fmt.Errorf("unpacking %s: %w", tarball, err)
		}
	}
}

func writeEntry(r io.Reader, path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, r)
	return errors.Join(err, f.Close())
}
