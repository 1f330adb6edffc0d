// Command cluster starts and stops the local control plane that `make
// cluster-up`, `make demo` and `make dev-up` use.
//
//	cluster up [--webhook]   start it in the background (no-op if it runs)
//	                         and print the export line for its kubeconfig;
//	                         --webhook also installs apply-hygiene: the chart
//	                         in url mode and the server as a local process
//	                         (make dev-up)
//	cluster up --node        start it with a real node instead (root; make
//	                         cluster-up NODE=1): containerd, kubelet,
//	                         kube-scheduler and kube-proxy, with the images
//	                         of make image imported (hack/node)
//	cluster down             stop it and remove its directory
//	cluster run [--webhook|--node]  run it in the foreground until Ctrl-C
//
// The state lives in .cache/cluster of the repository, or in
// $APPLY_HYGIENE_CLUSTER_DIR: kubeconfig (admin), pid (the supervising
// process), with cluster.log beside it.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/apply-hygiene/apply-hygiene/hack/node"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/controlplane"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/devenv"
)

func main() {
	webhook := len(os.Args) == 3 && os.Args[2] == "--webhook"
	withNode := len(os.Args) == 3 && os.Args[2] == "--node"
	if len(os.Args) != 2 && !webhook && !withNode {
		fmt.Fprintln(os.Stderr, "usage: cluster up|down|run [--webhook|--node]")
		os.Exit(2)
	}
	dir, err := stateDir()
	if err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		os.Exit(1)
	}
	st := state{dir: dir, webhook: webhook, node: withNode}
	switch os.Args[1] {
	case "up":
		err = st.up()
	case "down":
		err = st.down()
	case "run":
		err = st.run()
	default:
		err = fmt.Errorf("unknown command %q: want up, down or run", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		os.Exit(1)
	}
}

func stateDir() (string, error) {
	if dir := os.Getenv("APPLY_HYGIENE_CLUSTER_DIR"); dir != "" {
		return filepath.Abs(dir)
	}
	root, err := controlplane.RepoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, ".cache", "cluster"), nil
}

// state is the on-disk record of the background control plane.
type state struct {
	dir     string
	webhook bool
	node    bool
}

func (s state) kubeconfig() string { return filepath.Join(s.dir, "kubeconfig") }
func (s state) pidFile() string    { return filepath.Join(s.dir, "pid") }
func (s state) logFile() string    { return s.dir + ".log" }

// pid returns the supervisor's pid if it is alive.
func (s state) pid() (int, bool) {
	data, err := os.ReadFile(s.pidFile())
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return 0, false
	}
	return pid, syscall.Kill(pid, 0) == nil
}

