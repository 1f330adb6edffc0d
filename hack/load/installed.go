package main

import (
	"context"
	"crypto/x509"
	"embed"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/controlplane"
)

// peerServerPolicies is the wrapper that makes OPA's server answer an
// AdmissionReview from the peer's decision.
//
//go:embed peer/opa/*.rego
var peerServerPolicies embed.FS

// chartGoMemLimit is what the chart sets GOMEMLIMIT to with its default
// resources.limits.memory (256Mi): 80 % of it, in bytes.
const chartGoMemLimit = "214748364"

// process is a server of -installed: a process of its own.
type process struct {
	reference
	pid int
}

// installed is the three processes of -installed and what stops them.
type installed struct {
	caPEM     []byte
	processes []process
	stops     []func() error
	pprofURL  string
}

func (in *installed) stop() error {
	var errs []error
	for i := len(in.stops) - 1; i >= 0; i-- {
		errs = append(errs, in.stops[i]())
	}
	return errors.Join(errs...)
}

func (in *installed) references() []reference {
	out := make([]reference, 0, len(in.processes))
	for _, p := range in.processes {
		out = append(out, p.reference)
	}
	return out
}

// runInstalled measures the built binaries side by side: the no-op floor
// (this program, -serve-floor), OPA's own server with the peer's Rego,
// and apply-hygiene's server as the chart runs it against a local control
// plane.
func runInstalled(ctx context.Context, o Options) (err error) {
	if o.Workers <= 0 || o.Round <= 0 || o.Rounds <= 0 || o.Variants <= 0 || o.FixedRate < 0 || (o.FixedRate > 0 && o.FixedDuration <= 0) {
		return errors.New("-workers, -round, -rounds, -variants and -fixed-duration must be positive, -fixed-rate not negative")
	}
	reviews, err := readReviews(o.Reviews)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "hack-load-installed-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	in, err := startInstalled(ctx, o, reviews, dir)
	if in != nil {
		defer func() { err = errors.Join(err, in.stop()) }()
	}
	if err != nil {
		return err
	}
	for _, p := range in.processes {
		fmt.Printf("%s: %s (pid %d)\n", p.name, p.url, p.pid)
	}
	sent, err := sideBySide(ctx, os.Stdout, &references{caPEM: in.caPEM, servers: in.references()}, reviews,
		sideOptions{workers: o.Workers, round: o.Round, rounds: o.Rounds, fixedRate: o.FixedRate,
			fixedDuration: o.FixedDuration, warmup: 200, variants: o.Variants, strict: o.ShadowVerify})
	if err != nil {
		return err
	}
	return soak(ctx, o, in, reviews, sent)
}

// startInstalled builds and starts the three servers; the returned
// installed stops what started, also on an error.
func startInstalled(ctx context.Context, o Options, reviews []review, dir string) (*installed, error) {
	progress := func(msg string) { fmt.Println(time.Now().Format(time.TimeOnly), msg) }
	certs, err := newSelfSigned()
	if err != nil {
		return nil, err
	}
	certFile, keyFile, err := certs.writeFiles(dir)
	if err != nil {
		return nil, err
	}
	in := &installed{}
	progress("starting the no-op floor")
	floorProc, err := startFloor(ctx, certs, certFile, keyFile, dir)
	if err != nil {
		return in, err
	}
	in.stops = append(in.stops, floorProc.stop)
	progress("building and starting OPA's server")
	opaProc, err := startOPA(ctx, certs, certFile, keyFile, dir)
	if err != nil {
		return in, err
	}
	in.stops = append(in.stops, opaProc.stop)
	// The chart's GOMEMLIMIT, for the server only: the variable is read
	// by a process when it starts.
	serverArgs := []string{"--log-level=info"}
	if o.ShadowVerify {
		serverArgs = append(serverArgs, "--shadow-verify")
	}
	if o.ProfileDir != "" {
		port, err := freePort()
		if err != nil {
			return in, err
		}
		serverArgs = append(serverArgs, fmt.Sprintf("--pprof-bind-address=127.0.0.1:%d", port))
		in.pprofURL = fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/", port)
	}
	binary := o.ServerBinary
	if binary == "" {
		progress("building apply-hygiene as the image does")
		if binary, err = buildServer(ctx, dir); err != nil {
			return in, err
		}
	}
	if err := os.Setenv("GOMEMLIMIT", chartGoMemLimit); err != nil {
		return in, err
	}
	c, err := startCluster(ctx, progress, binary, serverArgs...)
	_ = os.Unsetenv("GOMEMLIMIT")
	if err != nil {
		return in, err
	}
	in.stops = append(in.stops, c.stop)
	for _, r := range reviews {
		if err := c.createNamespace(ctx, r.namespace, nil); err != nil {
			return in, err
		}
	}
	in.caPEM = append(append([]byte{}, certs.caPEM...), c.cp.CAPEM()...)
	in.processes = []process{
		{reference{floorName, floorProc.url}, floorProc.pid},
		{reference{peerName, opaProc.url}, opaProc.pid},
		{reference{hygieneName, c.url("/validate")}, c.hook.Replicas()[0].Pid()},
	}
	return in, nil
}

