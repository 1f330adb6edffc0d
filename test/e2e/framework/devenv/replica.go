package devenv

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Replica is one server process, as a Pod of the chart's Deployment would
// run it: its own webhook, metrics and probe ports, its own log and (with
// self-managed TLS) its own certificate directory, the chart's service
// account.
type Replica struct {
	// Index is the replica's place in Webhook.Replicas.
	Index int
	// Port serves /mutate and /validate.
	Port int
	// MetricsURL is its /metrics, ReadyURL its /readyz.
	MetricsURL, ReadyURL string
	// LogPath receives its stdout and stderr, appended across restarts.
	LogPath string
	// CertDir is its --cert-dir.
	CertDir string

	args      []string
	mu        sync.Mutex
	cmd       *exec.Cmd
	done      chan struct{}
	lastState *os.ProcessState
}

// Name is the replica's pod name, $POD_NAME: apply-hygiene-<Index>.
func (r *Replica) Name() string { return Release + "-" + strconv.Itoa(r.Index) }

// Running reports whether the process runs.
func (r *Replica) Running() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cmd != nil
}

// Pid is the process's id, or 0 when it does not run.
func (r *Replica) Pid() int {
	cmd, _ := r.running()
	if cmd == nil || cmd.Process == nil {
		return 0
	}
	return cmd.Process.Pid
}

// Start starts the process (again) with the same arguments and waits for
// its /readyz; it does nothing if the process runs.
func (r *Replica) Start(ctx context.Context) error {
	if err := r.start(); err != nil {
		return err
	}
	return r.waitReady(ctx)
}

func (r *Replica) start() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd != nil {
		return nil
	}
	log, err := os.OpenFile(r.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("opening the log of replica %d: %w", r.Index, err)
	}
	cmd := exec.Command(r.args[0], r.args[1:]...)
	cmd.Stdout, cmd.Stderr = log, log
	// The chart sets POD_NAME from the downward API.
	cmd.Env = append(os.Environ(), "POD_NAME="+r.Name())
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		return fmt.Errorf("starting replica %d: %w", r.Index, err)
	}
	done := make(chan struct{})
	r.cmd, r.done = cmd, done
	go func() {
		_ = cmd.Wait()
		_ = log.Close()
		close(done)
	}()
	return nil
}

// Kill ends the process with SIGKILL, as a crash or an OOM kill would: no
// graceful shutdown, in-flight reviews are cut off.
func (r *Replica) Kill() error {
	cmd, done := r.running()
	if cmd == nil {
		return nil
	}
	if err := cmd.Process.Kill(); err != nil {
		return fmt.Errorf("killing replica %d: %w", r.Index, err)
	}
	<-done
	r.exited(cmd)
	return nil
}

// Terminate sends SIGTERM, as the kubelet does when a Pod is deleted, and
// waits for the process to exit; after timeout it kills it and reports
// that.
func (r *Replica) Terminate(timeout time.Duration) error {
	cmd, done := r.running()
	if cmd == nil {
		return nil
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	defer r.exited(cmd)
	select {
	case <-done:
		return nil
	case <-time.After(timeout):
		_ = cmd.Process.Kill()
		<-done
		return fmt.Errorf("replica %d did not exit within %s of SIGTERM; killed", r.Index, timeout)
	}
}

// ExitCode is the exit code of the last process, -1 while it runs or when
// a signal ended it.
func (r *Replica) ExitCode() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd != nil || r.lastState == nil {
		return -1
	}
	return r.lastState.ExitCode()
}

func (r *Replica) running() (*exec.Cmd, chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cmd, r.done
}

func (r *Replica) exited(cmd *exec.Cmd) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd == cmd {
		r.cmd, r.lastState = nil, cmd.ProcessState
	}
}

// Signal sends sig to the running process.
func (r *Replica) Signal(sig os.Signal) error {
	cmd, _ := r.running()
	if cmd == nil {
		return fmt.Errorf("replica %d is not running", r.Index)
	}
	if err := cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("signalling replica %d: %w", r.Index, err)
	}
	return nil
}

// Exited is closed when the current process exits (nil if none runs).
func (r *Replica) Exited() <-chan struct{} {
	_, done := r.running()
	return done
}

// waitReady waits up to 60s for /readyz to answer 200.
func (r *Replica) waitReady(ctx context.Context) error {
	_, done := r.running()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			data, _ := os.ReadFile(r.LogPath)
			return fmt.Errorf("replica %d exited during start-up:\n%s", r.Index, data)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if resp, err := http.Get(r.ReadyURL); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
	}
	data, _ := os.ReadFile(r.LogPath)
	return fmt.Errorf("replica %d not ready after 60s:\n%s", r.Index, data)
}

// replicaPorts are the ports of replica i among ports allocated three per
// replica.
func replicaPorts(ports []int, i int) (webhook, metrics, probe int) {
	return ports[3*i], ports[3*i+1], ports[3*i+2]
}

func localURL(port int, path string) string {
	return "http://127.0.0.1:" + strconv.Itoa(port) + path
}