func (s state) up() error {
	if _, alive := s.pid(); alive {
		fmt.Println("# the local control plane is already running")
		fmt.Printf("export KUBECONFIG=%s\n", s.kubeconfig())
		return nil
	}
	// The pid file of a supervisor that was killed would read as ready.
	if err := os.Remove(s.pidFile()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing the stale %s: %w", s.pidFile(), err)
	}
	if err := os.MkdirAll(filepath.Dir(s.logFile()), 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", filepath.Dir(s.logFile()), err)
	}
	log, err := os.Create(s.logFile())
	if err != nil {
		return fmt.Errorf("creating log: %w", err)
	}
	defer func() { _ = log.Close() }()
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding own executable: %w", err)
	}
	args := []string{"run"}
	if s.webhook {
		args = append(args, "--webhook")
	}
	if s.node {
		args = append(args, "--node")
	}
	cmd := exec.Command(self, args...)
	cmd.Stdout, cmd.Stderr = log, log
	// A new session: the supervisor outlives this command and the shell.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the supervisor: %w", err)
	}
	fmt.Fprintf(os.Stderr, "starting etcd, kube-apiserver and kube-controller-manager (log: %s)\n", s.logFile())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	for {
		if _, err := os.Stat(s.pidFile()); err == nil {
			fmt.Printf("export KUBECONFIG=%s\n", s.kubeconfig())
			return nil
		}
		select {
		case err := <-exited:
			data, _ := os.ReadFile(s.logFile())
			return fmt.Errorf("the control plane did not start: %w\n%s", err, data)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func (s state) down() error {
	pid, alive := s.pid()
	if !alive {
		fmt.Println("the local control plane is not running")
		if err := recoverNode(); err != nil {
			return err
		}
		return os.RemoveAll(s.dir)
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return fmt.Errorf("stopping pid %d: %w", pid, err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			return fmt.Errorf("pid %d still runs after 60s", pid)
		}
		time.Sleep(200 * time.Millisecond)
	}
	fmt.Println("stopped the local control plane")
	return nil
}

// run starts the control plane in s.dir, publishes kubeconfig and pid, and
// stops everything on SIGINT or SIGTERM.
func (s state) run() error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := recoverNode(); err != nil {
		return err
	}
	if err := os.RemoveAll(s.dir); err != nil {
		return fmt.Errorf("clearing %s: %w", s.dir, err)
	}
	progress := func(msg string) { fmt.Println(time.Now().Format(time.TimeOnly), msg) }
	if s.node {
		return s.runNode(ctx, progress)
	}
	cp, err := controlplane.Start(ctx, controlplane.Options{Dir: s.dir, Progress: progress})
	if err != nil {
		return err
	}
	var hook *devenv.Webhook
	if s.webhook {
		hook, err = startWebhook(ctx, cp)
	}
	if err == nil {
		err = publish(cp, s)
	}
	if err == nil {
		fmt.Println(time.Now().Format(time.TimeOnly), "ready at", cp.Server())
		<-ctx.Done()
		fmt.Println(time.Now().Format(time.TimeOnly), "stopping")
	}
	if hook != nil {
		err = errors.Join(err, hook.Close())
	}
	return errors.Join(err, cp.Stop())
}

// recoverNode cleans up after a node (up --node) whose supervisor was
// killed: its mounts are in the directory that up and down clear.
func recoverNode() error {
	binDir, err := controlplane.FindBinDir()
	if err != nil {
		return err
	}
	return node.Recover(binDir, func(msg string) { fmt.Println(time.Now().Format(time.TimeOnly), msg) })
}

// runNode is run with a node (hack/node) and the images of make image.
func (s state) runNode(ctx context.Context, progress func(string)) error {
	root, err := controlplane.RepoRoot()
	if err != nil {
		return err
	}
	images, err := filepath.Glob(filepath.Join(root, "bin", "images", "*.tar"))
	if err != nil {
		return fmt.Errorf("finding the images of make image: %w", err)
	}
	n, err := node.Start(ctx, node.Options{Dir: s.dir, Images: images, Progress: progress})
	if err != nil {
		return err
	}
	err = publish(n.ControlPlane(), s)
	if err == nil {
		progress("ready at " + n.ControlPlane().Server() + " with node " + node.Name)
		<-ctx.Done()
		progress("stopping")
	}
	return errors.Join(err, n.Stop())
}

// startWebhook installs the chart in url mode and runs the server locally.
func startWebhook(ctx context.Context, cp *controlplane.ControlPlane) (*devenv.Webhook, error) {
	fmt.Println(time.Now().Format(time.TimeOnly), "building and starting apply-hygiene")
	hook, err := devenv.Start(ctx, cp, devenv.Options{})
	if err != nil {
		return nil, err
	}
	fmt.Println(time.Now().Format(time.TimeOnly), "apply-hygiene serves on port", hook.Port, "log:", hook.LogPath)
	return hook, nil
}

func publish(cp *controlplane.ControlPlane, s state) error {
	data, err := os.ReadFile(cp.KubeconfigPath())
	if err != nil {
		return fmt.Errorf("reading admin kubeconfig: %w", err)
	}
	if err := os.WriteFile(s.kubeconfig(), data, 0o600); err != nil {
		return fmt.Errorf("writing kubeconfig: %w", err)
	}
	pid := strconv.Itoa(os.Getpid())
	if err := os.WriteFile(s.pidFile(), []byte(pid), 0o600); err != nil {
		return fmt.Errorf("writing pid file: %w", err)
	}
	return nil
}