// child is a server process this program started.
type child struct {
	url  string
	pid  int
	stop func() error
}

// startChild starts args with its output in logPath and waits until port
// answers a TLS handshake with a certificate of caPEM.
func startChild(ctx context.Context, args []string, logPath string, port int, caPEM []byte) (*child, error) {
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		return nil, fmt.Errorf("starting %s: %w", filepath.Base(args[0]), err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait(); _ = log.Close() }()
	// The servers end on SIGINT with an exit status that is no failure
	// of the measure: only one that must be killed is.
	stop := func() error {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case err := <-exited:
			_ = err
			return nil
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			return fmt.Errorf("%s did not stop on SIGINT: %w", filepath.Base(args[0]), <-exited)
		}
	}
	if err := waitListening(ctx, port, caPEM, exited); err != nil {
		return nil, errors.Join(fmt.Errorf("%s (log %s): %w", filepath.Base(args[0]), logPath, err), stop())
	}
	return &child{url: fmt.Sprintf("https://127.0.0.1:%d/", port), pid: cmd.Process.Pid, stop: stop}, nil
}

// startFloor runs this program as the no-op floor server.
func startFloor(ctx context.Context, certs *selfSigned, certFile, keyFile, dir string) (*child, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	args := []string{self, "-serve-floor", "127.0.0.1:" + strconv.Itoa(port), "-tls-cert", certFile, "-tls-key", keyFile}
	return startChild(ctx, args, filepath.Join(dir, "floor.log"), port, certs.caPEM)
}

// startOPA builds OPA's command at the version of go.mod and runs its
// server with TLS, its default logging (a line per request and answer at
// info), telemetry off, and the peer's Rego with the wrapper that answers
// an AdmissionReview at POST /.
func startOPA(ctx context.Context, certs *selfSigned, certFile, keyFile, dir string) (*child, error) {
	opa, err := buildOPA(ctx)
	if err != nil {
		return nil, err
	}
	policyDir := filepath.Join(dir, "policies")
	if err := writePolicies(policyDir); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	args := []string{opa, "run", "--server", "--addr", "127.0.0.1:" + strconv.Itoa(port),
		"--tls-cert-file", certFile, "--tls-private-key-file", keyFile, "--disable-telemetry", policyDir}
	return startChild(ctx, args, filepath.Join(dir, "opa.log"), port, certs.caPEM)
}

// writePolicies writes the peer's Rego and the server's wrapper to dir.
func writePolicies(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for _, fsys := range []embed.FS{peerPolicies, peerServerPolicies} {
		paths, err := fs.Glob(fsys, "peer/*.rego")
		if err != nil {
			return err
		}
		more, err := fs.Glob(fsys, "peer/opa/*.rego")
		if err != nil {
			return err
		}
		for _, p := range append(paths, more...) {
			src, err := fsys.ReadFile(p)
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dir, strings.ReplaceAll(p, "/", "_")), src, 0o600); err != nil {
				return err
			}
		}
	}
	return nil
}

// buildOPA installs OPA's command at go.mod's version into the user's
// cache directory (once) and returns its path.
func buildOPA(ctx context.Context) (string, error) {
	root, err := controlplane.RepoRoot()
	if err != nil {
		return "", err
	}
	list := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Version}}", "github.com/open-policy-agent/opa")
	list.Dir = root
	out, err := list.Output()
	if err != nil {
		return "", fmt.Errorf("reading OPA's version from go.mod: %w", err)
	}
	version := strings.TrimSpace(string(out))
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(cache, "apply-hygiene-load", "opa-"+version)
	if _, err := os.Stat(filepath.Join(bin, "opa")); err == nil {
		return filepath.Join(bin, "opa"), nil
	}
	install := exec.CommandContext(ctx, "go", "install", "github.com/open-policy-agent/opa@"+version)
	install.Dir = os.TempDir() // outside this module: OPA's own go.mod decides its dependencies
	install.Env = append(os.Environ(), "GOBIN="+bin)
	if msg, err := install.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building OPA %s: %w\n%s", version, err, msg)
	}
	return filepath.Join(bin, "opa"), nil
}

// buildServer builds cmd/apply-hygiene into dir as the Dockerfile does.
func buildServer(ctx context.Context, dir string) (string, error) {
	root, err := controlplane.RepoRoot()
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "apply-hygiene")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-s -w", "-o", out, "./cmd/apply-hygiene")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building apply-hygiene: %w\n%s", err, msg)
	}
	return out, nil
}

// writeFiles writes the serving certificate and its key as PEM files.
func (s *selfSigned) writeFiles(dir string) (certFile, keyFile string, err error) {
	keyDER, err := x509.MarshalPKCS8PrivateKey(s.cert.PrivateKey)
	if err != nil {
		return "", "", fmt.Errorf("encoding the serving key: %w", err)
	}
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.cert.Certificate[0]})
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		return "", "", err
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
	return certFile, keyFile, os.WriteFile(keyFile, keyPEM, 0o600)
}
